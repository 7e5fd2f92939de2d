package index

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// BenchmarkBuildChange is the index build of one registry change as the engine makes it: a
// summary edit of one capability (a new word), built with Options.Reuse over the previous
// generation of a chain, on the generated 10k catalogue. It reports the process CPU of a
// build (every goroutine), the median wall time of each stage, and the process CPU of the
// semantic stage run again alone over the same inputs; an op is one change.
func BenchmarkBuildChange(b *testing.B) {
	ctx := context.Background()
	emb := embed.NewHashed()
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(10_000, 1))
	if err != nil {
		b.Fatal(err)
	}
	first, err := Build(ctx, snap, Options{Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	prev, err := Build(ctx, snap, Options{Embedder: emb, Reuse: first}) // keeps the analysis
	if err != nil {
		b.Fatal(err)
	}
	var cpu, lex, sem, cols, semCPU []time.Duration
	i := 0
	for b.Loop() {
		x := snap.Caps[(101+i*997)%len(snap.Caps)].Clone()
		x.Version++
		x.Summary += fmt.Sprintf(" zqxv%dwug", i)
		i++
		next, err := snap.Apply(snap.Generation+1, []*registry.Capability{x}, nil)
		if err != nil {
			b.Fatal(err)
		}
		c := cputime.Process()
		g, err := Build(ctx, next, Options{Embedder: emb, Reuse: prev})
		if err != nil {
			b.Fatal(err)
		}
		cpu = append(cpu, cputime.Process()-c)
		// the semantic stage again, alone, for its CPU
		sg := &Generation{snap: next, n: len(next.Caps), emb: emb, an: &analysis{}, prev: prev.an, prevDoc: reuseOf(prev, next)}
		if prev.snap.SameIDs(next) {
			sg.shared = prev
		}
		c = cputime.Process()
		if err := sg.buildSemantic(ctx, Options{}); err != nil {
			b.Fatal(err)
		}
		semCPU = append(semCPU, cputime.Process()-c)
		st := g.Stats()
		lex, sem, cols = append(lex, st.Lexical), append(sem, st.Semantic), append(cols, st.Columns)
		prev, snap = g, next
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(med(cpu), "build-cpu-p50-ms")
	b.ReportMetric(med(lex), "lexical-p50-ms")
	b.ReportMetric(med(sem), "semantic-p50-ms")
	b.ReportMetric(med(semCPU), "semantic-cpu-p50-ms")
	b.ReportMetric(med(cols), "columns-p50-ms")
}
