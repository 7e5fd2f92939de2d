package engine

import (
	"context"
	"reflect"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestImportDigestComputedNotTyped: Import stores and searches every definition with its
// computed schema digest whatever digest the caller typed, and leaves the caller's
// definitions unmodified.
func TestImportDigestComputedNotTyped(t *testing.T) {
	ctx := context.Background()
	e, act := openWithAction(t)
	stale := act.Clone()
	stale.Version++
	stale.Summary += " changed"
	stale.Provenance.SchemaDigest = "sha256:0000"
	fresh := act.Clone()
	fresh.ID = registry.Parent(act.ID) + ".fresh_one"
	fresh.Version = 1
	fresh.Provenance.SchemaDigest = ""
	in := []*registry.Capability{stale, fresh}
	kept := []*registry.Capability{stale.Clone(), fresh.Clone()}
	if err := e.Import(ctx, in, "test"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, kept) {
		t.Fatal("Import modified the caller's definitions")
	}
	for _, c := range in {
		want := registry.Digest(c)
		got, err := e.Definition(c.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Provenance.SchemaDigest != want {
			t.Errorf("%s stored with digest %q, want %q", c.ID, got.Provenance.SchemaDigest, want)
		}
		if s, ok := e.Snapshot().Get(c.ID); !ok {
			t.Errorf("%s not in the generation", c.ID)
		} else if s.Provenance.SchemaDigest != want {
			t.Errorf("%s in the generation with digest %q, want %q", c.ID, s.Provenance.SchemaDigest, want)
		}
	}
}

// openWithAction opens an engine over a small generated catalogue (closed when the test
// ends) and returns it with its first action.
func openWithAction(t *testing.T) (*Engine, *registry.Capability) {
	t.Helper()
	e, err := Open(context.Background(), Options{Seed: testcat.GenerateCatalog(50, 1), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for _, c := range e.Snapshot().Caps {
		if c.ResourceType == registry.TypeAction {
			return e, c
		}
	}
	t.Fatal("the generated catalogue has no action")
	return nil, nil
}
