package rank

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestTermCachePatchedSearchedConcurrently patches a chain of term caches, several caches
// from the same one among them (the second and later copy the numbers rather than append
// in place), while four goroutines read every cache made so far: under -race, a patch
// never writes what a cache in use reads, and every cache keeps answering as it did.
func TestTermCachePatchedSearchedConcurrently(t *testing.T) {
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(200, 5))
	if err != nil {
		t.Fatal(err)
	}
	first := NewTermCache(snap.Caps, simpleAnalyze).Next(snap.Caps, simpleAnalyze)
	type gen struct {
		tc   *TermCache
		snap *registry.Snapshot
		want []float64 // the coverage of every capability for the query, when made
	}
	query := simpleAnalyze("restart the stuck deployment wug1 wug2 wug3 invoice")
	slices.Sort(query)
	query = slices.Compact(query)
	coverages := func(tc *TermCache) []float64 {
		q := tc.query(query)
		defer q.release()
		out := make([]float64, len(tc.docs))
		for d := range tc.docs {
			out[d] = tc.textCoverage(&tc.docs[d], q)
		}
		return out
	}
	var mu sync.Mutex
	gens := []gen{{first, snap, coverages(first)}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				g := gens[i%len(gens)]
				mu.Unlock()
				if got := coverages(g.tc); !slices.Equal(got, g.want) {
					t.Errorf("a cache's coverages changed after it was made")
					return
				}
			}
		})
	}
	for step := range 30 {
		mu.Lock()
		from := gens[len(gens)-1]
		if step%4 == 3 { // a stale cache patched again
			from = gens[len(gens)-2]
		}
		mu.Unlock()
		d := (step * 37) % len(from.snap.Caps)
		for from.snap.Caps[d].ResourceType == registry.TypePack { // a pack's subtree changes too
			d = (d + 1) % len(from.snap.Caps)
		}
		c := from.snap.Caps[d].Clone()
		c.Summary += fmt.Sprintf(" wug%d", step%5)
		next, err := from.snap.Apply(from.snap.Generation+1, []*registry.Capability{c}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tc := from.tc.Next(next.Caps, simpleAnalyze)
		if !tc.Patched() {
			t.Fatalf("step %d was not patched", step)
		}
		g := gen{tc, next, coverages(tc)}
		mu.Lock()
		gens = append(gens, g)
		mu.Unlock()
	}
	close(stop)
	wg.Wait()
}
