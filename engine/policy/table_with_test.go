package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestTableWithSameAsNew changes random capabilities of a generated catalogue step after
// step, each by a random field (testcat.Mutations: status, health, enabled, tenants, ACL,
// requirements, type, … ) or a status, derives each step's table from the previous one
// with With, and compares its answers, for every capability and context, with a table
// made by NewTable.
func TestTableWithSameAsNew(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 20))
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(600, 3))
	if err != nil {
		t.Fatal(err)
	}
	tab := NewTable(snap.Caps)
	var got, want Caller
	compared, changed := 0, 0
	for step := range 30 {
		var put []*registry.Capability
		for range 1 + r.IntN(4) {
			c := snap.Caps[r.IntN(len(snap.Caps))]
			if r.IntN(3) == 0 {
				x := c.Clone()
				x.Status = []registry.Status{registry.StatusActive, registry.StatusDeprecated, registry.StatusOffline}[r.IntN(3)]
				put = append(put, x)
				continue
			}
			ms := testcat.Mutations(c)
			put = append(put, ms[r.IntN(len(ms))].Cap)
		}
		next, err := snap.Apply(snap.Generation+1, put, nil)
		if err != nil {
			continue // a mutation Apply refuses
		}
		n := tab.With(next.Caps)
		ref := NewTable(next.Caps)
		for _, rc := range tableContexts() {
			got.Reset(n, rc)
			want.Reset(ref, rc)
			for d := range next.Caps {
				if a, b := got.Availability(uint32(d)), want.Availability(uint32(d)); a != b {
					t.Fatalf("step %d, %s: %s, from a new table %s", step, next.Caps[d].ID, a, b)
				}
				compared++
			}
		}
		for d, c := range next.Caps {
			if c != snap.Caps[d] {
				changed++
			}
		}
		tab, snap = n, next
	}
	if changed == 0 {
		t.Fatal("no step changed a capability")
	}
	t.Logf("%d records recomputed, %d answers compared", changed, compared)
}
