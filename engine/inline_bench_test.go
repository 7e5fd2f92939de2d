package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/capdex/capdex/registry"
)

// BenchmarkSearchInline compares, interleaved in one run so that a noisy machine weighs
// on both alike, whole searches of two engines over the same catalogue: one as Open
// makes it (a small search runs on its caller: actors.Job.Inline) and one whose searches
// are always handed to the actors' worker goroutines. It reports the p50 and mean wall
// time of each, and inline/handoff, the ratio of the p50s.
func BenchmarkSearchInline(b *testing.B) {
	b.Run("set=metatool", func(b *testing.B) {
		caps, queries := stageEvalSet(b, "metatool")
		benchInline(b, caps, queries)
	})
	runStageSets(b, benchInline)
}

func benchInline(b *testing.B, caps []*registry.Capability, queries []string) {
	open := func() *Engine {
		e, err := Open(context.Background(), Options{Seed: caps, NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		return e
	}
	inline, handoff := open(), open()
	handoff.inline = 0
	rc := registry.RuntimeContext{Tenant: "default", User: "bench", Scopes: []string{"*", "admin"}}
	ctx := context.Background()
	var tin, tho []time.Duration
	search := func(e *Engine, q string) time.Duration {
		t := time.Now()
		if _, err := e.Search(ctx, registry.SearchRequest{Query: q}, rc); err != nil {
			b.Fatal(err)
		}
		return time.Since(t)
	}
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)]
		if i++; i%2 == 0 {
			tin = append(tin, search(inline, q))
			tho = append(tho, search(handoff, q))
		} else {
			tho = append(tho, search(handoff, q))
			tin = append(tin, search(inline, q))
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
	b.ReportMetric(mean(tin), "inline-mean-us")
	b.ReportMetric(mean(tho), "handoff-mean-us")
	b.ReportMetric(p50(tin), "inline-p50-us")
	b.ReportMetric(p50(tho), "handoff-p50-us")
	b.ReportMetric(p50(tin)/p50(tho), "inline/handoff")
}
