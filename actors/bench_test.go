package actors

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// benchHits are the fixed answers of the trivial benchmark retrievers, per kind.
var benchHits = func() [index.NumKinds][]index.Hit {
	var h [index.NumKinds][]index.Hit
	for k := range h {
		for i := range 10 {
			h[k] = append(h[k], index.Hit{Doc: uint32(k*5 + i), Score: float64(10 - i)})
		}
	}
	return h
}()

func trivialRetrieve(_ context.Context, k index.Kind, _ *index.Query, _ *roaring.Bitmap, _ int) ([]index.Hit, error) {
	return benchHits[k], nil
}

var benchResponse = &registry.SearchResponse{Resolution: registry.Confident}

func trivialRank(g *Gathered) *registry.SearchResponse {
	if g.Candidates.IsEmpty() {
		return nil
	}
	return benchResponse
}

func benchJob() *Job {
	return &Job{Query: &index.Query{Text: "bench"}, Plan: fiveKinds(time.Second),
		Retrieve: trivialRetrieve, Rank: trivialRank}
}

// reportCPU reports the process CPU time per op since cpu0: a cost figure that,
// unlike ns/op, other processes loading the machine barely change.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkSearch is one search at a time through the actor layer: five trivial
// retrievers, fan-out, gather, final Rank. actor-ns/op is its cost above the same
// work done by direct function calls (BenchmarkDirect).
func BenchmarkSearch(b *testing.B) {
	s := newSystem(b, Options{})
	job := benchJob()
	ctx := context.Background()
	base := directNS(job)
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		if _, err := s.Search(ctx, job); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)-base, "actor-ns/op")
}

// BenchmarkSearchStream is BenchmarkSearch with a partial Rank and update per arrival.
func BenchmarkSearchStream(b *testing.B) {
	s := newSystem(b, Options{})
	job := benchJob()
	job.Stream = true
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		ch, err := s.SearchStream(ctx, job)
		if err != nil {
			b.Fatal(err)
		}
		for range ch {
		}
	}
	reportCPU(b, cpu0)
}

// BenchmarkSearchParallel runs many searches at once (b.RunParallel); inflight is
// the number of concurrent callers.
func BenchmarkSearchParallel(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	for _, inflight := range []int{procs, 64} {
		b.Run(fmt.Sprintf("inflight=%d", inflight), func(b *testing.B) {
			s := newSystem(b, Options{})
			job := benchJob()
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(max(1, inflight/procs))
			start, cpu0 := time.Now(), cputime.Process()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.Search(ctx, job); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "searches/s")
			reportCPU(b, cpu0)
		})
	}
}

// direct runs job's steps as plain function calls in sequence, gathering and
// ranking like the gather actor: the baseline for the actor layer's cost.
type direct struct {
	cands    *roaring.Bitmap
	evidence []Evidence
	docs     docSet
}

func (d *direct) run(ctx context.Context, job *Job) *registry.SearchResponse {
	start := time.Now()
	d.cands.Clear()
	d.evidence = d.evidence[:0]
	for _, st := range job.Plan {
		t0 := time.Now()
		hits, err := job.Retrieve(ctx, st.Kind, job.Query, job.Allow, st.Limit)
		d.evidence = append(d.evidence, Evidence{Kind: st.Kind, Hits: hits, Err: err, Took: time.Since(t0)})
	}
	d.docs.union(d.cands, d.evidence)
	g := Gathered{Planned: job.Plan, Evidence: d.evidence, Candidates: d.cands, Final: true, Elapsed: time.Since(start)}
	return job.Rank(&g)
}

// directNS is the mean cost of one direct run of job, in ns.
func directNS(job *Job) float64 {
	d := &direct{cands: roaring.New()}
	const n = 20000
	start := time.Now()
	for range n {
		d.run(context.Background(), job)
	}
	return float64(time.Since(start).Nanoseconds()) / n
}

// BenchmarkDirect is the same retrievers, gathering and ranking as BenchmarkSearch,
// called as plain functions in sequence.
func BenchmarkDirect(b *testing.B) {
	job := benchJob()
	ctx := context.Background()
	d := &direct{cands: roaring.New()}
	b.ReportAllocs()
	cpu0 := cputime.Process()
	for b.Loop() {
		if d.run(ctx, job) == nil {
			b.Fatal("no response")
		}
	}
	reportCPU(b, cpu0)
}
