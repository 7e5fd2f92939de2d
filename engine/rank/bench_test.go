package rank

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/index/text"
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

// BenchmarkSearchRank runs the ranking stage as a search over a generated catalogue of 10k
// capabilities runs it: Fuse, Rerank, Resolve and Diversify (limit 10, no breakdown) over ~120
// candidates drawn from the whole catalogue, with a TermCache of real analysed text (aliases,
// when_to_use and when_not_to_use entries). It cycles through 64 searches, so the
// candidates' records are mostly out of cache, as they are after the retrievers ran.
func BenchmarkSearchRank(b *testing.B) {
	const n, searches = 10_000, 64
	caps := testcat.GenerateCatalog(n, 3)
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		b.Fatal(err)
	}
	analyze := func(s string) []string {
		out := text.Analyze(s)
		for _, c := range text.ConceptsIn(s) {
			out = append(out, "~"+c)
		}
		return out
	}
	tc := NewTermCache(snap.Caps, analyze)
	r := rand.New(rand.NewPCG(3, 3))
	retrievers := []string{Exact, Lexical, Semantic, Metadata, Hierarchy, History}
	type search struct {
		cands []Candidate
		sig   Signals
	}
	all := make([]search, searches)
	for i := range all {
		target := snap.Caps[r.IntN(n)]
		q := target.Title
		if len(target.WhenToUse) > 0 {
			q = target.WhenToUse[0]
		}
		terms := analyze(q)
		slices.Sort(terms)
		s := search{sig: Signals{Terms: slices.Compact(terms), Phrase: PhraseKey(q), Intents: target.Intents, Entities: target.Entities}}
		seen := map[uint32]bool{}
		for len(s.cands) < 100+r.IntN(40) {
			d := uint32(r.IntN(n))
			if len(s.cands) == 0 {
				d, _ = snap.DocID(target.ID)
			}
			if seen[d] {
				continue
			}
			seen[d] = true
			var ev []Source
			for _, j := range r.Perm(len(retrievers))[:1+r.IntN(3)] {
				ev = append(ev, Source{Retriever: retrievers[j], Rank: 1 + r.IntN(50), Raw: r.Float64() * 20})
			}
			s.cands = append(s.cands, Candidate{Doc: d, Cap: snap.Caps[d], Evidence: ev})
		}
		all[i] = s
	}
	for _, breakdown := range []bool{false, true} {
		b.Run(fmt.Sprintf("catalog=10k/breakdown=%v", breakdown), func(b *testing.B) {
			w, th := DefaultWeights(), DefaultThresholds()
			opts, dopts := DefaultRerankOptions(), DefaultDiversifyOptions()
			opts.Terms = tc
			w.NoBreakdown, opts.NoBreakdown, dopts.NoBreakdown = !breakdown, !breakdown, !breakdown
			var work []Candidate
			cands := 0
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s := &all[i%searches]
				i++
				work = append(work[:0], s.cands...)
				cands += len(work)
				Fuse(work, w)
				Rerank(work, s.sig, opts)
				res, _, _ := Resolve(work, s.sig, th)
				dopts.Ambiguous = res == registry.Ambiguous
				Diversify(work, 10, dopts)
			}
			b.ReportMetric(float64(cands)/float64(i), "candidates/op")
		})
	}
}
