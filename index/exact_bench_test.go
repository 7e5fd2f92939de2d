package index

import (
	"runtime"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// retrieverImpl is one implementation of a retriever, for benchmarks that time the current
// one beside its frozen reference.
type retrieverImpl struct {
	name string
	fn   func(g *Generation, q *Query, allow *roaring.Bitmap, limit int) []Hit
}

// benchImpls runs each implementation on qs in turn as sub-benchmarks named prefix +
// "/impl=" + its name, so one run compares them on the same machine load. It reports CPU
// time besides wall time, and hits per query.
func benchImpls(b *testing.B, prefix string, impls []retrieverImpl, g *Generation, qs []*Query, allow *roaring.Bitmap, limit int) {
	for _, impl := range impls {
		b.Run(prefix+"/impl="+impl.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			hits, i := 0, 0
			cpu := threadCPU()
			for b.Loop() {
				hits += len(impl.fn(g, qs[i%len(qs)], allow, limit))
				i++
			}
			b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
}

// BenchmarkExactEvalSets times the exact retriever on each evaluation set's queries, the
// current implementation beside the frozen reference of exact_equiv_test.go.
func BenchmarkExactEvalSets(b *testing.B) {
	impls := []retrieverImpl{{"reference", refRetrieveExact}, {"current", (*Generation).retrieveExact}}
	for _, set := range []string{"seal_tools", "hammerbench_zh", "metatool"} {
		s := loadEvalSet(b, evalDir(), set)
		if s == nil {
			continue
		}
		qs := make([]*Query, len(s.queries))
		for i, q := range s.queries {
			qs[i] = &Query{Text: q.Query}
		}
		benchImpls(b, "set="+set, impls, s.g, qs, nil, 20)
	}
}
