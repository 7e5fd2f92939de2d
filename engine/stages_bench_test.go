package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// BenchmarkStages splits a search into its stages and times each one as the search runs
// it, one after another on the same goroutine: prepare (validate, normalise, pre-filter,
// plan, signals), every planned retriever with the limit the engine gives it, and rank
// (candidates, availability, fusion, rerank, resolution, diversification, the response).
// Each stage runs with the caches the stages before it left, as in a real search, so the
// figures add up to a sequential search; whole-us is engine.Search on the same queries in
// the same run, actors included. Per-stage figures are mean µs per search.
//
// set=NAME uses ../shared/eval/NAME (CAPDEX_EVAL_DIR overrides the folder) and is skipped
// without it; catalog=10k uses a generated catalogue queried by its actions' titles.
func BenchmarkStages(b *testing.B) { runStageSets(b, benchStages) }

// runStageSets runs bench as sub-benchmarks on the stage benchmarks' catalogues and
// queries: set=seal_tools and set=hammerbench_zh (skipped without the evaluation sets) and
// catalog=10k, a generated catalogue queried by every seventh action's title.
func runStageSets(b *testing.B, bench func(*testing.B, []*registry.Capability, []string)) {
	for _, set := range []string{"seal_tools", "hammerbench_zh"} {
		b.Run("set="+set, func(b *testing.B) {
			caps, queries := stageEvalSet(b, set)
			bench(b, caps, queries)
		})
	}
	b.Run("catalog=10k", func(b *testing.B) {
		caps := testcat.GenerateCatalog(10_000, 42)
		var queries []string
		for i, c := range caps {
			if c.ResourceType == registry.TypeAction && i%7 == 0 {
				queries = append(queries, c.Title)
			}
		}
		bench(b, caps, queries)
	})
}

func benchStages(b *testing.B, caps []*registry.Capability, queries []string) {
	e, rc := openStageEngine(b, caps)
	ctx := context.Background()
	var prep, rnk, whole time.Duration
	var ret [index.NumKinds]time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := queries[i%len(queries)]
		i++
		req, r := registry.SearchRequest{Query: q}, rc
		t0 := time.Now()
		job, sc, err := e.prepare(ctx, &req, &r, false)
		if err != nil {
			b.Fatal(err)
		}
		prep += time.Since(t0)
		g := &actors.Gathered{Planned: job.Plan, Final: true}
		for _, st := range job.Plan {
			t := time.Now()
			hits, err := job.Retrieve(ctx, st.Kind, job.Query, job.Allow, st.Limit)
			ret[st.Kind] += time.Since(t)
			if err != nil {
				b.Fatal(err)
			}
			g.Evidence = append(g.Evidence, actors.Evidence{Kind: st.Kind, Hits: hits})
		}
		t := time.Now()
		sc.rank(g)
		rnk += time.Since(t)
		sc.release()
		t = time.Now()
		if _, err := e.Search(ctx, registry.SearchRequest{Query: q}, rc); err != nil {
			b.Fatal(err)
		}
		whole += time.Since(t)
	}
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(i) }
	b.ReportMetric(us(prep), "prepare-us")
	for k := range index.NumKinds {
		if ret[k] > 0 {
			b.ReportMetric(us(ret[k]), k.String()+"-us")
		}
	}
	b.ReportMetric(us(rnk), "rank-us")
	b.ReportMetric(us(whole), "whole-us")
}

// openStageEngine opens an engine over caps for a stage benchmark, closed when b ends, and
// the caller its searches run as.
func openStageEngine(b *testing.B, caps []*registry.Capability) (*Engine, registry.RuntimeContext) {
	e, err := Open(context.Background(), Options{Seed: caps, NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e, registry.RuntimeContext{Tenant: "default", User: "bench", Scopes: []string{"*", "admin"}}
}

// stageEvalSet reads an evaluation set's catalogue and queries, skipping b without them.
func stageEvalSet(b *testing.B, set string) ([]*registry.Capability, []string) {
	dir := os.Getenv("CAPDEX_EVAL_DIR")
	if dir == "" {
		dir = filepath.FromSlash("../../shared/eval")
	}
	f, err := os.Open(filepath.Join(dir, set, "tools.jsonl"))
	if err != nil {
		b.Skipf("evaluation set %s not found (set CAPDEX_EVAL_DIR): %v", set, err)
	}
	defer f.Close()
	caps, err := registry.ImportWith(f, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval",
		ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}}})
	if err != nil {
		b.Fatal(err)
	}
	qf, err := os.Open(filepath.Join(dir, set, "queries.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer qf.Close()
	var queries []string
	sc := bufio.NewScanner(qf)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct{ Query string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			b.Fatal(err)
		}
		queries = append(queries, q.Query)
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return caps, queries
}
