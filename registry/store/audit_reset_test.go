package store

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

var testAuditKey = bytes.Repeat([]byte("k"), 32)

func openKeyed(tb testing.TB, dir string, key []byte) *Store {
	tb.Helper()
	s, err := Open(Options{Dir: dir, AuditKey: key, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// diskChain makes a store in a new directory with n run records and returns the
// directory, closed.
func diskChain(tb testing.TB, n int, key []byte) string {
	tb.Helper()
	dir := tb.TempDir()
	s := openKeyed(tb, dir, key)
	for i := range n {
		if _, err := s.AppendAudit(context.Background(), AuditRecord{Kind: KindRun, Actor: "bob", Action: "x.run", Decision: "succeeded", Detail: fmt.Sprint(i + 1)}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// wantReason asserts VerifyAudit fails with a ChainError at seq whose reason holds reason.
func wantReason(tb testing.TB, s *Store, seq uint64, reason string) {
	tb.Helper()
	_, err := s.VerifyAudit()
	var ce *ChainError
	if !errors.As(err, &ce) || ce.Seq != seq || !strings.Contains(ce.Reason, reason) {
		tb.Fatalf("VerifyAudit = %v; want a ChainError at %d: %s", err, seq, reason)
	}
}

// wantAppendRefused asserts that an append fails and that record seq keeps its bytes.
func wantAppendRefused(tb testing.TB, s *Store, seq uint64) {
	tb.Helper()
	before, _ := s.RawGet(AuditKey(seq))
	_, err := s.AppendAudit(context.Background(), AuditRecord{Kind: KindRun, Decision: "overwrite?"})
	if !errors.Is(err, ErrCorrupt) {
		tb.Fatalf("append over a damaged chain: %v, want ErrCorrupt", err)
	}
	if after, _ := s.RawGet(AuditKey(seq)); !bytes.Equal(before, after) {
		tb.Fatalf("record %d was overwritten", seq)
	}
}

func TestAuditHeadDeleted(t *testing.T) {
	dir := diskChain(t, 5, nil)
	s := openKeyed(t, dir, nil)
	if err := s.RawDelete(keyHead); err != nil {
		t.Fatal(err)
	}
	wantReason(t, s, 1, "head missing")
	s.Close()
	s = openKeyed(t, dir, nil)
	wantReason(t, s, 1, "head missing")
	wantAppendRefused(t, s, 1)
}

func TestAuditHeadRolledBack(t *testing.T) {
	dir := diskChain(t, 5, nil)
	s := openKeyed(t, dir, nil)
	var rec AuditRecord
	v, _ := s.RawGet(AuditKey(3))
	_ = json.Unmarshal(v, &rec)
	hb, _ := json.Marshal(auditHead{Seq: 3, Hash: rec.Hash})
	if err := s.RawSet(keyHead, hb); err != nil {
		t.Fatal(err)
	}
	wantReason(t, s, 4, "past the head")
	s.Close()
	s = openKeyed(t, dir, nil)
	wantReason(t, s, 4, "past the head")
	wantAppendRefused(t, s, 4)
}

func TestAuditRecordPastHead(t *testing.T) {
	dir := diskChain(t, 3, nil)
	s := openKeyed(t, dir, nil)
	v, _ := s.RawGet(AuditKey(2))
	if err := s.RawSet(AuditKey(9), v); err != nil {
		t.Fatal(err)
	}
	wantReason(t, s, 9, "past the head")
	// A key under audit/ that is no record key is an error too.
	if err := s.RawDelete(AuditKey(9)); err != nil {
		t.Fatal(err)
	}
	if err := s.RawSet([]byte("audit/x"), v); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyAudit(); !errors.Is(err, ErrChainBroken) || !strings.Contains(err.Error(), "audit/x") {
		t.Fatalf("stray key: %v", err)
	}
}

func TestAuditGap(t *testing.T) {
	dir := diskChain(t, 5, nil)
	s := openKeyed(t, dir, nil)
	if err := s.RawDelete(AuditKey(3)); err != nil {
		t.Fatal(err)
	}
	wantReason(t, s, 3, "missing")
}

// TestAuditGenerationDeleted: deleting meta/gen must neither let the store be re-seeded
// over the stored definitions nor pass verification.
func TestAuditGenerationDeleted(t *testing.T) {
	dir := t.TempDir()
	s := openKeyed(t, dir, nil)
	ctx := context.Background()
	for i := range 3 {
		if err := s.Put(ctx, titled(fmt.Sprintf("g.c%d", i), 1, "t"), "alice"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RawDelete(keyGen); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyAudit(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "meta/gen") {
		t.Fatalf("VerifyAudit after deleting meta/gen: %v", err)
	}
	s.Close()
	s = openKeyed(t, dir, nil)
	if _, err := s.VerifyAudit(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "meta/gen") {
		t.Fatalf("VerifyAudit after reopening: %v", err)
	}
	// What a seed would do on an empty-looking store is refused.
	err := s.PutAll(ctx, []*registry.Capability{titled("seed.a", 1, "t")}, "seed")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "meta/gen") {
		t.Fatalf("PutAll over a deleted generation: %v", err)
	}
	// A rolled-back generation is the same damage.
	s.Close()
	s = openKeyed(t, dir, nil)
	if err := s.RawSet(keyGen, be64(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyAudit(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("VerifyAudit after rolling meta/gen back: %v", err)
	}
}

// forge rewrites record seq with detail changed and re-chains every later record and the
// head, as an attacker with the data directory but not the key can.
func forge(tb testing.TB, s *Store, seq, last uint64) {
	tb.Helper()
	prev := ""
	if seq > 1 {
		var p AuditRecord
		v, _ := s.RawGet(AuditKey(seq - 1))
		_ = json.Unmarshal(v, &p)
		prev = p.Hash
	}
	for q := seq; q <= last; q++ {
		var rec AuditRecord
		v, _ := s.RawGet(AuditKey(q))
		if err := json.Unmarshal(v, &rec); err != nil {
			tb.Fatal(err)
		}
		if q == seq {
			rec.Detail = "forged"
		}
		rec.Prev = prev
		rec.MAC = ""
		h := auditHead{Seq: rec.Seq}
		rec2, b, err := seal(rec, auditHead{Seq: q - 1, Hash: prev}, rec.Time, nil)
		if err != nil {
			tb.Fatal(err)
		}
		if err := s.RawSet(AuditKey(q), b); err != nil {
			tb.Fatal(err)
		}
		prev = rec2.Hash
		h.Hash = prev
		hb, _ := json.Marshal(h)
		if err := s.RawSet(keyHead, hb); err != nil {
			tb.Fatal(err)
		}
	}
}

func TestAuditKeyedChain(t *testing.T) {
	dir := diskChain(t, 4, testAuditKey)
	s := openKeyed(t, dir, testAuditKey)
	if n, err := s.VerifyAudit(); err != nil || n != 4 {
		t.Fatalf("honest keyed chain: %d, %v", n, err)
	}
	var rec AuditRecord
	v, _ := s.RawGet(AuditKey(2))
	_ = json.Unmarshal(v, &rec)
	m := hmac.New(sha256.New, testAuditKey)
	m.Write([]byte("capdex audit v1\n" + rec.Hash))
	if rec.MAC != hex.EncodeToString(m.Sum(nil)) {
		t.Fatalf("record 2 MAC %q is not the HMAC of its hash", rec.MAC)
	}
	// A rebuilt chain passes the hash check alone but not the keyed one.
	forge(t, s, 2, 4)
	wantReason(t, s, 2, "unsigned")
	s.Close()
	unkeyed := openKeyed(t, dir, nil)
	if n, err := unkeyed.VerifyAudit(); err != nil || n != 4 {
		t.Fatalf("the forged chain should pass the unkeyed check (that is what the key is for): %d, %v", n, err)
	}
	unkeyed.Close()
	// With MACs copied over from elsewhere (a forger has the old ones), the mismatch shows.
	s = openKeyed(t, dir, testAuditKey)
	v, _ = s.RawGet(AuditKey(2))
	v = append(bytes.TrimSuffix(v, []byte("}")), []byte(`,"mac":"`+rec.MAC+`"}`)...)
	if err := s.RawSet(AuditKey(2), v); err != nil {
		t.Fatal(err)
	}
	wantReason(t, s, 2, "mac mismatch")
}

// TestAuditKeyAdopted: a chain begun without a key is keyed from the first record appended
// with one; the mark saying so is itself keyed, and a wrong key refuses appends.
func TestAuditKeyAdopted(t *testing.T) {
	dir := diskChain(t, 2, nil)
	s := openKeyed(t, dir, testAuditKey)
	for range 2 {
		if _, err := s.AppendAudit(context.Background(), AuditRecord{Kind: KindRun}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.VerifyAudit(); err != nil || n != 4 {
		t.Fatalf("keyed from 3: %d, %v", n, err)
	}
	mark, err := s.RawGet(keyAuditKey)
	if err != nil {
		t.Fatal(err)
	}
	// Moving the mark (or deleting it) makes the records before it count as unsigned.
	if err := s.RawDelete(keyAuditKey); err != nil {
		t.Fatal(err)
	}
	wantReason(t, s, 1, "unsigned")
	forged := bytes.Replace(mark, []byte(`"from":3`), []byte(`"from":5`), 1)
	if err := s.RawSet(keyAuditKey, forged); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyAudit(); !errors.Is(err, ErrChainBroken) || !strings.Contains(err.Error(), "key mark") {
		t.Fatalf("forged key mark: %v", err)
	}
	if err := s.RawSet(keyAuditKey, mark); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Another key: verification fails and appends are refused.
	other := openKeyed(t, dir, bytes.Repeat([]byte("o"), 32))
	if _, err := other.VerifyAudit(); !errors.Is(err, ErrChainBroken) {
		t.Fatalf("verify with another key: %v", err)
	}
	if _, err := other.AppendAudit(context.Background(), AuditRecord{Kind: KindRun}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("append with another key: %v", err)
	}
	other.Close()
	// No key on a keyed chain: appends are refused (they would be unsigned).
	none := openKeyed(t, dir, nil)
	if _, err := none.AppendAudit(context.Background(), AuditRecord{Kind: KindRun}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("append without the key: %v", err)
	}
}

func TestReadAuditKey(t *testing.T) {
	data := t.TempDir()
	keys := t.TempDir()
	write := func(dir, name string, b []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write(keys, "good", append(bytes.Repeat([]byte("a"), 40), '\n'), 0o600)
	if k, err := ReadAuditKey(good, data); err != nil || len(k) != 40 {
		t.Fatalf("good key: %d bytes, %v", len(k), err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"short", write(keys, "short", []byte("abc"), 0o600), "at least 32"},
		{"readable by others", write(keys, "open", bytes.Repeat([]byte("a"), 40), 0o644), "readable"},
		{"inside the data directory", write(data, "inside", bytes.Repeat([]byte("a"), 40), 0o600), "data directory"},
		{"missing", filepath.Join(keys, "nope"), "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadAuditKey(tc.path, data); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadAuditKey: %v, want %q", err, tc.want)
			}
		})
	}
}
