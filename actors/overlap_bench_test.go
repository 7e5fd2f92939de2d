package actors

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/index"
)

// spin keeps the CPU busy for d.
func spin(d time.Duration) {
	for t0 := time.Now(); time.Since(t0) < d; {
	}
}

// BenchmarkSearchOverlap measures how much of two CPU-bound retrievers' work the actor
// layer runs at the same time: two retrievers of work µs each plus three trivial ones.
// overlap is 1 when the search takes as long as one retriever (the two ran side by side
// on two processors), 0 when it takes as long as both in sequence, and below 0 when the
// hand-offs cost more on top. On an idle 2-core VM the second worker starts about 50 µs
// after it is woken, so two 20-60 µs retrievers mostly run back to back.
func BenchmarkSearchOverlap(b *testing.B) {
	for _, work := range []time.Duration{20 * time.Microsecond, 60 * time.Microsecond} {
		b.Run(fmt.Sprintf("work=%v", work), func(b *testing.B) {
			s := newSystem(b, Options{})
			retrieve := func(_ context.Context, k index.Kind, _ *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
				if k == index.Lexical || k == index.Semantic {
					spin(work)
				}
				return benchHits[k], nil
			}
			job := &Job{Query: &index.Query{Text: "bench"}, Plan: fiveKinds(time.Second),
				Retrieve: retrieve, Rank: trivialRank}
			ctx := context.Background()
			cpu0 := processCPU()
			for b.Loop() {
				if _, err := s.Search(ctx, job); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0)
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			w := float64(work.Nanoseconds())
			b.ReportMetric((2*w-per)/w, "overlap")
		})
	}
}
