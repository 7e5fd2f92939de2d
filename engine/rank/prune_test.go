package rank

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/capdex/capdex/registry"
)

// TestPruneEqualsFull checks that a pruned Rerank (RerankOptions.Prune) gives what a full
// one gives, on random candidate sets of generated and built-in catalogues under random
// signals: the same resolution, reason and missing information; the same list from
// Diversify, for every limit, candidate by candidate (score to the last bit, fused score,
// breakdown, matched values, coverage, availability); the same calibration sample; and,
// after Complete, the same candidates in the same order. It also checks that pruning left
// candidates pending often enough to prove something.
func TestPruneEqualsFull(t *testing.T) {
	// Two seeds: the first one alone missed a top candidate that no usable one follows
	// within the pruned head, whose Coverage the pruned ranking left unset.
	for _, seed := range []uint64{11, 1} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { pruneEqualsFull(t, rand.New(rand.NewPCG(seed, 12))) })
	}
}

func pruneEqualsFull(t *testing.T, r *rand.Rand) {
	avails := []registry.Availability{"", registry.Available, registry.NeedsConfirmation, registry.MissingCredentials,
		registry.Forbidden, registry.Unavailable, registry.Incompatible}
	retrievers := []string{Exact, Lexical, Semantic, Metadata, Hierarchy, History}
	for name, snap := range recordCatalogues(t, 5) {
		t.Run(name, func(t *testing.T) {
			tc := NewTermCache(snap.Caps, simpleAnalyze)
			caps := snap.Caps
			pick := func(k int, n int) []string {
				var out []string
				for range r.IntN(n + 1) {
					c := caps[r.IntN(len(caps))]
					list := haves(c)[k]
					if len(list) > 0 {
						out = append(out, list[r.IntN(len(list))])
					}
				}
				return out
			}
			pending, searches := 0, 0
			for it := range 400 {
				target := caps[r.IntN(len(caps))]
				text := target.Title + " " + target.Summary
				if len(target.WhenToUse) > 0 && r.IntN(2) == 0 {
					text = target.WhenToUse[0]
				}
				if len(target.Aliases) > 0 && r.IntN(3) == 0 {
					text += " " + target.Aliases[r.IntN(len(target.Aliases))]
				}
				terms := simpleAnalyze(text)
				slices.Sort(terms)
				s := Signals{Terms: slices.Compact(terms), Phrase: PhraseKey(text),
					Intents: pick(valueIntent, 3), Entities: pick(valueEntity, 3), Symptoms: pick(valueSymptom, 2),
					ExplicitWrite: r.IntN(5) == 0, Browse: r.IntN(8) == 0, HowTo: r.IntN(6) == 0, Vague: r.IntN(10) == 0}
				if r.IntN(4) == 0 {
					s.Forbidden = pick(valueIntent, 2)
				}
				if r.IntN(4) == 0 {
					s.Constraints = []string{"read_first"}
				}
				if r.IntN(5) == 0 {
					s.Scope = registry.Parent(caps[r.IntN(len(caps))].ID)
				}
				if r.IntN(10) == 0 {
					s.IDs = []string{target.ID}
				}
				var cands []Candidate
				seen := map[int]bool{}
				n := 1 + r.IntN(140)
				for len(cands) < n && len(seen) < len(caps) {
					d := r.IntN(len(caps))
					if it%3 == 0 && len(cands) == 0 {
						td, _ := snap.DocID(target.ID)
						d = int(td)
					}
					if seen[d] {
						continue
					}
					seen[d] = true
					var ev []Source
					for _, j := range r.Perm(len(retrievers))[:1+r.IntN(3)] {
						raw := r.Float64() * 20
						if r.IntN(4) == 0 {
							raw = math.Round(raw) // ties
						}
						ev = append(ev, Source{Retriever: retrievers[j], Rank: 1 + r.IntN(50), Raw: raw})
					}
					cands = append(cands, Candidate{Doc: uint32(d), Cap: caps[d], Evidence: ev, Availability: avails[r.IntN(len(avails))]})
				}
				full := slices.Clone(cands)
				w := DefaultWeights()
				w.Unsorted = r.IntN(2) == 0
				opts := DefaultRerankOptions()
				opts.Terms = tc
				opts.NoBreakdown = r.IntN(2) == 0
				w.NoBreakdown = opts.NoBreakdown
				Fuse(full, w)
				opts.Prune = 0
				Rerank(full, s, opts)
				prune := []int{1, 2, 5, 12, 30}[r.IntN(5)]
				th := DefaultThresholds()
				if r.IntN(3) == 0 {
					th.Margin = 0.003 // wider groups of runners-up
				}
				for limit := 1; limit <= 10; limit += 1 + r.IntN(4) {
					searches++
					a, b := clone(full), clone(cands)
					Fuse(b, w)
					opts.Prune = prune
					Rerank(b, s, opts)
					if b[0].lazy != nil {
						pending++
					}
					if it%7 == 0 { // a calibration sample completes the ranking
						if x, y := SampleOf(a, s, "confident"), SampleOf(b, s, "confident"); x != y {
							t.Fatalf("sample %+v, pruned %+v", x, y)
						}
					}
					c := clone(full)
					d := clone(cands) // pruned like b, resolved by ResolveConfidence
					Fuse(d, w)
					Rerank(d, s, opts)
					resA, reasonA, missA := Resolve(a, s, th)
					resB, reasonB, missB := Resolve(b, s, th)
					if resA != resB || reasonA != reasonB || !slices.Equal(missA, missB) {
						t.Fatalf("prune %d: resolve %s %s %q, pruned %s %s %q", prune, resA, reasonA, missA, resB, reasonB, missB)
					}
					// ResolveConfidence is Resolve then Confidence, reading the model once
					resC, reasonC, missC, confC := ResolveConfidence(c, s, th)
					if confA := Confidence(a, s, th); resC != resA || reasonC != reasonA || !slices.Equal(missC, missA) || confC != confA {
						t.Fatalf("ResolveConfidence %s %s %q %v, Resolve and Confidence %s %s %q %v", resC, reasonC, missC, confC, resA, reasonA, missA, confA)
					}
					if resD, reasonD, missD, confD := ResolveConfidence(d, s, th); resD != resB || reasonD != reasonB || !slices.Equal(missD, missB) || confD != Confidence(b, s, th) {
						t.Fatalf("pruned ResolveConfidence %s %s %q %v, Resolve %s %s %q", resD, reasonD, missD, confD, resB, reasonB, missB)
					}
					do := DefaultDiversifyOptions()
					do.Ambiguous = resA == registry.Ambiguous
					do.ExplicitWrite = s.ExplicitWrite
					do.NoBreakdown = opts.NoBreakdown
					topA, topB := Diversify(a, limit, do), Diversify(b, limit, do)
					if err := sameCands(topA, topB); err != nil {
						t.Fatalf("prune %d, limit %d, %s: %v", prune, limit, resA, err)
					}
				}
				c := clone(cands)
				Fuse(c, w)
				opts.Prune = prune
				Rerank(c, s, opts)
				Complete(c)
				if err := sameCands(full, c); err != nil {
					t.Fatalf("prune %d, completed: %v", prune, err)
				}
				if c[0].lazy != nil {
					t.Fatal("Complete left the ranking pending")
				}
				// ranked again without Fuse, pruned then not, and the other way round
				for _, again := range [][2]int{{prune, 0}, {0, prune}, {prune, prune}} {
					d := clone(cands)
					Fuse(d, w)
					opts.Prune = again[0]
					Rerank(d, s, opts)
					opts.Prune = again[1]
					Rerank(d, s, opts)
					Complete(d)
					if err := sameCands(full, d); err != nil {
						t.Fatalf("prune %v, ranked twice: %v", again, err)
					}
				}
			}
			if pending < searches/4 {
				t.Fatalf("pending rankings in %d searches of %d only: the comparison proves little", pending, searches)
			}
		})
	}
}

// clone copies candidates with their own breakdowns and matched values.
func clone(cands []Candidate) []Candidate {
	out := slices.Clone(cands)
	for i := range out {
		c := &out[i]
		c.Breakdown = slices.Clone(c.Breakdown)
		c.MatchedIntents, c.MatchedEntities, c.MatchedSymptoms = slices.Clone(c.MatchedIntents), slices.Clone(c.MatchedEntities), slices.Clone(c.MatchedSymptoms)
	}
	return out
}

// sameCands returns an error describing the first difference between a and b.
func sameCands(a, b []Candidate) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d candidates, pruned %d", len(a), len(b))
	}
	for i := range a {
		x, y := &a[i], &b[i]
		switch {
		case x.Doc != y.Doc:
			return fmt.Errorf("at %d: %s, pruned %s", i, x.Cap.ID, y.Cap.ID)
		case math.Float64bits(x.Score) != math.Float64bits(y.Score) || math.Float64bits(x.Fused) != math.Float64bits(y.Fused):
			return fmt.Errorf("%s: score %v fused %v, pruned %v %v", x.Cap.ID, x.Score, x.Fused, y.Score, y.Fused)
		case !slices.Equal(x.Breakdown, y.Breakdown):
			return fmt.Errorf("%s: breakdown %v, pruned %v", x.Cap.ID, x.Breakdown, y.Breakdown)
		case !slices.Equal(x.MatchedIntents, y.MatchedIntents) || !slices.Equal(x.MatchedEntities, y.MatchedEntities) ||
			!slices.Equal(x.MatchedSymptoms, y.MatchedSymptoms):
			return fmt.Errorf("%s: matched %q %q %q, pruned %q %q %q", x.Cap.ID, x.MatchedIntents, x.MatchedEntities,
				x.MatchedSymptoms, y.MatchedIntents, y.MatchedEntities, y.MatchedSymptoms)
		case math.Float64bits(x.Coverage) != math.Float64bits(y.Coverage):
			return fmt.Errorf("%s: coverage %v, pruned %v", x.Cap.ID, x.Coverage, y.Coverage)
		case x.Availability != y.Availability:
			return fmt.Errorf("%s: availability %s, pruned %s", x.Cap.ID, x.Availability, y.Availability)
		}
	}
	return nil
}
