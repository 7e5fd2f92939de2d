package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestFeedbackRecords(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openT(t, dir)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := []FeedbackRecord{
		{Tenant: "acme", Session: "s1", At: at, User: "alice", Query: "roll back", Shown: []string{"a.b"}, Described: []string{"a.b"}},
		{Tenant: "globex", Session: "s1", At: at, User: "bob", Query: "deploy", Clarify: true},
	}
	if err := s.PutFeedback(ctx, recs); err != nil {
		t.Fatal(err)
	}
	// a new state of a record replaces it
	recs[0].Succeeded = []string{"a.b"}
	if err := s.PutFeedback(ctx, recs[:1]); err != nil {
		t.Fatal(err)
	}
	// a batch with one bad record writes nothing
	bad := []FeedbackRecord{{Tenant: "acme", Session: "s2", At: at, Query: "x"}, {Tenant: "acme", Session: "", At: at}}
	if err := s.PutFeedback(ctx, bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a record without a session: %v, want ErrInvalid", err)
	}
	for _, r := range []FeedbackRecord{{Session: "s", At: at}, {Tenant: "a\x00b", Session: "s", At: at}, {Tenant: "a", Session: "s"}} {
		if err := s.PutFeedback(ctx, []FeedbackRecord{r}); !errors.Is(err, ErrInvalid) {
			t.Errorf("record %+v: %v, want ErrInvalid", r, err)
		}
	}
	if err := s.PutFeedback(ctx, make([]FeedbackRecord, maxFeedbackBatch+1)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("an oversize batch: %v, want ErrInvalid", err)
	}
	s.Close()
	s = openT(t, dir)
	defer s.Close()
	var got []FeedbackRecord
	if err := s.EachFeedback(func(r FeedbackRecord) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Tenant != "acme" || !slices.Equal(got[0].Succeeded, []string{"a.b"}) || !got[0].At.Equal(at) || !got[1].Clarify {
		t.Fatalf("records after reopen: %+v", got)
	}
	stop := errors.New("stop")
	if err := s.EachFeedback(func(FeedbackRecord) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("the walk's error: %v", err)
	}
	// a damaged record is skipped
	if err := s.RawSet(feedbackKey(&recs[1]), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.EachFeedback(func(FeedbackRecord) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("with a damaged record: %d records, %v", n, err)
	}
}
