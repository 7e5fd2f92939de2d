package rank

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

func TestRetrieverIndex(t *testing.T) {
	w := Weights{Exact: 1, Lexical: 2, Semantic: 3, Metadata: 4, Hierarchy: 5, History: 6}
	byIndex := w.byIndex()
	for _, name := range []string{Exact, Lexical, Semantic, Metadata, Hierarchy, History,
		"", "exacT", "Exact", "lexicax", "hxstory", "semantiq", "metadatx", "hierarchx", "xistory", "mistory", "rrf.exact", "sparse"} {
		x := retrieverIndex(name)
		switch {
		case w.Of(name) == 0 && x != -1:
			t.Errorf("%q: index %d for an unknown retriever", name, x)
		case w.Of(name) != 0 && (x < 0 || byIndex[x] != w.Of(name) || rrfNames[x] != "rrf."+name):
			t.Errorf("%q: index %d", name, x)
		}
	}
}

// fuseReference is Fuse as it was written first (retrievers compared by name, each
// evidence checked against all the others): the reference Fuse must reproduce bit for bit.
func fuseReference(cands []Candidate, w Weights) {
	k := w.K
	if k <= 0 {
		k = 60
	}
	alpha := min(max(w.ScoreShare, 0), 1)
	type listRange struct {
		top, floor float64
		seen       bool
	}
	ranges := map[string]*listRange{}
	if alpha > 0 {
		for i := range cands {
			for _, e := range cands[i].Evidence {
				if !slices.Contains([]string{Exact, Lexical, Semantic, Metadata, Hierarchy, History}, e.Retriever) || e.Rank < 1 {
					continue
				}
				r := ranges[e.Retriever]
				if r == nil {
					r = &listRange{}
					ranges[e.Retriever] = r
				}
				if !r.seen || e.Raw > r.top {
					r.top = e.Raw
				}
				if !r.seen || e.Floor > r.floor {
					r.floor = e.Floor
				}
				r.seen = true
			}
		}
		// history's strengths are absolute: its list is scaled against 1
		if r := ranges[History]; r != nil {
			r.top, r.floor = max(r.top, 1), 0
		}
	}
	shadowed := func(ev []Source, j int) bool {
		e := &ev[j]
		for i := range ev {
			o := &ev[i]
			if i != j && o.Rank >= 1 && o.Retriever == e.Retriever && (o.Rank < e.Rank || o.Rank == e.Rank && i < j) {
				return true
			}
		}
		return false
	}
	// the components are named by the fusion method
	prefix := "mixed."
	switch alpha {
	case 0:
		prefix = "rrf."
	case 1:
		prefix = "score."
	}
	for i := range cands {
		c := &cands[i]
		c.Breakdown = nil
		sum := 0.0
		for j, e := range c.Evidence {
			wt := w.Of(e.Retriever)
			if e.Rank < 1 || wt == 0 || shadowed(c.Evidence, j) {
				continue
			}
			v := wt / (k + float64(e.Rank))
			if r := ranges[e.Retriever]; alpha > 0 && r != nil && r.top > r.floor {
				norm := min(max((e.Raw-r.floor)/(r.top-r.floor), 0), 1)
				v = (1-alpha)*v + alpha*wt*norm/(k+1)
			}
			sum += v
			if !w.NoBreakdown {
				c.Breakdown = append(c.Breakdown, registry.ScoreComponent{Name: prefix + e.Retriever, Value: v})
			}
		}
		c.Fused, c.Score = sum, sum
	}
	slices.SortStableFunc(cands, func(a, b Candidate) int { return less(&a, &b) })
}

// TestFuseReference compares Fuse with fuseReference on random evidence: repeated
// retrievers, ties, ranks below 1, unknown retrievers, weights of 0, cut lists; and checks
// that Unsorted changes nothing but the order, and nothing at all once Rerank has run.
func TestFuseReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{Exact, Lexical, Semantic, Metadata, Hierarchy, History, "bogus", "lexicon"}
	caps := codexCaps(t)
	var capList []*registry.Capability
	for _, c := range caps {
		capList = append(capList, c)
	}
	slices.SortFunc(capList, func(a, b *registry.Capability) int { return strings.Compare(a.ID, b.ID) })
	for round := range 300 {
		w := DefaultWeights()
		if round%3 == 1 {
			w.ScoreShare, w.Semantic = 0.4, 0
		}
		if round%5 == 2 {
			w.ScoreShare, w.K = 0, 0
		}
		w.NoBreakdown = round%2 == 0
		var cands []Candidate
		for i, c := range capList[:1+r.IntN(len(capList))] {
			var ev []Source
			for range r.IntN(6) {
				ev = append(ev, Source{Retriever: names[r.IntN(len(names))], Rank: r.IntN(8) - 1,
					Raw: math.Round(r.Float64()*8) / 2, Floor: float64(r.IntN(2))})
			}
			cands = append(cands, Candidate{Doc: uint32(i), Cap: c, Evidence: ev})
		}
		want := slices.Clone(cands)
		fuseReference(want, w)
		got := slices.Clone(cands)
		Fuse(got, w)
		unsorted := slices.Clone(cands)
		wu := w
		wu.Unsorted = true
		Fuse(unsorted, wu)
		for i := range want {
			if got[i].Cap != want[i].Cap || math.Float64bits(got[i].Score) != math.Float64bits(want[i].Score) ||
				!slices.Equal(got[i].Breakdown, want[i].Breakdown) && (len(got[i].Breakdown) > 0 || len(want[i].Breakdown) > 0) {
				t.Fatalf("round %d, #%d: %s %v %v, want %s %v %v", round, i, got[i].Cap.ID, got[i].Score, got[i].Breakdown,
					want[i].Cap.ID, want[i].Score, want[i].Breakdown)
			}
			if u := &unsorted[i]; u.Cap != cands[i].Cap {
				t.Fatalf("round %d: Unsorted moved %s", round, u.Cap.ID)
			}
		}
		opts := DefaultRerankOptions()
		opts.NoBreakdown = w.NoBreakdown
		sig := readFirstSignals()
		Rerank(got, sig, opts)
		Rerank(unsorted, sig, opts)
		for i := range got {
			if got[i].Cap != unsorted[i].Cap || math.Float64bits(got[i].Score) != math.Float64bits(unsorted[i].Score) ||
				!slices.Equal(got[i].Breakdown, unsorted[i].Breakdown) {
				t.Fatalf("round %d, #%d: reranked after an unsorted Fuse: %s %v, want %s %v", round, i,
					unsorted[i].Cap.ID, unsorted[i].Score, got[i].Cap.ID, got[i].Score)
			}
		}
	}
}
