package registry_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestEffectiveSharedSameAsOwn builds snapshots of generated catalogues, some capabilities
// given their own enabled, tenants or acl at random, with NewSnapshot (siblings share equal
// Effective values) and with every capability computing its own: each capability's
// inheritance is the same, packs never share, and sharing happened.
func TestEffectiveSharedSameAsOwn(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 2))
	for round := range 6 {
		caps := testcat.GenerateCatalog(600, int64(round+1))
		for _, c := range caps {
			switch r.IntN(10) {
			case 0:
				off := r.IntN(2) == 0
				c.Enabled = &off
			case 1:
				c.Tenants = []string{[]string{"a", "b"}[r.IntN(2)]}
			case 2:
				c.ACL.Deny = []string{"intern"}
			case 3:
				c.ACL = registry.ACL{Discover: []string{"*"}, Describe: []string{[]string{"dev", "ops"}[r.IntN(2)]}}
			}
			if r.IntN(20) == 0 {
				c.Status = registry.StatusOffline
			}
		}
		shared, err := registry.NewSnapshot(1, cloneAll(caps))
		if err != nil {
			t.Fatal(err)
		}
		own, err := registry.NewSnapshotUnshared(1, cloneAll(caps))
		if err != nil {
			t.Fatal(err)
		}
		distinct := map[*registry.Effective]bool{}
		for i, c := range shared.Caps {
			o := own.Caps[i]
			if c.ID != o.ID {
				t.Fatalf("round %d: position %d holds %s and %s", round, i, c.ID, o.ID)
			}
			a, b := c.Eff, o.Eff
			if a.Enabled != b.Enabled || !slices.Equal(a.Tenants, b.Tenants) || !slices.Equal(a.Packs, b.Packs) ||
				!slices.Equal(a.ACL.Discover, b.ACL.Discover) || !slices.Equal(a.ACL.Describe, b.ACL.Describe) ||
				!slices.Equal(a.ACL.Execute, b.ACL.Execute) || !slices.Equal(a.ACL.Deny, b.ACL.Deny) {
				t.Fatalf("round %d: %s: shared %+v, own %+v", round, c.ID, *a, *b)
			}
			if c.ResourceType == registry.TypePack && distinct[a] {
				t.Fatalf("round %d: pack %s shares its Effective", round, c.ID)
			}
			distinct[a] = true
		}
		if len(distinct) > len(shared.Caps)/2 {
			t.Errorf("round %d: %d distinct Effective values for %d capabilities: little sharing", round, len(distinct), len(shared.Caps))
		}
		t.Logf("round %d: %d capabilities, %d Effective values", round, len(shared.Caps), len(distinct))
	}
}
