package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// lexReference scores terms exhaustively as scoreLexical promises to: each document's score
// is the sum of its terms' contributions (contrib), in any order; the best limit are kept,
// best first, the lower docID first at equal scores.
func lexReference(z *lexNorms, terms []lterm, bits []uint64, n, limit int) []lcand {
	acc := make([]lcand, n)
	for i := range terms {
		t := &terms[i]
		for p := 0; p < len(t.docs); {
			d := t.docs[p]
			c, m, q := z.contrib(t, p)
			p = q
			if has(bits, d) {
				acc[d].score += c
				acc[d].mask |= m
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

// randomLexNorms makes the norms of n documents of random field lengths, some longer than
// the table of lexNorms.
func randomLexNorms(r *rand.Rand, n int) *lexNorms {
	flen := make([]uint16, n*numFields)
	for i := range flen {
		switch r.IntN(4) {
		case 0:
		case 1:
			flen[i] = uint16(1 + r.IntN(4))
		case 2:
			flen[i] = uint16(1 + r.IntN(40))
		default:
			flen[i] = uint16(1 + r.IntN(600))
		}
	}
	z := new(lexNorms)
	z.init(flen, DefaultLexicalParams())
	return z
}

// randomLexTerms makes a query of random lexical terms over n documents: lists of every
// length from a few documents to most of them, each document's entries one to three fields
// with small frequencies (many ties), weights like a query term's and a concept's, bounded
// as lexQuery bounds them (the greatest contribution).
func randomLexTerms(r *rand.Rand, z *lexNorms, n int) []lterm {
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
			if r.IntN(n) >= size {
				continue
			}
			f := r.IntN(numFields)
			for k := range 1 + r.IntN(3) {
				if f >= numFields {
					break
				}
				if k > 0 {
					t.ftf[len(t.ftf)-1] |= ftfMore
				}
				t.docs = append(t.docs, uint32(d))
				t.ftf = append(t.ftf, uint32(f)<<ftfField|uint32(1+r.IntN(3)))
				f += 1 + r.IntN(4)
			}
		}
		terms[i] = t
	}
	boundLexTerms(z, terms)
	return terms
}

// boundLexTerms sets the scale and the bounds of terms as lexQuery does.
func boundLexTerms(z *lexNorms, terms []lterm) {
	scale := lexScale(termsWeight(terms), z.kp1)
	for i := range terms {
		t := &terms[i]
		t.scale = scale
		t.ub = uint32(float64(float32(t.w*z.maxImpact(t.docs, t.ftf))*scale)*(1+0x1p-20)) + 2
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
	z := randomLexNorms(r, n)
	s := new(scratch)
	check := func(name string, terms []lterm, bits []uint64) {
		t.Helper()
		for _, limit := range []int{1, 3, 10, 50, n + 1} {
			want := lexReference(z, terms, bits, n, limit)
			s.lterms = append(s.lterms[:0], terms...)
			got := slices.Clone(scoreLexical(s, z, bits, n, limit))
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
			if got := scoreLexical(s, z, bits, n, limit); !slices.Equal(got, want) {
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
		terms := randomLexTerms(r, z, n)
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
			strong.ftf = append(strong.ftf, uint32(fTitle)<<ftfField|uint32(1+r.IntN(3)))
		}
		terms := append([]lterm{strong}, randomLexTerms(r, z, n)...)
		for i := 1; i < len(terms); i++ {
			terms[i].w *= 0.01
		}
		boundLexTerms(z, terms)
		check("strong first", terms, nil)
		check("strong first allowed", terms, sparse)
	}
}

// TestScoreLexicalPhase2SkipsUntouched puts the bound of the terms left after phase 1 one
// below kth, where an untouched document must not be scored in phase 2 (it would be
// scored outside the touched list, so never cleared nor considered).
func TestScoreLexicalPhase2SkipsUntouched(t *testing.T) {
	const n, limit = 200, 10
	z := new(lexNorms)
	flen := make([]uint16, n*numFields)
	for d := range n {
		flen[d*numFields+fTitle] = 3
	}
	z.init(flen, DefaultLexicalParams())
	strong := lterm{w: 1, scale: 1 << 20}
	for d := range 60 {
		strong.docs = append(strong.docs, uint32(d))
		strong.ftf = append(strong.ftf, uint32(fTitle)<<ftfField|1)
	}
	c, _, _ := z.contrib(&strong, 0)
	strong.ub = c
	acc := make([]lexAcc, n)
	for _, d := range strong.docs {
		acc[d].score = c
	}
	kth := lexKthBound(acc, strong.docs, limit, c)
	if kth == 0 || kth > c {
		t.Fatalf("kth bound %v of 60 scores of %v", kth, c)
	}
	weak := lterm{docs: []uint32{150, 151}, ftf: []uint32{fTitle<<ftfField | 1, fTitle<<ftfField | 1}, w: 1e-6, scale: 1 << 20, ub: kth - 1}
	s := new(scratch)
	s.lterms = []lterm{strong, weak}
	got := slices.Clone(scoreLexical(s, z, nil, n, limit))
	if want := lexReference(z, s.lterms, nil, n, limit); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if i := slices.IndexFunc(s.lacc, func(a lexAcc) bool { return a != lexAcc{} }); i >= 0 {
		t.Fatalf("accumulator %d left %v", i, s.lacc[i])
	}
}
