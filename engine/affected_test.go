package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestAffectedSetSameAsByID compares the lint's predicate of a change (affectedSet: by
// pointer, children found in the id order) with its plain definition by id (the
// capability's id or its parent's is one of the change's), for every capability of the
// registry after random changes: existing actions and packs changed, new ids put, under
// existing packs and new ones, and ids that share a prefix with a pack's.
func TestAffectedSetSameAsByID(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 11))
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(800, 2))
	if err != nil {
		t.Fatal(err)
	}
	checked, hit := 0, 0
	for step := range 40 {
		var caps []*registry.Capability
		for k := range 1 + r.IntN(5) {
			c := snap.Caps[r.IntN(len(snap.Caps))]
			switch r.IntN(4) {
			case 0: // a new id beside it, sharing its prefix
				x := c.Clone()
				x.ID = fmt.Sprintf("%s-x%d", c.ID, step)
				caps = append(caps, x)
			case 1: // a new id under it
				x := c.Clone()
				x.ID = fmt.Sprintf("%s.n%d_%d", c.ID, step, k)
				caps = append(caps, x)
			default:
				caps = append(caps, c.Clone())
			}
		}
		all, touched := storedOver(snap, caps) // withChange's registry after the change
		got := affectedSet(snap, caps, touched)
		for _, c := range all {
			want := touched[c.ID] || touched[registry.Parent(c.ID)]
			if got(c) != want {
				t.Fatalf("step %d: %s affected %v, by id %v", step, c.ID, got(c), want)
			}
			checked++
			if want {
				hit++
			}
		}
	}
	t.Logf("%d capabilities checked, %d affected", checked, hit)
}
