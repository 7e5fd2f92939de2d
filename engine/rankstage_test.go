package engine

import (
	"testing"

	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestRankFacts checks that the facts the ranking reads of every document equal what its
// capability says, for the built-in registry and a generated catalogue of 10k: the pack bit,
// and the availability for the runtime contexts of the benchmarks and the evaluation.
func TestRankFacts(t *testing.T) {
	builtin, err := registry.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	n := 10_000
	if testing.Short() {
		n = 1000
	}
	rcs := []*registry.RuntimeContext{
		{Tenant: "default", User: "bench", Scopes: []string{"*", "admin"}},
		{Tenant: "default", User: "alice", Scopes: []string{"dev"}, OS: "linux"},
		{},
	}
	for name, caps := range map[string][]*registry.Capability{"builtin": builtin, "generated": testcat.GenerateCatalog(n, 42)} {
		t.Run(name, func(t *testing.T) {
			snap, err := registry.NewSnapshot(1, caps)
			if err != nil {
				t.Fatal(err)
			}
			f := newRankFacts(snap.Caps)
			packs := 0
			for d, c := range snap.Caps {
				if f.pack(uint32(d)) != (c.ResourceType == registry.TypePack) {
					t.Fatalf("%s: pack bit %v for a %s", c.ID, f.pack(uint32(d)), c.ResourceType)
				}
				if f.pack(uint32(d)) {
					packs++
				}
			}
			if packs == 0 {
				t.Fatal("no pack: the comparison proves little")
			}
			var caller policy.Caller
			for _, rc := range rcs {
				caller.Reset(f.avail, rc)
				for d, c := range snap.Caps {
					if want, _ := policy.Availability(c, rc); caller.Availability(uint32(d)) != want {
						t.Fatalf("%s for %+v: %s, want %s", c.ID, rc, caller.Availability(uint32(d)), want)
					}
				}
			}
		})
	}
}
