package index

import (
	"runtime"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// BenchmarkExactEvalSets times the exact retriever on each evaluation set's queries, the
// current implementation beside the frozen reference of exact_equiv_test.go, so one run
// compares both on the same machine load.
func BenchmarkExactEvalSets(b *testing.B) {
	impls := []struct {
		name string
		fn   func(g *Generation, q *Query, allow *roaring.Bitmap, limit int) []Hit
	}{
		{"reference", refRetrieveExact},
		{"current", (*Generation).retrieveExact},
	}
	for _, set := range []string{"seal_tools", "hammerbench_zh", "metatool"} {
		s := loadEvalSet(b, evalDir(), set)
		if s == nil {
			continue
		}
		qs := make([]Query, len(s.queries))
		for i, q := range s.queries {
			qs[i] = Query{Text: q.Query}
		}
		for _, impl := range impls {
			b.Run("set="+set+"/impl="+impl.name, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				hits, i := 0, 0
				cpu := threadCPU()
				for b.Loop() {
					hits += len(impl.fn(s.g, &qs[i%len(qs)], nil, 20))
					i++
				}
				b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
			})
		}
	}
}
