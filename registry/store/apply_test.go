package store

import (
	"context"
	"errors"
	"testing"

	"github.com/capdex/capdex/registry"
)

// TestApplyPutsAndDeletesAtOnce stores new versions and deletes other ids in one generation
// (one audit record each), and nothing at all when a delete of the same change is refused.
func TestApplyPutsAndDeletesAtOnce(t *testing.T) {
	ctx := context.Background()
	s := openT(t, t.TempDir())
	if err := s.PutAll(ctx, []*registry.Capability{titled("p.a", 1, "A"), titled("p.b", 1, "B"), titled("p.c", 1, "C")}, "t"); err != nil {
		t.Fatal(err)
	}
	gen := s.Generation()
	head, err := s.AuditTail(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		deleted []string
		want    error
	}{
		{"unknown id", []string{"p.b", "p.nope"}, ErrNotFound},
		{"repeated id", []string{"p.b", "p.b"}, ErrInvalid},
		{"stored and deleted", []string{"p.a"}, ErrInvalid},
	} {
		err := s.Apply(ctx, []*registry.Capability{titled("p.a", 2, "A2"), titled("p.d", 1, "D")}, tc.deleted, "t")
		if !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if s.Generation() != gen {
			t.Fatalf("%s: a refused Apply changed the generation", tc.name)
		}
		if c, err := s.Get("p.a", 0); err != nil || c.Version != 1 {
			t.Fatalf("%s: a refused Apply stored: %+v %v", tc.name, c, err)
		}
		if _, err := s.Get("p.d", 0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s: a refused Apply created p.d: %v", tc.name, err)
		}
		if _, err := s.Get("p.b", 0); err != nil {
			t.Fatalf("%s: a refused Apply deleted: %v", tc.name, err)
		}
		if tail, err := s.AuditTail(1); err != nil || tail[0].Seq != head[0].Seq {
			t.Fatalf("%s: a refused Apply was audited: %+v %v", tc.name, tail, err)
		}
	}
	if err := s.Apply(ctx, []*registry.Capability{titled("p.a", 2, "A2"), titled("p.d", 1, "D")}, []string{"p.b"}, "t"); err != nil {
		t.Fatal(err)
	}
	if s.Generation() != gen+1 {
		t.Fatalf("generation %d, want %d", s.Generation(), gen+1)
	}
	if c, err := s.Get("p.a", 0); err != nil || c.Version != 2 {
		t.Fatalf("p.a: %+v %v", c, err)
	}
	if _, err := s.Get("p.b", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("p.b still there: %v", err)
	}
	recs, err := s.AuditTail(3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p.a " + DecisionUpdated, "p.d " + DecisionCreated, "p.b " + DecisionDeleted}
	for i, r := range recs {
		if got := r.Action + " " + r.Decision; got != want[i] {
			t.Fatalf("audit %d: %q, want %q (%+v)", i, got, want[i], recs)
		}
	}
	if _, err := s.VerifyAudit(); err != nil {
		t.Fatal(err)
	}
	checkNoResidue(t, s)
}
