package rank

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/capdex/capdex/registry"
)

// benchCands returns n candidates over synthetic capabilities in 10 packs, each with
// evidence from 2-5 retrievers, and the term cache of their capabilities.
func benchCands(tb testing.TB, n int) ([]Candidate, *TermCache) {
	tb.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	intents := []string{"diagnose", "update", "delete", "list", "create", "repair"}
	ses := []registry.SideEffect{registry.SideEffectRead, registry.SideEffectWriteLocal, registry.SideEffectWriteShared, registry.SideEffectImpact}
	risks := []registry.RiskLevel{registry.RiskLow, registry.RiskMedium, registry.RiskHigh}
	caps := make([]*registry.Capability, n)
	for i := range caps {
		caps[i] = &registry.Capability{
			ID: fmt.Sprintf("pack%d.cap%03d", i%10, i), ResourceType: registry.TypeAction,
			Intents:      []string{intents[r.IntN(len(intents))], intents[r.IntN(len(intents))]},
			Entities:     []string{"codex", fmt.Sprintf("ent%d", i%7), "npm"},
			Symptoms:     []string{fmt.Sprintf("sym%d", i%5)},
			WhenToUse:    []string{"更新后实际运行版本仍然较旧", "type -a codex 显示多个路径"},
			WhenNotToUse: []string{"用户已经明确要求回滚"},
			SideEffect:   ses[r.IntN(len(ses))], RiskLevel: risks[r.IntN(len(risks))],
		}
	}
	tc := NewTermCache(caps, simpleAnalyze)
	retrievers := []string{Exact, Lexical, Semantic, Metadata, Hierarchy, History}
	cands := make([]Candidate, n)
	for i := range cands {
		k := 2 + r.IntN(4)
		ev := make([]Source, 0, k)
		for _, j := range r.Perm(len(retrievers))[:k] {
			ev = append(ev, Source{Retriever: retrievers[j], Rank: 1 + r.IntN(n), Raw: r.Float64()})
		}
		cands[i] = Candidate{Doc: uint32(i), Cap: caps[i], Evidence: ev, Availability: registry.Available}
	}
	return cands, tc
}

// BenchmarkPipeline runs Fuse, Rerank, Resolve and Diversify over 50 candidates: "fresh"
// candidates as a new search builds them (no reusable slices), "reused" as a streamed
// update re-ranks the same candidates.
func BenchmarkPipeline(b *testing.B) {
	src, tc := benchCands(b, 50)
	sig := Signals{
		Intents: []string{"diagnose", "inspect"}, Entities: []string{"codex"}, Symptoms: []string{"sym1"},
		Forbidden: []string{"update", "upgrade"}, Constraints: []string{"read_first"},
		Terms: simpleAnalyze("先检查原因 不要直接更新 codex 版本"),
	}
	opts := DefaultRerankOptions()
	opts.Terms = tc
	w, th, dopts := DefaultWeights(), DefaultThresholds(), DefaultDiversifyOptions()
	run := func(cs []Candidate) {
		Fuse(cs, w)
		Rerank(cs, sig, opts)
		res, _, _ := Resolve(cs, sig, th)
		dopts.Ambiguous = res == registry.Ambiguous
		Diversify(cs, 5, dopts)
	}
	b.Run("candidates=50/fresh", func(b *testing.B) {
		work := make([]Candidate, len(src))
		b.ReportAllocs()
		for b.Loop() {
			copy(work, src)
			run(work)
		}
	})
	b.Run("candidates=50/reused", func(b *testing.B) {
		work := make([]Candidate, len(src))
		copy(work, src)
		run(work)
		b.ReportAllocs()
		for b.Loop() {
			run(work)
		}
	})
}
