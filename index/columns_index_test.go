package index

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestColumnFilterFromRows checks that every bitmap index of the column view read from the
// prepared rows (forEach, what the pre-filter reads) holds the documents the collection's
// index holds (forEachColumn), on a generated catalogue and on snapshots of random
// mutations of its capabilities (status, health, OS, tenants, ACLs, side effects, types).
func TestColumnFilterFromRows(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(11, 4))
	caps := testcat.GenerateCatalog(600, 3)
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	indexes := 0
	for step := range 8 {
		g, err := Build(ctx, snap, Options{})
		if err != nil {
			t.Fatal(err)
		}
		v := g.cols
		names := v.indexNames()
		if got := len(v.indexes()); got != len(names) {
			t.Fatalf("step %d: %d indexes, %d names", step, got, len(names))
		}
		for i, ix := range v.indexes() {
			if ix.name != names[i] {
				t.Fatalf("step %d: index %d is %s, named %s", step, i, ix.name, names[i])
			}
			var rows, col []uint32
			v.forEach(ix.name, func(d uint32) { rows = append(rows, d) })
			if err := v.forEachColumn(ix.name, func(d uint32) { col = append(col, d) }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(rows, col) {
				t.Fatalf("step %d: index %s: rows give %v, the collection %v", step, ix.name, rows, col)
			}
			indexes++
		}
		var put []*registry.Capability
		for range 20 {
			c := snap.Caps[r.IntN(len(snap.Caps))]
			ms := testcat.Mutations(c)
			put = append(put, ms[r.IntN(len(ms))].Cap)
		}
		put, _ = dedupeChange(put, nil)
		if snap, err = snap.Apply(snap.Generation+1, put, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d indexes compared", indexes)
}
