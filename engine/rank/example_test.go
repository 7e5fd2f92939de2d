package rank_test

import (
	"fmt"

	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
)

func ExampleFuse() {
	diagnose := &registry.Capability{ID: "maintenance.codex.diagnose", ResourceType: registry.TypeAction,
		Intents: []string{"diagnose"}, SideEffect: registry.SideEffectRead, RiskLevel: registry.RiskLow}
	update := &registry.Capability{ID: "maintenance.codex.update", ResourceType: registry.TypeAction,
		Intents: []string{"update"}, SideEffect: registry.SideEffectWriteLocal, RiskLevel: registry.RiskMedium}
	// Lexical ranks update first by a wide margin of BM25; semantic barely separates them.
	cands := []rank.Candidate{
		{Cap: update, Evidence: []rank.Source{{Retriever: rank.Lexical, Rank: 1, Raw: 40}, {Retriever: rank.Semantic, Rank: 1, Raw: 0.45}}},
		{Cap: diagnose, Evidence: []rank.Source{{Retriever: rank.Lexical, Rank: 2, Raw: 30}, {Retriever: rank.Semantic, Rank: 2, Raw: 0.44}}},
	}
	rank.Fuse(cands, rank.DefaultWeights())
	for _, c := range cands {
		fmt.Printf("fused %-28s %.4f\n", c.Cap.ID, c.Score)
	}
	// "先检查原因，不要直接更新": diagnose wanted, update forbidden.
	rank.Rerank(cands, rank.Signals{Intents: []string{"diagnose"}, Forbidden: []string{"update"},
		Constraints: []string{"read_first"}}, rank.DefaultRerankOptions())
	for _, c := range cands {
		fmt.Printf("final %-28s %.4f %v\n", c.Cap.ID, c.Score, c.Breakdown[len(c.Breakdown)-1])
	}
	// Output:
	// fused maintenance.codex.update     0.0262
	// fused maintenance.codex.diagnose   0.0212
	// final maintenance.codex.diagnose   0.0272 {intent 0.006}
	// final maintenance.codex.update     -0.0618 {forbidden_intent -0.08}
}
