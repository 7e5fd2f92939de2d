package engine

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// BenchmarkSearchTimeline runs whole searches one at a time, as engine.Search does
// (count itself as in progress, prepare, then actors.System.Search), and reports when each milestone of a search
// came, as the median over the searches of µs since the search began:
//
//   - prepare-us: the job is ready (validation, normalisation, pre-filter, plan);
//   - first-start-us and second-start-us: the first and the second retriever call
//     began (the second one is when a second processor joins, if any does);
//   - last-end-us: the last retriever call returned;
//   - rank-start-us and rank-end-us: the final ranking began and ended;
//   - whole-us: Search returned to its caller.
//
// handoff-in-us (first-start minus prepare) and handoff-out-us (whole minus rank-end)
// are the medians of the per-search gaps: what it costs to hand a search to the actors'
// workers and its answer back to the caller. The stage benchmarks say how much CPU each
// stage takes; this one says where a search's wall time goes between them.
func BenchmarkSearchTimeline(b *testing.B) { runStageSets(b, benchTimeline) }

func benchTimeline(b *testing.B, caps []*registry.Capability, queries []string) {
	e, rc := openStageEngine(b, caps)
	ctx := context.Background()

	var t0 time.Time
	var starts, ends [index.NumKinds]atomic.Int64 // ns since t0, 0: not called
	since := func() int64 { return max(1, int64(time.Since(t0))) }
	const (
		prepare = iota
		firstStart
		secondStart
		lastEnd
		rankStart
		rankEnd
		whole
		handoffIn
		handoffOut
		milestones
	)
	var at [milestones][]float64
	i := 0
	for b.Loop() {
		for k := range starts {
			starts[k].Store(0)
			ends[k].Store(0)
		}
		req, r := registry.SearchRequest{Query: queries[i%len(queries)]}, rc
		i++
		t0 = time.Now()
		e.busy.Add(1) // as Search counts itself
		job, sc, err := e.prepare(ctx, &req, &r, false)
		if err != nil {
			b.Fatal(err)
		}
		prepared := since()
		retrieve := job.Retrieve
		job.Retrieve = func(ctx context.Context, k index.Kind, q *index.Query, allow *roaring.Bitmap, limit int) ([]index.Hit, error) {
			starts[k].Store(since())
			defer func() { ends[k].Store(since()) }()
			return retrieve(ctx, k, q, allow, limit)
		}
		var ranked [2]int64
		rank := job.Rank
		job.Rank = func(g *actors.Gathered) *registry.SearchResponse {
			ranked[0] = since()
			defer func() { ranked[1] = since() }()
			return rank(g)
		}
		if _, err := e.sys.Search(ctx, job); err != nil {
			b.Fatal(err)
		}
		done := since()
		e.busy.Add(-1)
		sc.release()

		var began []int64
		var last int64
		for k := range starts {
			if s := starts[k].Load(); s > 0 {
				began = append(began, s)
				last = max(last, ends[k].Load())
			}
		}
		if len(began) == 0 {
			continue
		}
		slices.Sort(began)
		second := began[0]
		if len(began) > 1 {
			second = began[1]
		}
		for m, v := range [milestones]int64{prepared, began[0], second, last, ranked[0], ranked[1], done,
			began[0] - prepared, done - ranked[1]} {
			at[m] = append(at[m], float64(v)/1e3)
		}
	}
	names := [milestones]string{"prepare-us", "first-start-us", "second-start-us", "last-end-us",
		"rank-start-us", "rank-end-us", "whole-us", "handoff-in-us", "handoff-out-us"}
	for m, xs := range at {
		if len(xs) > 0 {
			slices.Sort(xs)
			b.ReportMetric(xs[len(xs)/2], names[m])
		}
	}
}
