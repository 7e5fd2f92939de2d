package actors

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/bench/cputime"
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
			cpu0 := cputime.Process()
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

// BenchmarkWakeLatency measures what BenchmarkSearchOverlap runs into, without actors: how
// long a goroutine woken by a channel send takes to start while the goroutine that woke it
// keeps its processor busy for busy, after both processors sat idle for 300 µs (as between
// two searches of a lightly used service). Go queues the woken goroutine on the waker's
// processor and wakes an idle one to take it; start-p50-us and start-p90-us say when it
// ran, and before-busy-ends the share that started before the waker's busy time ended. On
// the 2-core VM of this project's sessions start-p50-us came out at about busy itself (one
// run: 101 µs at busy=100µs, 404 µs at busy=400µs, p90 3-4 µs later): the woken goroutine
// mostly starts only when its waker stops. A search's retrievers woken together therefore
// run mostly one after another there, and a worker woken ahead of time (tried: woken when a
// search starts preparing, spinning for work) starts no sooner.
func BenchmarkWakeLatency(b *testing.B) {
	for _, busy := range []time.Duration{100 * time.Microsecond, 400 * time.Microsecond} {
		b.Run(fmt.Sprintf("busy=%v", busy), func(b *testing.B) {
			wake := make(chan struct{})
			started := make(chan time.Time, 1)
			go func() {
				for range wake {
					started <- time.Now()
				}
			}()
			defer close(wake)
			var lat []time.Duration
			early := 0
			for b.Loop() {
				time.Sleep(300 * time.Microsecond)
				t0 := time.Now()
				wake <- struct{}{}
				spin(busy)
				end := time.Now()
				t := <-started
				lat = append(lat, t.Sub(t0))
				if t.Before(end) {
					early++
				}
			}
			slices.Sort(lat)
			us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
			b.ReportMetric(us(lat[len(lat)/2]), "start-p50-us")
			b.ReportMetric(us(lat[len(lat)*9/10]), "start-p90-us")
			b.ReportMetric(float64(early)/float64(len(lat)), "before-busy-ends")
		})
	}
}
