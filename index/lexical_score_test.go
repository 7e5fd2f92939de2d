package index

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// lexReference scores terms exhaustively as scoreLexical promises to: each document's score
// is the float32 sum of its terms' contributions, strongest term (by upper bound) first,
// ties in the order given; the best limit are kept, best first.
func lexReference(terms []qterm, bits []uint64, n, limit int) []cand {
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(terms[b].ub, terms[a].ub) })
	acc := make([]cand, n)
	for _, i := range order {
		t := &terms[i]
		for p, d := range t.docs {
			if has(bits, d) {
				acc[d].score += t.w * t.imps[p]
				acc[d].mask |= t.flag | uint32(t.masks[p])
			}
		}
	}
	var out []cand
	for d, c := range acc {
		if c.score > 0 {
			out = append(out, cand{doc: uint32(d), score: c.score, mask: c.mask})
		}
	}
	slices.SortFunc(out, func(a, b cand) int {
		if worse(b, a) {
			return -1
		}
		if worse(a, b) {
			return 1
		}
		return 0
	})
	return out[:min(len(out), limit)]
}

// randomLexTerms makes a query of random lexical terms over n documents: lists of every
// length from a few postings to most of the documents, impacts with many ties, weights like
// a query term's and a concept's.
func randomLexTerms(r *rand.Rand, n int) []qterm {
	terms := make([]qterm, 1+r.IntN(12))
	for i := range terms {
		var size int
		switch r.IntN(3) {
		case 0:
			size = 1 + r.IntN(20)
		case 1:
			size = 50 + r.IntN(500)
		default:
			size = n/2 + r.IntN(n/2)
		}
		t := qterm{w: 0.1 + 4*r.Float32()}
		if r.IntN(3) == 0 {
			t.w *= conceptWeight
			t.flag = maskConcept
		}
		for d := range n {
			if r.IntN(n) < size {
				t.docs = append(t.docs, uint32(d))
				imp := float32(1+r.IntN(8)) / 4 // ties
				if r.IntN(2) == 0 {
					imp = 0.01 + 2*r.Float32()
				}
				t.imps = append(t.imps, imp)
				t.masks = append(t.masks, uint16(1+r.IntN(1<<numFields-1)))
			}
		}
		terms[i] = t
		terms[i].ub = lexBound(&t)
	}
	return terms
}

// lexBound is t's upper bound as lexTerm computes it: the weight times the greatest impact.
func lexBound(t *qterm) float32 { return t.w * slices.Max(append(t.imps, 0)) }

// TestScoreLexicalMatchesReference checks MaxScore against exhaustive scoring bit for bit
// (docs, scores, masks, order) on random terms, including a strong short list before long
// weak ones (which phase 2 probes by galloping), with and without an allow bitset, and that
// every accumulator is left zero for the next query on the same scratch.
func TestScoreLexicalMatchesReference(t *testing.T) {
	const n = 3000
	r := rand.New(rand.NewPCG(3, 7))
	s := new(scratch)
	check := func(name string, terms []qterm, bits []uint64) {
		t.Helper()
		for _, limit := range []int{1, 3, 10, 50, n + 1} {
			want := lexReference(terms, bits, n, limit)
			s.terms = append(s.terms[:0], terms...)
			got := slices.Clone(scoreLexical(s, bits, n, limit))
			if !slices.Equal(got, want) {
				t.Fatalf("%s limit %d:\n got %v\nwant %v", name, limit, got, want)
			}
			if i := slices.IndexFunc(s.lacc, func(a lexAcc) bool { return a != lexAcc{} }); i >= 0 {
				t.Fatalf("%s limit %d: accumulator %d left %v", name, limit, i, s.lacc[i])
			}
		}
	}
	sparse := make([]uint64, (n+63)/64)
	for d := range n {
		if r.IntN(3) > 0 {
			sparse[d/64] |= 1 << (d % 64)
		}
	}
	for q := range 300 {
		terms := randomLexTerms(r, n)
		check("random", terms, nil)
		if q%3 == 0 {
			check("random allowed", terms, sparse)
		}
	}
	// a few strong documents, then lists far longer than what phase 1 touched
	for range 20 {
		strong := qterm{w: 10, ub: 10}
		for range 40 {
			strong.docs = append(strong.docs, uint32(r.IntN(n)))
		}
		slices.Sort(strong.docs)
		strong.docs = slices.Compact(strong.docs)
		for range strong.docs {
			strong.imps = append(strong.imps, 0.5+r.Float32()/2)
			strong.masks = append(strong.masks, 1)
		}
		terms := append([]qterm{strong}, randomLexTerms(r, n)...)
		for i := 1; i < len(terms); i++ {
			terms[i].w *= 0.01
			terms[i].ub = lexBound(&terms[i])
		}
		check("strong first", terms, nil)
		check("strong first allowed", terms, sparse)
	}
}

// TestScoreLexicalPhase2SkipsUntouched puts the bound of the terms left after phase 1
// between floor and kth (see pruneSlack), where an untouched document would pass phase 2's
// check and be scored outside the touched list (so never cleared nor considered).
func TestScoreLexicalPhase2SkipsUntouched(t *testing.T) {
	const n, limit = 200, 10
	strong := qterm{w: 1, ub: 2}
	for d := range 60 {
		strong.docs = append(strong.docs, uint32(d))
		strong.imps = append(strong.imps, 2)
		strong.masks = append(strong.masks, 1)
	}
	acc := make([]lexAcc, n)
	for _, d := range strong.docs {
		acc[d].score = 2
	}
	kth := lexKthBound(acc, strong.docs, limit, 2)
	if kth <= 0 || kth > 2 {
		t.Fatalf("kth bound %v of 60 scores of 2", kth)
	}
	// the weak term's bound, as scoreLexical inflates it, just below kth
	w := kth * (1 - 0x1p-18) / boundSlack
	for w*boundSlack >= kth {
		w = math.Nextafter32(w, 0)
	}
	if w*boundSlack < kth*pruneSlack {
		t.Fatalf("weak bound %v not within [%v, %v)", w*boundSlack, kth*pruneSlack, kth)
	}
	weak := qterm{docs: []uint32{150, 151}, imps: []float32{1, 1}, masks: []uint16{2, 2}, w: w, ub: w}
	s := new(scratch)
	s.terms = []qterm{strong, weak}
	got := slices.Clone(scoreLexical(s, nil, n, limit))
	if want := lexReference(s.terms, nil, n, limit); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if i := slices.IndexFunc(s.lacc, func(a lexAcc) bool { return a != lexAcc{} }); i >= 0 {
		t.Fatalf("accumulator %d left %v", i, s.lacc[i])
	}
}
