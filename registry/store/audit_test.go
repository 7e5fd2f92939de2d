package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/capdex/capdex/registry"
)

// buildChain makes a store with n audit records of mixed kinds.
func buildChain(tb testing.TB, n int) *Store {
	tb.Helper()
	ctx := context.Background()
	s := openT(tb, "")
	for i := 1; len(mustTail(tb, s, n)) < n; i++ {
		var err error
		switch i % 3 {
		case 0:
			err = s.Put(ctx, titled(fmt.Sprintf("chain.c%d", i), 1, "t"), "alice")
		case 1:
			_, err = s.AppendAudit(ctx, AuditRecord{Kind: KindRun, Actor: "bob", Action: "chain.run",
				Version: 1, Decision: "succeeded", ArgsDigest: "sha256:ab", DurationUS: 1234,
				Args: json.RawMessage(`{"x": [1, 2], "y": "<b>"}`), ExitStatus: 1, Detail: "ok"})
		case 2:
			_, err = s.SpendToken(ctx, fmt.Sprint("tok", i), time.Now().Add(time.Minute),
				AuditRecord{Kind: KindRun, Actor: "carol", Action: "chain.run", Decision: "allowed"})
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

func mustTail(tb testing.TB, s *Store, n int) []AuditRecord {
	tb.Helper()
	recs, err := s.AuditTail(n)
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

// wantBreak asserts VerifyAudit names record seq.
func wantBreak(tb testing.TB, s *Store, seq uint64, what string) {
	tb.Helper()
	n, err := s.VerifyAudit()
	var ce *ChainError
	if !errors.As(err, &ce) || !errors.Is(err, ErrChainBroken) {
		tb.Fatalf("%s: VerifyAudit = %d, %v; want a ChainError", what, n, err)
	}
	if ce.Seq != seq {
		tb.Fatalf("%s: first bad record %d (%s), want %d", what, ce.Seq, ce.Reason, seq)
	}
	if n != int(seq)-1 {
		tb.Fatalf("%s: %d records passed, want %d", what, n, seq-1)
	}
}

func TestAuditHonestChain(t *testing.T) {
	s := buildChain(t, 12)
	n, err := s.VerifyAudit()
	if err != nil || n != 12 {
		t.Fatalf("VerifyAudit = %d, %v", n, err)
	}
	recs := mustTail(t, s, 100)
	if len(recs) != 12 {
		t.Fatalf("%d records", len(recs))
	}
	prev := ""
	for i, r := range recs {
		if r.Seq != uint64(i+1) || r.Prev != prev || r.Hash == "" || r.Time.IsZero() {
			t.Fatalf("record %d: %+v", i, r)
		}
		prev = r.Hash
		// The stored value is the record's JSON encoding, and its hash is that of the
		// encoding with Hash empty.
		raw, err := s.RawGet(AuditKey(r.Seq))
		enc, _ := json.Marshal(r)
		if err != nil || !bytes.Equal(raw, enc) {
			t.Fatalf("record %d stored as %s, encodes as %s", r.Seq, raw, enc)
		}
		if h, _ := hashRecord(r); h != r.Hash {
			t.Fatalf("record %d: hash %s, recomputed %s", r.Seq, r.Hash, h)
		}
	}
	seq, hash, err := s.AuditHead()
	if err != nil || seq != 12 || hash != prev {
		t.Fatalf("head %d %s %v", seq, hash, err)
	}
	last2 := mustTail(t, s, 2)
	if len(last2) != 2 || last2[0].Seq != 11 || last2[1].Seq != 12 {
		t.Fatalf("tail(2) = %+v", last2)
	}
	// AppendAudit returns the record as stored.
	rec, err := s.AppendAudit(context.Background(), AuditRecord{Kind: KindRun, Args: json.RawMessage(`{ "a" : 1 }`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustTail(t, s, 1)[0]; !equalRecords(got, rec) || string(got.Args) != `{"a":1}` {
		t.Fatalf("appended %+v, stored %+v", rec, got)
	}
}

func equalRecords(a, b AuditRecord) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestAuditTamper(t *testing.T) {
	const total = 12
	s := buildChain(t, total)
	raw := func(seq uint64) []byte {
		v, err := s.RawGet(AuditKey(seq))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	set := func(seq uint64, v []byte) {
		if err := s.RawSet(AuditKey(seq), v); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("every byte of one record, two flip masks", func(t *testing.T) {
		const seq = 6
		orig := raw(seq)
		for _, mask := range []byte{0x01, 0x20, 0x80} {
			for pos := range orig {
				v := bytes.Clone(orig)
				v[pos] ^= mask
				set(seq, v)
				wantBreak(t, s, seq, fmt.Sprintf("flip %#x at %d (%q)", mask, pos, orig[pos]))
			}
		}
		set(seq, orig)
	})
	t.Run("named positions", func(t *testing.T) {
		for _, seq := range []uint64{1, 2, 7, total} {
			orig := raw(seq)
			var rec AuditRecord
			if err := json.Unmarshal(orig, &rec); err != nil {
				t.Fatal(err)
			}
			cases := []struct{ name, needle string }{
				{"hash", `"hash":"` + rec.Hash[:10]},
				{"kind", `"kind":"` + rec.Kind},
				{"time", `"time":"`},
				{"seq", `"seq":`},
			}
			if rec.Prev != "" {
				cases = append(cases, struct{ name, needle string }{"prev", `"prev":"` + rec.Prev[:10]})
			}
			if rec.Actor != "" {
				cases = append(cases, struct{ name, needle string }{"actor", `"actor":"` + rec.Actor})
			}
			for _, tc := range cases {
				t.Run(fmt.Sprintf("%d/%s", seq, tc.name), func(t *testing.T) {
					i := bytes.Index(orig, []byte(tc.needle))
					if i < 0 {
						t.Fatalf("%s not in %s", tc.needle, orig)
					}
					v := bytes.Clone(orig)
					v[i+len(tc.needle)-1] ^= 0x01
					set(seq, v)
					defer set(seq, orig)
					wantBreak(t, s, seq, tc.name)
				})
			}
		}
	})
	if n, err := s.VerifyAudit(); err != nil || n != total {
		t.Fatalf("restored chain: %d, %v", n, err)
	}
	t.Run("delete", func(t *testing.T) {
		for _, seq := range []uint64{1, 5, total} {
			orig := raw(seq)
			if err := s.RawDelete(AuditKey(seq)); err != nil {
				t.Fatal(err)
			}
			wantBreak(t, s, seq, fmt.Sprint("delete ", seq))
			set(seq, orig)
		}
	})
	t.Run("swap", func(t *testing.T) {
		for _, seq := range []uint64{1, 5, total - 1} {
			a, b := raw(seq), raw(seq+1)
			set(seq, b)
			set(seq+1, a)
			wantBreak(t, s, seq, fmt.Sprint("swap ", seq))
			set(seq, a)
			set(seq+1, b)
		}
	})
	t.Run("rewrite a record with a recomputed hash", func(t *testing.T) {
		// A forger who recomputes one record's hash still breaks the next record's prev.
		orig := raw(4)
		var rec AuditRecord
		_ = json.Unmarshal(orig, &rec)
		rec.Actor = "mallory"
		rec.Hash, _ = hashRecord(rec)
		v, _ := json.Marshal(rec)
		set(4, v)
		wantBreak(t, s, 5, "forged 4")
		set(4, orig)
	})
	t.Run("head", func(t *testing.T) {
		orig, _ := s.RawGet(keyHead)
		h := auditHead{Seq: total, Hash: "deadbeef"}
		hb, _ := json.Marshal(h)
		if err := s.RawSet(keyHead, hb); err != nil {
			t.Fatal(err)
		}
		_, err := s.VerifyAudit()
		_ = s.RawSet(keyHead, orig)
		var ce *ChainError
		if !errors.As(err, &ce) || ce.Seq != total || ce.Reason != "head mismatch" {
			t.Fatalf("damaged head: %v", err)
		}
	})
	if n, err := s.VerifyAudit(); err != nil || n != total {
		t.Fatalf("restored chain: %d, %v", n, err)
	}
}

func TestSpendToken(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openT(t, dir)
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	recs := make([]AuditRecord, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			recs[i], errs[i] = s.SpendToken(ctx, "tok-1", time.Now().Add(time.Minute),
				AuditRecord{Kind: KindRun, Actor: fmt.Sprint("u", i), Action: "payments.create_refund", Decision: "allowed"})
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("two spends succeeded: %d and %d", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, ErrTokenSpent):
			t.Errorf("spend %d: %v, want ErrTokenSpent", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no spend succeeded")
	}
	tail := mustTail(t, s, n)
	if len(tail) != 1 || !equalRecords(tail[0], recs[winner]) || tail[0].Actor != fmt.Sprint("u", winner) {
		t.Fatalf("audit after spends: %+v", tail)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir)
	if _, err := s.SpendToken(ctx, "tok-1", time.Now().Add(time.Minute), AuditRecord{Kind: KindRun}); !errors.Is(err, ErrTokenSpent) {
		t.Fatalf("replay after reopen: %v", err)
	}
	if spent, err := s.TokenSpent("tok-1"); !spent || err != nil {
		t.Fatalf("TokenSpent = %v, %v", spent, err)
	}
	if spent, err := s.TokenSpent("tok-2"); spent || err != nil {
		t.Fatalf("TokenSpent(unspent) = %v, %v", spent, err)
	}
	// A refused spend writes no record.
	if n, err := s.VerifyAudit(); err != nil || n != 1 {
		t.Fatalf("VerifyAudit = %d, %v", n, err)
	}
	// An audit record that cannot be written leaves the token unspent.
	if _, err := s.SpendToken(ctx, "tok-3", time.Now(), AuditRecord{}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("spend with a bad record: %v", err)
	}
	if spent, _ := s.TokenSpent("tok-3"); spent {
		t.Fatal("token spent although its record was refused")
	}
}

func TestAuditRegistryRecords(t *testing.T) {
	ctx := context.Background()
	s := openT(t, "")
	c := titled("x.y", 1, "t")
	if err := s.Put(ctx, c, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStatus(ctx, "x.y", registry.StatusDeprecated, "bob"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "x.y", "carol"); err != nil {
		t.Fatal(err)
	}
	recs := mustTail(t, s, 10)
	want := []struct{ actor, decision, detail string }{
		{"alice", DecisionCreated, ""},
		{"bob", DecisionStatusChanged, "active → deprecated"},
		{"carol", DecisionDeleted, ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records", len(recs))
	}
	for i, w := range want {
		r := recs[i]
		if r.Kind != KindRegistry || r.Action != "x.y" || r.Version != 1 || r.Actor != w.actor || r.Decision != w.decision || r.Detail != w.detail {
			t.Errorf("record %d = %+v, want %+v", i, r, w)
		}
	}
	// the digest of the definition's JSON, whatever encoding stores it
	sealed := *c
	sealed.Provenance.SchemaDigest = registry.Digest(c)
	j, err := json.Marshal(&sealed)
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Digest != digestOf(j) {
		t.Errorf("digest %s", recs[0].Digest)
	}
}
