package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"
)

// FuzzCheckRecord feeds checkRecord arbitrary stored bytes. It must never panic, and a
// record it accepts must be exactly what seal writes: it decodes as an AuditRecord with
// the expected seq and prev whose sealing (with the same key) gives the same bytes and
// hash. The seeds are sealed records, keyed and not, and damaged ones.
func FuzzCheckRecord(f *testing.F) {
	prev := auditHead{Seq: 6, Hash: "00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00c0ffee"}
	at := time.Date(2026, 12, 1, 22, 0, 0, 123456789, time.UTC)
	for _, key := range [][]byte{nil, testAuditKey} {
		for _, rec := range []AuditRecord{
			{Kind: KindRun, Actor: "bob", Action: "x.run", Version: 2, Decision: "succeeded", Args: json.RawMessage(`{"a": [1, "\u00e9"]}`), DurationUS: 9},
			{Kind: KindRegistry, Action: "x", Decision: DecisionCreated, Digest: "sha256:ab", Detail: `quote " and \ and }`},
		} {
			_, b, err := seal(rec, prev, at, key)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b, key != nil)
			f.Add(bytes.Replace(b, []byte(`"kind":"`), []byte(`"kind":"x`), 1), key != nil)
			f.Add(b[:len(b)-3], key != nil)
		}
	}
	// Bytes a forger hashed himself that are no record's encoding: they pass the hash and
	// the fixed positions, not the canonical check.
	for _, body := range []string{
		`{"seq":7,"kind":"run",garbage,"prev":"` + prev.Hash + `"`,
		`{"seq":7,"time":"2026-12-01T23:00:00+01:00","kind":"run","prev":"` + prev.Hash + `"`,
		`{"seq":7,"kind":"run","kind":"registry","prev":"` + prev.Hash + `"`,
	} {
		sum := sha256.Sum256([]byte(body + "}"))
		f.Add([]byte(body+`,"hash":"`+hex.EncodeToString(sum[:])+`"}`), false)
	}
	f.Add([]byte(`{"seq":7}`), false)
	f.Add([]byte(`"}`), true)
	f.Fuzz(func(t *testing.T, v []byte, keyed bool) {
		var key []byte
		if keyed {
			key = testAuditKey
		}
		hash, reason := checkRecord(v, prev.Seq+1, prev.Hash, key)
		if reason != "" {
			if hash != "" {
				t.Fatalf("refused (%s) with a hash", reason)
			}
			return
		}
		var rec AuditRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			t.Fatalf("accepted bytes that do not decode: %v\n%q", err, v)
		}
		if rec.Seq != prev.Seq+1 || rec.Prev != prev.Hash || rec.Hash != hash {
			t.Fatalf("accepted record %d prev %s hash %s, want %d %s %s", rec.Seq, rec.Prev, rec.Hash, prev.Seq+1, prev.Hash, hash)
		}
		resealed, b, err := seal(rec, prev, rec.Time, key)
		if err != nil {
			t.Fatalf("an accepted record does not seal: %v", err)
		}
		if key != nil && !bytes.Equal(b, v) || key == nil && !bytes.Equal(withoutMAC(b), withoutMAC(v)) || resealed.Hash != hash {
			t.Fatalf("accepted bytes are not what seal writes:\n%q\n%q", v, b)
		}
	})
}

// withoutMAC returns v without a trailing ,"mac":"…" field.
func withoutMAC(v []byte) []byte {
	if i := bytes.LastIndex(v, []byte(`,"mac":"`)); i >= 0 && len(v)-i == len(`,"mac":""}`)+64 {
		return append(v[:i:i], '}')
	}
	return v
}
