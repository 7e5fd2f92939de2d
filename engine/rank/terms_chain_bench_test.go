package rank

import (
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// BenchmarkTermCacheOpen compares what an open costs for the term cache of a generated 10k
// catalogue: NewTermCache (no chain), NewTermChain (what Open makes now), writing the
// chain's cache (AppendPersisted) and loading it (LoadTermChain).
//
//	go test -run '^$' -bench TermCacheOpen ./engine/rank/
func BenchmarkTermCacheOpen(b *testing.B) {
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(10_000, 1))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("NewTermCache", func(b *testing.B) {
		for b.Loop() {
			NewTermCache(snap.Caps, persistAnalyze)
		}
	})
	b.Run("NewTermChain", func(b *testing.B) {
		for b.Loop() {
			NewTermChain(snap.Caps, persistAnalyze)
		}
	})
	data, _ := NewTermChain(snap.Caps, persistAnalyze).AppendPersisted(nil)
	b.Run("AppendPersisted", func(b *testing.B) {
		t := NewTermChain(snap.Caps, persistAnalyze)
		for b.Loop() {
			t.AppendPersisted(nil)
		}
		b.ReportMetric(float64(len(data))/float64(len(snap.Caps)), "B/cap")
	})
	b.Run("LoadTermChain", func(b *testing.B) {
		for b.Loop() {
			if _, err := LoadTermChain(data, snap.Caps, persistAnalyze); err != nil {
				b.Fatal(err)
			}
		}
	})
}
