package index

import (
	"runtime"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// BenchmarkMetadataCatalog times the metadata retriever on the structured queries of the
// generated catalogues that the engine derives from text (metaQueries without a Match),
// under a caller's filter, the current implementation
// beside the frozen reference of metadata_equiv_test.go, so one run compares both on the
// same machine load.
func BenchmarkMetadataCatalog(b *testing.B) {
	impls := []struct {
		name string
		fn   func(g *Generation, q *Query, allow *roaring.Bitmap, limit int) []Hit
	}{
		{"reference", refRetrieveMetadata},
		{"current", (*Generation).retrieveMetadata},
	}
	for _, size := range benchSizes {
		if testing.Short() && size.n > 10000 {
			continue
		}
		g := benchGeneration(b, size.n)
		var qs []*Query
		for _, q := range metaQueries(g.Snapshot().Caps) {
			if q.Match == nil {
				qs = append(qs, q)
			}
		}
		allow := g.Filter(benchRC, FilterSpec{})
		for _, impl := range impls {
			b.Run("catalog="+size.name+"/impl="+impl.name, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				hits, i := 0, 0
				cpu := threadCPU()
				for b.Loop() {
					hits += len(impl.fn(g, qs[i%len(qs)], allow, 50))
					i++
				}
				b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
			})
		}
	}
}
