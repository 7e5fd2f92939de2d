package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/capdex/capdex/registry"
)

// evalDir locates the shared evaluation sets: $CAPDEX_EVAL_DIR, else ../../shared/eval
// relative to this package.
func evalDir() string {
	if d := os.Getenv("CAPDEX_EVAL_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "eval")
}

type evalQuery struct {
	QID      string   `json:"qid"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	Lang     string   `json:"lang"`
}

type evalSet struct {
	name    string
	g       *Generation
	queries []evalQuery
	byExt   map[string]uint32 // original tool id → docID
}

var (
	evalMu   sync.Mutex
	evalSets = map[string]*evalSet{}
)

// loadEvalSet imports tools.jsonl of one set through registry.ImportWith and reads its
// queries; nil when the set has no queries.
func loadEvalSet(tb testing.TB, dir, name string) *evalSet {
	tb.Helper()
	evalMu.Lock()
	defer evalMu.Unlock()
	if s, ok := evalSets[name]; ok {
		return s
	}
	qraw, err := os.ReadFile(filepath.Join(dir, name, "queries.jsonl"))
	if err != nil {
		evalSets[name] = nil
		return nil
	}
	traw, err := os.ReadFile(filepath.Join(dir, name, "tools.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	caps, err := registry.ImportWith(bytes.NewReader(traw), registry.ImportOptions{
		Format: registry.FormatJSONL, Source: name,
		ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}, Execute: []string{"*"}},
	})
	if err != nil {
		tb.Fatalf("import %s: %v", name, err)
	}
	g := buildCaps(tb, 1, caps, Options{})
	s := &evalSet{name: name, g: g, byExt: map[string]uint32{}}
	for d, c := range g.Snapshot().Caps {
		if c.ExternalID != "" {
			s.byExt[c.ExternalID] = uint32(d)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(qraw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var q evalQuery
		if json.Unmarshal(sc.Bytes(), &q) == nil && q.Query != "" && len(q.Relevant) > 0 {
			s.queries = append(s.queries, q)
		}
	}
	evalSets[name] = s
	return s
}

// quality is recall@5, MRR@10 and nDCG@5 (binary relevance) of one retriever on a set, and
// the median and 99th percentile of its per-query wall time.
type quality struct {
	recall5, mrr, ndcg5 float64
	p50, p99            time.Duration
}

func (s *evalSet) measure(tb testing.TB, k Kind) quality {
	var q quality
	ctx := context.Background()
	took := make([]time.Duration, 0, len(s.queries))
	for _, eq := range s.queries {
		rel := map[uint32]bool{}
		for _, id := range eq.Relevant {
			if d, ok := s.byExt[id]; ok {
				rel[d] = true
			}
		}
		start := time.Now()
		hits, err := s.g.Retrieve(ctx, k, &Query{Text: eq.Query}, nil, 10)
		took = append(took, time.Since(start))
		if err != nil {
			tb.Fatal(err)
		}
		found, dcg, idcg := 0, 0.0, 0.0
		for i, h := range hits {
			if !rel[h.Doc] {
				continue
			}
			if found == 0 {
				q.mrr += 1 / float64(i+1)
			}
			found++
			if i < 5 {
				dcg += 1 / math.Log2(float64(i+2))
			}
		}
		in5 := 0
		for _, h := range hits[:min(5, len(hits))] {
			if rel[h.Doc] {
				in5++
			}
		}
		for i := range min(5, len(eq.Relevant)) {
			idcg += 1 / math.Log2(float64(i+2))
		}
		q.recall5 += float64(in5) / float64(len(eq.Relevant))
		if idcg > 0 {
			q.ndcg5 += dcg / idcg
		}
	}
	n := float64(len(s.queries))
	slices.Sort(took)
	return quality{q.recall5 / n, q.mrr / n, q.ndcg5 / n, took[len(took)/2], took[len(took)*99/100]}
}

// BenchmarkEvalSets imports each ../shared/eval set and reports, per retriever, the time of
// one query and recall@5, MRR@10 and nDCG@5 over all the set's queries.
func BenchmarkEvalSets(b *testing.B) {
	dir := evalDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Skipf("evaluation sets not found at %s (set CAPDEX_EVAL_DIR): %v", dir, err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, k := range []Kind{Lexical, Semantic} {
			b.Run("set="+e.Name()+"/retriever="+k.String(), func(b *testing.B) {
				s := loadEvalSet(b, dir, e.Name())
				if s == nil {
					b.Skipf("%s has no queries", e.Name())
				}
				ctx := context.Background()
				qs := make([]Query, len(s.queries))
				for i, q := range s.queries {
					qs[i] = Query{Text: q.Query}
				}
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				b.ResetTimer()
				cpu := threadCPU()
				for i := 0; i < b.N; i++ {
					if _, err := s.g.Retrieve(ctx, k, &qs[i%len(qs)], nil, 10); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
				b.StopTimer()
				q := s.measure(b, k)
				b.ReportMetric(q.recall5, "recall@5")
				b.ReportMetric(q.mrr, "mrr")
				b.ReportMetric(q.ndcg5, "ndcg@5")
				b.ReportMetric(float64(q.p50.Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(q.p99.Nanoseconds()), "p99-ns")
				b.ReportMetric(float64(s.g.Len()), "docs")
			})
		}
	}
}
