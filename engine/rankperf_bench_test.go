package engine

import (
	"context"
	"testing"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/registry"
)

// BenchmarkRankStage times the rank stage alone (searchCtx.rank: candidates, availability,
// fusion, rerank, resolution, diversification, the response) over searches whose evidence
// was gathered beforehand: at most 300 queries of each set of BenchmarkStages, each ranked as
// the final ranking of a fresh search. Being one goroutine without actors, it is also the
// benchmark to count instructions of (valgrind --tool=callgrind
// --toggle-collect='github.com/capdex/capdex/engine.(*searchCtx).rank').
func BenchmarkRankStage(b *testing.B) { runStageSets(b, benchRankStage) }

func benchRankStage(b *testing.B, caps []*registry.Capability, queries []string) {
	e, rc := openStageEngine(b, caps)
	if len(queries) > 300 {
		queries = queries[:300]
	}
	ctx := context.Background()
	type search struct {
		sc *searchCtx
		g  *actors.Gathered
	}
	all := make([]search, len(queries))
	cands := 0
	for i, q := range queries {
		req, r := registry.SearchRequest{Query: q}, rc
		job, sc, err := e.prepare(ctx, &req, &r, false)
		if err != nil {
			b.Fatal(err)
		}
		g := &actors.Gathered{Planned: job.Plan, Final: true}
		for _, st := range job.Plan {
			hits, err := job.Retrieve(ctx, st.Kind, job.Query, job.Allow, st.Limit)
			if err != nil {
				b.Fatal(err)
			}
			g.Evidence = append(g.Evidence, actors.Evidence{Kind: st.Kind, Hits: hits})
		}
		all[i] = search{sc, g}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s := all[i%len(all)]
		i++
		s.sc.visible, s.sc.packs = nil, nil // as a fresh search has them
		cands += s.sc.rank(s.g).SearchMeta.CandidateCount
		s.sc.release()
	}
	b.ReportMetric(float64(cands)/float64(i), "candidates/op")
}
