package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/registry"
)

// BenchmarkSearchInline compares, interleaved query by query on one engine so that a
// noisy machine and the caches weigh on both alike, whole searches that may run on their
// caller as Open makes them (a small search runs inline and a bigger one alone is
// helped: actors.Job.Inline) with searches always handed to the actors' worker
// goroutines. It reports the p50 and mean wall time of each, the mean process CPU time
// (every goroutine) of each, and inline/handoff, the ratio of the p50s.
func BenchmarkSearchInline(b *testing.B) {
	b.Run("set=metatool", func(b *testing.B) {
		caps, queries := stageEvalSet(b, "metatool")
		benchInline(b, caps, queries)
	})
	runStageSets(b, benchInline)
}

func benchInline(b *testing.B, caps []*registry.Capability, queries []string) {
	e, rc := openStageEngine(b, caps)
	kinds := e.inline
	ctx := context.Background()
	var tin, tho []time.Duration
	var cin, cho time.Duration // CPU time of the process
	search := func(inline bool, q string) time.Duration {
		e.inline = 0 // prepare reads it into every job
		if inline {
			e.inline = kinds
		}
		c, t := cputime.Process(), time.Now()
		if _, err := e.Search(ctx, registry.SearchRequest{Query: q}, rc); err != nil {
			b.Fatal(err)
		}
		took, cpu := time.Since(t), cputime.Process()-c
		if inline {
			cin += cpu
		} else {
			cho += cpu
		}
		return took
	}
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)]
		if i++; i%2 == 0 {
			tin = append(tin, search(true, q))
			tho = append(tho, search(false, q))
		} else {
			tho = append(tho, search(false, q))
			tin = append(tin, search(true, q))
		}
	}
	p50 := func(x []time.Duration) float64 {
		slices.Sort(x)
		return float64(x[len(x)/2].Nanoseconds()) / 1e3
	}
	mean := func(x []time.Duration) float64 {
		var sum time.Duration
		for _, d := range x {
			sum += d
		}
		return float64(sum.Nanoseconds()) / 1e3 / float64(len(x))
	}
	b.ReportMetric(float64(cin.Nanoseconds())/1e3/float64(len(tin)), "inline-cpu-us")
	b.ReportMetric(float64(cho.Nanoseconds())/1e3/float64(len(tho)), "handoff-cpu-us")
	b.ReportMetric(mean(tin), "inline-mean-us")
	b.ReportMetric(mean(tho), "handoff-mean-us")
	b.ReportMetric(p50(tin), "inline-p50-us")
	b.ReportMetric(p50(tho), "handoff-p50-us")
	b.ReportMetric(p50(tin)/p50(tho), "inline/handoff")
}
