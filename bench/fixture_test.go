package bench

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// catalogSizes are the generated catalogues the suites search.
var catalogSizes = []struct {
	name string
	n    int
}{{"1k", 1_000}, {"10k", 10_000}, {"100k", 100_000}}

// benchQueries is how many labelled queries a generated catalogue is searched with.
const benchQueries = 1000

// catalogFixture is an open in-memory engine over a generated catalogue and its queries.
// Fixtures are built once per process and never closed: a 100k engine takes most of a
// minute to open.
type catalogFixture struct {
	e       *engine.Engine
	n       int
	queries []LabelledQuery
	reqs    []registry.SearchRequest
	rc      registry.RuntimeContext

	qualOnce sync.Once
	qual     *Report
	qualErr  error
}

var (
	fixMu    sync.Mutex // guards the maps below
	fixtures = map[int]*catalogFixture{}
	catalogs = map[int][]*registry.Capability{}
	scratch  string
)

// TestMain removes the scratch directory the benchmarks seed data directories in.
func TestMain(m *testing.M) {
	code := m.Run()
	if scratch != "" {
		os.RemoveAll(scratch)
	}
	os.Exit(code)
}

// scratchDir is a directory that lasts the whole process (fixMu held).
func scratchDir(tb testing.TB) string {
	tb.Helper()
	if scratch == "" {
		d, err := os.MkdirTemp("", "capdex-bench-")
		if err != nil {
			tb.Fatal(err)
		}
		scratch = d
	}
	return scratch
}

// catalog is Catalog(n), generated once per process (fixMu held or not needed).
func catalog(n int) []*registry.Capability {
	catMu.Lock()
	defer catMu.Unlock()
	if c, ok := catalogs[n]; ok {
		return c
	}
	c := Catalog(n)
	catalogs[n] = c
	return c
}

var catMu sync.Mutex

// openCatalog returns the fixture for a generated catalogue of n, building it on first use.
func openCatalog(tb testing.TB, n int) *catalogFixture {
	tb.Helper()
	fixMu.Lock()
	defer fixMu.Unlock()
	if f, ok := fixtures[n]; ok {
		return f
	}
	caps := catalog(n)
	qs, err := CatalogQueries(caps, benchQueries)
	if err != nil {
		tb.Fatal(err)
	}
	e, err := engine.Open(context.Background(), engine.Options{Seed: caps, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	f := &catalogFixture{e: e, n: n, queries: qs, reqs: requests(qs), rc: CatalogRC()}
	fixtures[n] = f
	return f
}

// quality scores the fixture's queries once (outside any timer).
func (f *catalogFixture) quality(tb testing.TB) *Report {
	tb.Helper()
	f.qualOnce.Do(func() {
		f.qual, f.qualErr = evalWith(context.Background(), f.e, f.queries, f.rc, true)
	})
	if f.qualErr != nil {
		tb.Fatal(f.qualErr)
	}
	return f.qual
}

// evalFixture is an open in-memory engine over one set of ../shared/eval.
type evalFixture struct {
	name    string
	e       *engine.Engine
	n       int
	queries []LabelledQuery
	reqs    []registry.SearchRequest // the queries in a fixed shuffled order

	qualOnce sync.Once
	qual     *Report
	qualErr  error
}

var evalFixtures = map[string]*evalFixture{}

// openEvalSet returns the fixture of one evaluation set, skipping tb when ../shared/eval is
// absent.
func openEvalSet(tb testing.TB, name string) *evalFixture {
	tb.Helper()
	dir, ok := EvalDir()
	if !ok {
		tb.Skipf("evaluation sets not found at %s (set CAPDEX_EVAL_DIR to the shared/eval folder)", dir)
	}
	fixMu.Lock()
	defer fixMu.Unlock()
	if f, ok := evalFixtures[name]; ok {
		return f
	}
	caps, err := ImportEvalTools(filepath.Join(dir, name, "tools.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	qs, err := ReadQueries(filepath.Join(dir, name, "queries.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	e, err := engine.Open(context.Background(), engine.Options{Seed: caps, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	shuffled := append([]LabelledQuery(nil), qs...)
	r := rand.New(rand.NewPCG(CatalogSeed, 11))
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	f := &evalFixture{name: name, e: e, n: len(caps), queries: qs, reqs: requests(shuffled)}
	evalFixtures[name] = f
	return f
}

// quality scores every query of the set once, each retriever alone too.
func (f *evalFixture) quality(tb testing.TB) *Report {
	tb.Helper()
	f.qualOnce.Do(func() {
		f.qual, f.qualErr = EvalQueries(context.Background(), f.e, f.queries, Options{PerRetriever: true})
	})
	if f.qualErr != nil {
		tb.Fatal(f.qualErr)
	}
	return f.qual
}

// evalWith scores labelled queries as rc, each retriever alone too when perRetriever.
func evalWith(ctx context.Context, e *engine.Engine, qs []LabelledQuery, rc registry.RuntimeContext, perRetriever bool) (*Report, error) {
	return EvalQueries(ctx, e, qs, Options{PerRetriever: perRetriever, RuntimeContext: &rc})
}

func requests(qs []LabelledQuery) []registry.SearchRequest {
	out := make([]registry.SearchRequest, len(qs))
	for i, q := range qs {
		out[i] = registry.SearchRequest{Query: q.Query, Limit: 10}
	}
	return out
}

// reportQuality adds a report's quality to a benchmark's metrics.
func reportQuality(b *testing.B, r *Report) {
	b.Helper()
	metric(b, r.Recall5, "recall@5")
	metric(b, r.NDCG5, "ndcg@5")
	metric(b, r.MRR, "mrr")
}

func metric(b *testing.B, v *float64, unit string) {
	if v != nil {
		b.ReportMetric(*v, unit)
	}
}

// searchLoop runs b.N searches, cycling through reqs, and reports candidates and partial
// answers per search.
func searchLoop(b *testing.B, e *engine.Engine, reqs []registry.SearchRequest, rc registry.RuntimeContext) {
	b.Helper()
	ctx := context.Background()
	cands, partial := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		resp, err := e.Search(ctx, reqs[i%len(reqs)], rc)
		if err != nil {
			b.Fatal(err)
		}
		cands += resp.SearchMeta.CandidateCount
		if resp.SearchMeta.Partial {
			partial++
		}
	}
	b.StopTimer()
	reportCPU(b, cpu)
	b.ReportMetric(float64(cands)/float64(b.N), "candidates/op")
	b.ReportMetric(float64(partial)/float64(b.N), "partial/op")
}

// probeLoop runs b.N calls of one retriever alone and reports its hits per call.
func probeLoop(b *testing.B, e *engine.Engine, retriever string, reqs []registry.SearchRequest, rc registry.RuntimeContext) {
	b.Helper()
	ctx := context.Background()
	hits := 0
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		caps, err := e.Probe(ctx, retriever, reqs[i%len(reqs)], rc)
		if err != nil {
			b.Fatal(err)
		}
		hits += len(caps)
	}
	b.StopTimer()
	reportCPU(b, cpu)
	b.ReportMetric(float64(hits)/float64(b.N), "candidates/op")
}

// runConcurrent runs fn b.N times in total over exactly g goroutines, each taking the next
// iteration from a shared counter: b.RunParallel's contract, but with any goroutine count.
// (b.RunParallel starts a multiple of GOMAXPROCS goroutines, so one goroutine is out of its
// reach on a 2-core machine without changing GOMAXPROCS, which would change the machine.)
func runConcurrent(b *testing.B, g int, fn func(i int)) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu := cputime.Process()
	for range g {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					return
				}
				fn(int(i))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	reportCPU(b, cpu)
}

// reportCPU reports the process CPU time per operation since start (all goroutines: the
// actors', the collector's).
func reportCPU(b *testing.B, start time.Duration) {
	if start > 0 {
		b.ReportMetric(float64(cputime.Process()-start)/float64(b.N), "cpu-ns/op")
	}
}

// countSum is a counter shared by concurrent searches.
type countSum struct{ v atomic.Int64 }

func (c *countSum) add(n int64) { c.v.Add(n) }

func (c *countSum) per(n int) float64 { return float64(c.v.Load()) / float64(n) }

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC() // a second cycle frees what the first one's finalizers released
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
