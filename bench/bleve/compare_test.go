package blevecmp

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capdex/capdex/bench"
	"github.com/capdex/capdex/bench/cputime"
)

var (
	compareFlag = flag.Bool("compare", false, "run TestCompareTable (also CAPDEX_COMPARE=1)")
	maxQueries  = flag.Int("compare.queries", 0, "queries per evaluation set, a fixed sample (0: all)")
)

// genCatalog and genQueries size the generated set compared next to the evaluation sets.
const (
	genCatalog = 10_000
	genQueries = 1000
)

// setNames are the compared sets: the evaluation sets with queries, then the generated one.
var setNames = append(append([]string(nil), bench.EvalSets...), "generated_10k")

// fixture is one set with both engines open and one scored run of each.
type fixture struct {
	set    *Set
	bleve  *Bleve
	capdex *Capdex
	row    Row
}

var (
	fixMu    sync.Mutex
	fixtures = map[string]*fixture{}
)

// openSet loads a set, builds both engines and runs every query through each once
// (outside any timer), caching the result for the process. Evaluation sets skip tb when
// ../shared/eval is absent.
func openSet(tb testing.TB, name string) *fixture {
	tb.Helper()
	var dir string
	if name != "generated_10k" {
		d, ok := bench.EvalDir()
		if !ok {
			tb.Skipf("evaluation sets not found at %s (set CAPDEX_EVAL_DIR to the shared/eval folder)", d)
		}
		dir = d
	}
	fixMu.Lock()
	defer fixMu.Unlock()
	if f, ok := fixtures[name]; ok {
		return f
	}
	var s *Set
	var err error
	if dir == "" {
		s, err = GeneratedSet(genCatalog, genQueries)
	} else {
		s, err = LoadEvalSet(dir, name, *maxQueries)
	}
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	bl, err := NewBleve(s, BleveOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	cd, err := NewCapdex(ctx, s)
	if err != nil {
		tb.Fatal(err)
	}
	f := &fixture{set: s, bleve: bl, capdex: cd, row: Row{Set: s.Name, Docs: len(s.Docs)}}
	// A warm-up pass each, so neither run pays for first-touch costs.
	warm := s.Queries[:min(100, len(s.Queries))]
	for _, e := range []Searcher{bl, cd} {
		if _, err := Run(ctx, e, warm); err != nil {
			tb.Fatal(err)
		}
	}
	if f.row.Bleve, err = Run(ctx, bl, s.Queries); err != nil {
		tb.Fatal(err)
	}
	if f.row.Capdex, err = Run(ctx, cd, s.Queries); err != nil {
		tb.Fatal(err)
	}
	fixtures[name] = f
	return f
}

// BenchmarkCompare searches each set one query at a time with each engine (ns/op is the
// mean over the set's queries, cycled) and reports the quality and latency percentiles of
// one full pass over the queries; cpu-ns/op is the process CPU time per query. engine=capdex
// also reports the ratios to bleve over that pass: p50-ratio (capdex p50 / bleve p50),
// cpu-ratio (CPU time per query) and the quality differences (capdex − bleve).
func BenchmarkCompare(b *testing.B) {
	for _, name := range setNames {
		b.Run("set="+name, func(b *testing.B) {
			f := openSet(b, name)
			for _, eng := range []struct {
				name string
				s    Searcher
				res  Result
			}{{"bleve", f.bleve, f.row.Bleve}, {"capdex", f.capdex, f.row.Capdex}} {
				b.Run("engine="+eng.name, func(b *testing.B) {
					ctx := context.Background()
					qs := f.set.Queries
					b.ReportAllocs()
					b.ResetTimer()
					cpu := cputime.Process()
					for i := 0; i < b.N; i++ {
						if _, err := eng.s.Search(ctx, qs[i%len(qs)].Query); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
					r := eng.res
					b.ReportMetric(us(r.P50), "p50-us")
					b.ReportMetric(us(r.P99), "p99-us")
					b.ReportMetric(r.Recall5, "recall@5")
					b.ReportMetric(r.NDCG5, "ndcg@5")
					b.ReportMetric(r.MRR, "mrr")
					if eng.name == "capdex" {
						bl := f.row.Bleve
						b.ReportMetric(ratio(r.P50, bl.P50), "p50-ratio")
						b.ReportMetric(ratio(r.CPU, bl.CPU), "cpu-ratio")
						b.ReportMetric(r.Recall5-bl.Recall5, "recall@5-delta")
						b.ReportMetric(r.NDCG5-bl.NDCG5, "ndcg@5-delta")
					}
				})
			}
		})
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// TestCompareTable prints the comparison as a markdown table. It runs only when asked:
// go test -run TestCompareTable -v -compare (or CAPDEX_COMPARE=1).
func TestCompareTable(t *testing.T) {
	if !*compareFlag && os.Getenv("CAPDEX_COMPARE") != "1" {
		t.Skip("the comparison takes minutes: run with -compare or CAPDEX_COMPARE=1")
	}
	var rows []Row
	for _, name := range setNames {
		t.Run(name, func(t *testing.T) {
			rows = append(rows, openSet(t, name).row)
		})
	}
	if len(rows) == 0 {
		t.Skip("no set available")
	}
	t.Logf("\n%s", Markdown(rows))
}

// TestBleveScoring checks the bleve side is the baseline it claims to be: scorch in
// memory scores with BM25, while bleve.NewMemOnly falls back to TF-IDF (its upside_down
// readers report no field lengths) although the mapping asks for BM25.
func TestBleveScoring(t *testing.T) {
	s := &Set{Name: "tiny", Analyzer: "en", Docs: []Doc{
		{ID: "send_email", Name: "send_email", Description: "Send an email message to a recipient", Params: "to address of the recipient"},
		{ID: "read_file", Name: "read_file", Description: "Read a file from the disk", Params: "path file path"},
		{ID: "list_files", Name: "list_files", Description: "List the files of a directory", Params: "dir directory"},
	}}
	tests := []struct {
		name     string
		opts     BleveOptions
		wantBM25 bool
	}{
		{name: "scorch in memory", opts: BleveOptions{}, wantBM25: true},
		{name: "NewMemOnly", opts: BleveOptions{MemOnly: true}, wantBM25: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := NewBleve(s, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			req := b.Request("send an email")
			req.Explain = true
			res, err := b.Index().Search(req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].ID != "send_email" {
				t.Fatalf("hits = %v, want send_email first", res.Hits)
			}
			x, _ := json.Marshal(res.Hits[0].Expl)
			if got := strings.Contains(string(x), "saturation"); got != tt.wantBM25 {
				t.Errorf("BM25 terms in the explanation: %v, want %v\n%s", got, tt.wantBM25, x)
			}
		})
	}
}

// TestSets checks both engines answer on the generated catalogue and the labels meet.
func TestSets(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: opens a 1k catalogue in both engines")
	}
	s, err := GeneratedSet(1000, 50)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bl, err := NewBleve(s, BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer bl.Close()
	cd, err := NewCapdex(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	defer cd.Close()
	for _, e := range []struct {
		name string
		s    Searcher
	}{{"bleve", bl}, {"capdex", cd}} {
		r, err := Run(ctx, e.s, s.Queries)
		if err != nil {
			t.Fatal(err)
		}
		if r.Queries != 50 || r.Recall5 < 0.3 || r.P50 <= 0 || r.P99 < r.P50 || r.CPU <= 0 {
			t.Errorf("%s: %+v: want 50 queries, recall@5 ≥ 0.3, ordered percentiles and CPU time", e.name, r)
		}
	}
}
