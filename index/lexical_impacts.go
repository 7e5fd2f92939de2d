package index

import "sync/atomic"

// lexImpacts is one term's list as the scorer reads it: its postings (the list's documents,
// shared), each one's impact at the generation's norms (lexNorms.impact) and field mask, and
// the greatest impact. The index used to store these; they are now derived from the entries
// once per generation and term: a build from scratch derives every term's, a patched
// generation each term's on its first query (its averages differ from the generation it
// came from, so nothing can be carried over).
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

// deriveImpacts computes term t's impacts from its entries (its documents are the list's).
func (x *lexIndex) deriveImpacts(t uint32) *lexImpacts {
	docs, ftf := x.list(t)
	li := &lexImpacts{docs: docs, imps: make([]float32, len(docs)), masks: make([]uint16, len(docs))}
	e := 0
	for p, d := range docs {
		var imp float32
		var mask uint32
		imp, mask, e = x.norms.impact(d, ftf, e)
		li.imps[p], li.masks[p] = imp, uint16(mask)
		li.max = max(li.max, imp)
	}
	return li
}
