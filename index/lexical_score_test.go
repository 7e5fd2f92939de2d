package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// lexReference scores terms exhaustively as scoreLexical promises to: each document's score
// is the sum of its terms' contributions (contrib), in any order; the best limit are kept,
// best first, the lower docID first at equal scores.
func lexReference(terms []lterm, bits []uint64, n, limit int) []lcand {
	acc := make([]lcand, n)
	for i := range terms {
		t := &terms[i]
		for p, d := range t.docs {
			if has(bits, d) {
				acc[d].score += t.contrib(p)
				acc[d].mask |= t.flag | uint32(t.masks[p])
			}
		}
	}
	var out []lcand
	for d, c := range acc {
		if c.score > 0 {
			out = append(out, lcand{doc: uint32(d), score: c.score, mask: c.mask})
		}
	}
	slices.SortFunc(out, func(a, b lcand) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return int(a.doc) - int(b.doc)
	})
	return out[:min(len(out), limit)]
}

// randomLexTerms makes a query of random lexical terms over n documents: lists of every
// length from a few postings to most of the documents, impacts with many ties, weights like
// a query term's and a concept's, bounded as lexQuery bounds them.
func randomLexTerms(r *rand.Rand, n int) []lterm {
	terms := make([]lterm, 1+r.IntN(12))
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
		t := lterm{w: 0.1 + 4*r.Float32()}
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
	}
	boundLexTerms(terms)
	return terms
}

// boundLexTerms sets the scale and the bounds of terms as lexQuery does.
func boundLexTerms(terms []lterm) {
	scale := lexScale(termsWeight(terms), float32(DefaultLexicalParams().K1)+1)
	for i := range terms {
		t := &terms[i]
		t.scale = scale
		t.max = slices.Max(append(t.imps, 0))
		t.ub = uint32(float32(t.w*t.max) * scale)
	}
}

// TestScoreLexicalMatchesReference checks MaxScore against exhaustive scoring (docs,
// scores, masks, order) on random terms, including a strong short list before long weak
// ones (which phase 2 probes by galloping), with and without an allow bitset; that the
// answer is the same with looser bounds and with the terms in another order (what a
// generation whose bounds or term ids differ from a full build's relies on); and that every
// accumulator is left zero for the next query on the same scratch.
func TestScoreLexicalMatchesReference(t *testing.T) {
	const n = 3000
	r := rand.New(rand.NewPCG(3, 7))
	s := new(scratch)
	check := func(name string, terms []lterm, bits []uint64) {
		t.Helper()
		for _, limit := range []int{1, 3, 10, 50, n + 1} {
			want := lexReference(terms, bits, n, limit)
			s.lterms = append(s.lterms[:0], terms...)
			got := slices.Clone(scoreLexical(s, bits, n, limit))
			if !slices.Equal(got, want) {
				t.Fatalf("%s limit %d:\n got %v\nwant %v", name, limit, got, want)
			}
			if i := slices.IndexFunc(s.lacc, func(a lexAcc) bool { return a != lexAcc{} }); i >= 0 {
				t.Fatalf("%s limit %d: accumulator %d left %v", name, limit, i, s.lacc[i])
			}
			// looser bounds, terms shuffled
			s.lterms = append(s.lterms[:0], terms...)
			for i := range s.lterms {
				if r.IntN(2) == 0 {
					s.lterms[i].ub += s.lterms[i].ub / uint32(2+r.IntN(50))
				}
			}
			r.Shuffle(len(s.lterms), func(i, j int) { s.lterms[i], s.lterms[j] = s.lterms[j], s.lterms[i] })
			if got := scoreLexical(s, bits, n, limit); !slices.Equal(got, want) {
				t.Fatalf("%s limit %d, looser bounds, shuffled:\n got %v\nwant %v", name, limit, got, want)
			}
		}
	}
	sparse := make([]uint64, (n+63)/64)
	for d := range n {
		if r.IntN(3) > 0 {
			sparse[d/64] |= 1 << (d % 64)
		}
	}
	for q := range 200 {
		terms := randomLexTerms(r, n)
		check("random", terms, nil)
		if q%3 == 0 {
			check("random allowed", terms, sparse)
		}
	}
	// a few strong documents, then lists far longer than what phase 1 touched
	for range 20 {
		strong := lterm{w: 10}
		for range 40 {
			strong.docs = append(strong.docs, uint32(r.IntN(n)))
		}
		slices.Sort(strong.docs)
		strong.docs = slices.Compact(strong.docs)
		for range strong.docs {
			strong.imps = append(strong.imps, 0.5+r.Float32()/2)
			strong.masks = append(strong.masks, 1)
		}
		terms := append([]lterm{strong}, randomLexTerms(r, n)...)
		for i := 1; i < len(terms); i++ {
			terms[i].w *= 0.01
		}
		boundLexTerms(terms)
		check("strong first", terms, nil)
		check("strong first allowed", terms, sparse)
	}
}

// TestScoreLexicalPhase2SkipsUntouched puts the bound of the terms left after phase 1 one
// below kth, where an untouched document must not be scored in phase 2 (it would be
// scored outside the touched list, so never cleared nor considered).
func TestScoreLexicalPhase2SkipsUntouched(t *testing.T) {
	const n, limit = 200, 10
	strong := lterm{w: 1, scale: 1 << 20}
	for d := range 60 {
		strong.docs = append(strong.docs, uint32(d))
		strong.imps = append(strong.imps, 2)
		strong.masks = append(strong.masks, 1)
	}
	c := strong.contrib(0)
	strong.ub = c
	acc := make([]lexAcc, n)
	for _, d := range strong.docs {
		acc[d].score = c
	}
	kth := lexKthBound(acc, strong.docs, limit, c)
	if kth == 0 || kth > c {
		t.Fatalf("kth bound %v of 60 scores of %v", kth, c)
	}
	weak := lterm{docs: []uint32{150, 151}, imps: []float32{1, 1}, masks: []uint16{2, 2}, w: 1e-6, scale: 1 << 20, ub: kth - 1}
	s := new(scratch)
	s.lterms = []lterm{strong, weak}
	got := slices.Clone(scoreLexical(s, nil, n, limit))
	if want := lexReference(s.lterms, nil, n, limit); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if i := slices.IndexFunc(s.lacc, func(a lexAcc) bool { return a != lexAcc{} }); i >= 0 {
		t.Fatalf("accumulator %d left %v", i, s.lacc[i])
	}
}
