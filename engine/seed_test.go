package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// TestEmptySeedStaysEmpty: a store opened first without the examples (--no-examples) does
// not get them at a later open with the default seed.
func TestEmptySeedStaysEmpty(t *testing.T) {
	dir := t.TempDir()
	e, err := engine.Open(context.Background(), engine.Options{Dir: dir, NoSync: true, Seed: []*registry.Capability{}})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.Snapshot().Len(); n != 0 {
		t.Fatalf("empty seed: %d capabilities", n)
	}
	e.Close()
	e, err = engine.Open(context.Background(), engine.Options{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if n := e.Snapshot().Len(); n != 0 {
		t.Fatalf("reopened with the default seed: %d capabilities", n)
	}
}

// TestDeleteTree deletes a pack with everything under it, all at once, and refuses an id
// that does not exist.
func TestDeleteTree(t *testing.T) {
	ctx := context.Background()
	e := open(t, engine.Options{})
	before := e.Snapshot().Len()
	under, err := e.Definitions("notifications")
	if err != nil {
		t.Fatal(err)
	}
	gen := e.Generation()
	ids, err := e.DeleteTree(ctx, "notifications", "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != len(under) || ids[len(ids)-1] != "notifications" || e.Generation() != gen+1 {
		t.Fatalf("deleted %v (generation %d → %d)", ids, gen, e.Generation())
	}
	if e.Snapshot().Len() != before-len(under) {
		t.Fatalf("%d left, want %d", e.Snapshot().Len(), before-len(under))
	}
	if _, err := e.DeleteTree(ctx, "notifications", "test"); !errors.Is(err, registry.ErrNotFound) {
		t.Fatalf("again: %v", err)
	}
}
