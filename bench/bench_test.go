package bench

import (
	"context"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// The suites (docs/ARCHITECTURE.md "Benchmarks"). Run them all with
//
//	go test -bench . -run '^$' ./bench
//
// or a part with a pattern, e.g. -bench 'Search/catalog=10k'. The 100k catalogue takes
// about a minute to open (once per process); leave it out with -bench 'catalog=1?0?k/'
// style patterns (e.g. -bench 'Search/catalog=(1k|10k)/').

// BenchmarkSearch is one search at a time on the generated catalogues: retrievers=all is
// the whole search (engine.Search: normalise, plan, pre-filter, actors, fusion, rerank,
// diversify), retrievers=NAME one retriever alone (engine.Probe: the same normalisation and
// pre-filter, no actors or ranking). retrievers=all also reports the quality of the whole
// search on the catalogue's labelled queries.
func BenchmarkSearch(b *testing.B) {
	for _, size := range catalogSizes {
		b.Run("catalog="+size.name, func(b *testing.B) {
			f := openCatalog(b, size.n)
			b.Run("retrievers=all", func(b *testing.B) {
				q := f.quality(b)
				searchLoop(b, f.e, f.reqs, f.rc)
				reportQuality(b, q)
			})
			for _, name := range Retrievers {
				b.Run("retrievers="+name, func(b *testing.B) {
					probeLoop(b, f.e, name, f.reqs, f.rc)
				})
			}
		})
	}
}

// BenchmarkSearchParallel is many searches in flight at 10k: goroutines=G keeps G callers
// searching at once. searches/s is the throughput; ns/op is wall time per search (so it
// falls as throughput rises); partial/op counts answers a retriever deadline cut short.
func BenchmarkSearchParallel(b *testing.B) {
	f := openCatalog(b, 10_000)
	for _, g := range []int{1, 2, 4, 8, 64} {
		b.Run("catalog=10k/goroutines="+strconv.Itoa(g), func(b *testing.B) {
			ctx := context.Background()
			var partial, cands countSum
			b.ReportAllocs()
			runConcurrent(b, g, func(i int) {
				resp, err := f.e.Search(ctx, f.reqs[i%len(f.reqs)], f.rc)
				if err != nil {
					b.Error(err)
					return
				}
				cands.add(int64(resp.SearchMeta.CandidateCount))
				if resp.SearchMeta.Partial {
					partial.add(1)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "searches/s")
			b.ReportMetric(cands.per(b.N), "candidates/op")
			b.ReportMetric(partial.per(b.N), "partial/op")
		})
	}
}

// BenchmarkBuild is a full index build (index.Build: lexical, semantic vectors, column
// view, filters, hierarchy) from a registry snapshot; heap-B/cap is the live heap the
// generation adds, per capability (the snapshot it holds was already counted).
func BenchmarkBuild(b *testing.B) {
	for _, size := range catalogSizes {
		b.Run("catalog="+size.name, func(b *testing.B) {
			snap, err := registry.NewSnapshot(1, catalog(size.n))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var perCap float64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				before := heapInUse()
				b.StartTimer()
				g, err := index.Build(ctx, snap, index.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				perCap = float64(int64(heapInUse())-int64(before)) / float64(size.n)
				runtime.KeepAlive(g)
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(size.n)*float64(b.N)/b.Elapsed().Seconds(), "caps/s")
			b.ReportMetric(perCap, "heap-B/cap")
		})
	}
}

// BenchmarkOpen is a cold open of a data directory seeded with a generated catalogue
// (engine.Open: Badger, the active definitions, the index build from the stored column
// snapshot, the actor system), closing it outside the timer. heap-B/cap is the live heap
// the open engine holds per capability (store caches, definitions, index); disk-B/cap the
// data directory's size.
func BenchmarkOpen(b *testing.B) {
	for _, size := range catalogSizes {
		b.Run("catalog="+size.name, func(b *testing.B) {
			dir := seededDir(b, size.n)
			ctx := context.Background()
			var perCap float64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				before := heapInUse()
				b.StartTimer()
				e, err := engine.Open(ctx, engine.Options{Dir: dir, NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if n := len(e.Snapshot().Caps); n != size.n {
					b.Fatalf("opened %d capabilities, want %d", n, size.n)
				}
				perCap = float64(int64(heapInUse())-int64(before)) / float64(size.n)
				if err := e.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(perCap, "heap-B/cap")
			b.ReportMetric(float64(dirSize(b, dir))/float64(size.n), "disk-B/cap")
		})
	}
}

// BenchmarkEval searches the sets of ../shared/eval one query at a time (each set's
// queries in a fixed shuffled order) and reports the quality over all its queries:
// retrievers=all is the whole search, retrievers=NAME one retriever alone (its recall@5 and
// mrr). It is skipped when the sets are absent.
func BenchmarkEval(b *testing.B) {
	for _, set := range EvalSets {
		b.Run("set="+set, func(b *testing.B) {
			f := openEvalSet(b, set)
			rc := registry.RuntimeContext{Tenant: "default", User: "eval", Scopes: []string{"*", "admin"}}
			b.Run("retrievers=all", func(b *testing.B) {
				q := f.quality(b)
				searchLoop(b, f.e, f.reqs, rc)
				reportQuality(b, q)
				b.ReportMetric(float64(q.LatencyP50US), "p50-us")
			})
			for _, name := range Retrievers {
				b.Run("retrievers="+name, func(b *testing.B) {
					q := f.quality(b)
					probeLoop(b, f.e, name, f.reqs, rc)
					r := q.PerRetriever[name]
					metric(b, r.Recall5, "recall@5")
					metric(b, r.MRR, "mrr")
				})
			}
		})
	}
}

var seededDirs = map[int]string{}

// seededDir returns a data directory holding a generated catalogue of n, seeded (once per
// process) by one engine.Open and closed again. TestMain removes it.
func seededDir(b *testing.B, n int) string {
	b.Helper()
	fixMu.Lock()
	defer fixMu.Unlock()
	if d, ok := seededDirs[n]; ok {
		return d
	}
	dir := filepath.Join(scratchDir(b), "catalog-"+strconv.Itoa(n))
	e, err := engine.Open(context.Background(), engine.Options{Dir: dir, Seed: catalog(n), NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	seededDirs[n] = dir
	return dir
}

func dirSize(tb testing.TB, dir string) int64 {
	tb.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return total
}
