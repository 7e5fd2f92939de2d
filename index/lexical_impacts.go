package index

import "sync/atomic"

// lexImpacts is one term's list as the scorer reads it: a posting per document (the
// entries of lexIndex merged), its impact at the generation's norms (lexNorms.impact) and
// its field mask, and the greatest impact. It is what the index stored before the norms
// were computed at query time, now derived from the entries once per generation and term:
// a build from scratch derives every term's, any other generation each term on its first
// query (its norms differ from the generation it came from, so nothing can be carried over).
type lexImpacts struct {
	docs  []uint32
	imps  []float32
	masks []uint16
	max   float32
}

// lexImpactCache holds the impacts of a generation's terms, by term id, each derived on
// first use. Two searches deriving the same term at once derive the same values; either
// is kept.
type lexImpactCache []atomic.Pointer[lexImpacts]

// impacts returns term t's impacts, deriving them when no search has yet.
func (x *lexIndex) impacts(t uint32) *lexImpacts {
	if p := x.cache[t].Load(); p != nil {
		return p
	}
	p := x.deriveImpacts(t)
	x.cache[t].Store(p)
	return p
}

// deriveImpacts computes term t's impacts from its entries.
func (x *lexIndex) deriveImpacts(t uint32) *lexImpacts {
	docs, ftf := x.list(t)
	n := x.df[t]
	li := &lexImpacts{docs: make([]uint32, 0, n), imps: make([]float32, 0, n), masks: make([]uint16, 0, n)}
	for p := 0; p < len(docs); {
		d := docs[p]
		var imp float32
		var mask uint32
		imp, mask, p = x.norms.impact(d, ftf, p)
		li.docs = append(li.docs, d)
		li.imps = append(li.imps, imp)
		li.masks = append(li.masks, uint16(mask))
		li.max = max(li.max, imp)
	}
	return li
}
