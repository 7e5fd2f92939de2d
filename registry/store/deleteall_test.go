package store

import (
	"context"
	"errors"
	"github.com/capdex/capdex/registry"
	"testing"
)

// TestDeleteAll deletes several ids in one generation, audited one record each, and
// nothing at all when one id is unknown.
func TestDeleteAll(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	if err := s.PutAll(ctx, []*registry.Capability{titled("p.a", 1, "A"), titled("p.b", 1, "B"), titled("p.c", 1, "C")}, "t"); err != nil {
		t.Fatal(err)
	}
	gen := s.Generation()
	if err := s.DeleteAll(ctx, []string{"p.a", "p.nope"}, "t"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := s.DeleteAll(ctx, []string{"p.a", "p.a"}, "t"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("repeated id: %v", err)
	}
	if s.Generation() != gen {
		t.Fatal("a refused DeleteAll changed the generation")
	}
	if _, err := s.Get("p.a", 0); err != nil {
		t.Fatalf("a refused DeleteAll deleted: %v", err)
	}
	if err := s.DeleteAll(ctx, []string{"p.a", "p.b"}, "t"); err != nil {
		t.Fatal(err)
	}
	if s.Generation() != gen+1 {
		t.Fatalf("generation %d, want %d", s.Generation(), gen+1)
	}
	for _, id := range []string{"p.a", "p.b"} {
		if _, err := s.Get(id, 0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s still there: %v", id, err)
		}
	}
	if _, err := s.Get("p.c", 0); err != nil {
		t.Fatal(err)
	}
	recs, err := s.AuditTail(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Decision != DecisionDeleted || recs[1].Decision != DecisionDeleted || recs[0].Action != "p.a" || recs[1].Action != "p.b" {
		t.Fatalf("audit: %+v", recs)
	}
	if _, err := s.VerifyAudit(); err != nil {
		t.Fatal(err)
	}
}
