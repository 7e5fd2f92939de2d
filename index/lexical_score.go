package index

import (
	"math"
	"slices"
)

// lexAcc is the dense per-document accumulator of the lexical scorer: the partial score and
// the bits of what matched, side by side, so that a posting touches one cache line. Every
// posting has a field bit, so a zero mask means a document not touched yet.
type lexAcc struct {
	score uint32 // fixed point (lterm.scale)
	mask  uint32 // field bits and maskConcept
}

// lterm is one term of a lexical query over its impacts (lexImpacts).
type lterm struct {
	docs  []uint32
	imps  []float32
	masks []uint16
	max   float32 // the greatest impact
	w     float32 // idf × the term's weight
	scale float32 // the query's fixed-point scale (lexScale)
	ub    uint32  // upper bound of a contribution, in fixed point
	flag  uint32  // bits OR-ed into the candidate's mask when this term matches
}

// lcand is a lexical candidate: a document, its fixed-point score and what matched.
type lcand struct {
	doc   uint32
	score uint32
	mask  uint32
}

// contrib is the contribution of t's posting p: its impact times the term's weight,
// rounded down to the fixed point. Rounded float32 products of the same values are the
// same bits, and the sum of contributions is an integer sum, so a score is the same
// whatever order its terms are added in.
func (t *lterm) contrib(p int) uint32 {
	return uint32(float32(t.w*t.imps[p]) * t.scale)
}

// maxLexAcc bounds the accumulators a pooled scratch keeps (in documents).
const maxLexAcc = 1 << 17

// lexDense returns the zeroed lexical accumulators sized for n docs.
func (s *scratch) lexDense(n int) []lexAcc {
	if cap(s.lacc) < n {
		s.lacc = make([]lexAcc, n)
	}
	return s.lacc[:n]
}

// scoreLexical scores the union of s.lterms (each contribution ≥ 0) into the best limit
// candidates, best first. It returns exactly what exhaustive scoring would (lexReference):
// each score is the sum of its terms' contributions in fixed point, an integer sum, so it
// does not depend on the order the terms are added in, on where pruning stopped, nor on the
// bounds (which need only hold).
//
// It is MaxScore in term-at-a-time form:
//
//   - Phase 1 adds the terms strongest first (by upper bound) into dense accumulators, until
//     the bounds of the remaining terms sum to less than kth, a lower bound of the k-th best
//     final score (a lower bound of the k-th best partial score, read off a histogram of the
//     partial scores): no document still unseen can enter the answer.
//   - Phase 2 adds each remaining term only to the documents that can still reach kth: a
//     document's partial score plus the remaining bounds is checked as its posting is met.
//     One that fails once fails for good (its score stays, the bounds shrink), so it ends
//     below kth and out of the answer, and every document that never fails ends with its
//     exact score. Phase 2 lists are mostly short, where this costs less than keeping a
//     list of candidates; a list much longer than the touched documents is instead probed
//     by galloping from the candidates (see lexGallop).
//   - The answer is taken from the touched documents scoring at least kth.
func scoreLexical(s *scratch, bits []uint64, n, limit int) []lcand {
	terms := s.lterms
	// order terms by upper bound, strongest first: sort packed keys instead of calling a
	// comparator
	keys := s.keys64[:0]
	for i := range terms {
		keys = append(keys, uint64(^terms[i].ub)<<32|uint64(i))
	}
	slices.Sort(keys)
	order := s.order[:0]
	for _, k := range keys {
		order = append(order, int32(uint32(k)))
	}
	s.keys64, s.order = keys, order
	s.lcum = slices.Grow(s.lcum[:0], len(order)+1)[:len(order)+1]
	rem := s.lcum
	rem[len(order)] = 0
	for i := len(order) - 1; i >= 0; i-- {
		rem[i] = rem[i+1] + terms[order[i]].ub
	}

	acc := s.lexDense(n)
	touched := s.docs[:0]
	// kth is the bound what a document's partial score plus the remaining bounds must
	// reach; phase 1 ends below it, so no untouched document passes in phase 2
	var kth, maxAcc uint32
	lastCheck := rem[0]
	i := 0
	for ; i < len(order) && rem[i] >= kth; i++ {
		touched, maxAcc = lexAccumulate(&terms[order[i]], bits, acc, touched, maxAcc)
		// refresh the k-th partial score bound once the remaining bounds are small enough
		// for it to matter, then each time they halve
		if i+1 < len(order) && len(touched) >= limit && rem[i+1] < maxAcc && rem[i+1] <= lastCheck/2 {
			kth = max(kth, lexKthBound(acc, touched, limit, maxAcc))
			lastCheck = rem[i+1]
		}
	}
	s.docs = touched
	cands := s.ids[:0]
	listed := false // cands holds the touched documents that could still make it, sorted
	for j := i; j < len(order); j++ {
		t := &terms[order[j]]
		if !listed && len(t.docs) > 2*len(touched) {
			// a long list: gather the candidates once, with a fresh bound (no score
			// exceeds maxAcc+rem[i])
			kth = max(kth, lexKthBound(acc, touched, limit, maxAcc+rem[i]))
			for _, d := range touched {
				if acc[d].score+rem[j] >= kth {
					cands = append(cands, d)
				}
			}
			slices.Sort(cands)
			listed = true
		}
		if listed && len(t.docs) > 8*len(cands) {
			cands = lexGallop(t, acc, cands, rem[j], kth)
			continue
		}
		r, flag := rem[j], t.flag
		imps, masks := t.imps[:len(t.docs)], t.masks[:len(t.docs)]
		for p, d := range t.docs {
			if a := &acc[d]; a.score+r >= kth {
				a.score += uint32(float32(t.w*imps[p]) * t.scale)
				a.mask |= flag | uint32(masks[p])
			}
		}
	}
	s.ids = cands
	best := s.lexBest(acc, touched, kth, limit)
	for _, d := range touched {
		acc[d] = lexAcc{}
	}
	s.docs = touched[:0]
	return best
}

// lexGallop adds t to the candidates (sorted) that can still make it, probing t's documents
// by galloping, and returns the candidates left.
func lexGallop(t *lterm, acc []lexAcc, cands []uint32, rem, kth uint32) []uint32 {
	pos, kept := 0, 0
	for _, d := range cands {
		a := &acc[d]
		if a.score+rem < kth {
			continue
		}
		cands[kept] = d
		kept++
		if pos = seek(t.docs, pos, d); pos < len(t.docs) && t.docs[pos] == d {
			a.score += t.contrib(pos)
			a.mask |= t.flag | uint32(t.masks[pos])
		}
	}
	return cands[:kept]
}

// lexBest returns the best limit of docs scoring at least kth (and more than 0), best first
// (at equal scores, the lower docID first).
func (s *scratch) lexBest(acc []lexAcc, docs []uint32, kth uint32, limit int) []lcand {
	keys, top := appendLexKeys(s.keys64[:0], acc, docs, max(kth, 1))
	if len(keys) > 4*limit {
		// a weak bound: sharpen it rather than sort many
		if b := lexKthBound(acc, docs, limit, top); b > kth {
			keys, _ = appendLexKeys(keys[:0], acc, docs, b)
		}
	}
	slices.Sort(keys)
	s.keys64 = keys
	out := s.lbest[:0]
	for _, k := range keys[:min(len(keys), limit)] {
		d := uint32(k)
		out = append(out, lcand{doc: d, score: acc[d].score, mask: acc[d].mask})
	}
	s.lbest = out
	return out
}

// appendLexKeys appends the sort keys of the docs scoring at least kth (score descending,
// then docID ascending) and returns them and the greatest score.
func appendLexKeys(keys []uint64, acc []lexAcc, docs []uint32, kth uint32) ([]uint64, uint32) {
	least := uint64(math.MaxUint64)
	for _, d := range docs {
		if sc := acc[d].score; sc >= kth {
			k := uint64(^sc)<<32 | uint64(d)
			keys = append(keys, k)
			least = min(least, k)
		}
	}
	return keys, ^uint32(least >> 32)
}

// The histogram of lexKthBound buckets scores by the bits of their float32 value (which
// order like non-negative values): histShift keeps 2^(23-histShift) buckets per octave,
// and histBuckets of them span 8 octaves below the greatest score, where the k-th best lies
// in practice (anything lower falls in the bottom bucket, whose bound is 0).
const (
	histShift   = 18
	histBuckets = 256
)

// lexKthBound returns a lower bound of the k-th best partial score among docs, within a
// bucket (about 3%) of it, or 0 when there are fewer than k. hi is about the greatest
// score (greater scores count in the top bucket). It counts the scores in buckets and
// returns the lower edge of the bucket holding the k-th: one cheap pass, where selecting
// the k-th exactly costs a heap or quickselect.
func lexKthBound(acc []lexAcc, docs []uint32, k int, hi uint32) uint32 {
	if len(docs) < k || k <= 0 {
		return 0
	}
	var counts [histBuckets]uint32
	base := max(int64(math.Float32bits(float32(hi)))+1-histBuckets<<histShift, 0)
	for _, d := range docs {
		b := max(int64(math.Float32bits(float32(acc[d].score)))-base, 0)
		counts[uint8(min(b>>histShift, histBuckets-1))]++
	}
	seen := uint32(0)
	for b := histBuckets - 1; b > 0; b-- {
		if seen += counts[b]; seen >= uint32(k) {
			// a score whose float32 is at least the edge is at least the edge less its
			// rounding (half an ulp, 2^-24 of it)
			edge := float64(math.Float32frombits(uint32(base + int64(b)<<histShift)))
			return uint32(edge * (1 - 0x1p-20))
		}
	}
	return 0
}

// lexAccumulate adds one term's postings to the accumulators, appending the documents it
// touches first to touched, and returns touched and the greatest partial score so far.
func lexAccumulate(t *lterm, bits []uint64, acc []lexAcc, touched []uint32, maxAcc uint32) ([]uint32, uint32) {
	w, scale, flag := t.w, t.scale, t.flag
	imps, masks := t.imps[:len(t.docs)], t.masks[:len(t.docs)]
	n := len(touched)
	buf := slices.Grow(touched, len(t.docs))[:n+len(t.docs)]
	if bits == nil {
		for p, d := range t.docs {
			n, maxAcc = lexAdd(acc, buf, n, d, uint32(float32(w*imps[p])*scale), flag|uint32(masks[p]), maxAcc)
		}
		return buf[:n], maxAcc
	}
	for p, d := range t.docs {
		if bits[d>>6]&(1<<(d&63)) != 0 {
			n, maxAcc = lexAdd(acc, buf, n, d, uint32(float32(w*imps[p])*scale), flag|uint32(masks[p]), maxAcc)
		}
	}
	return buf[:n], maxAcc
}

// lexAdd adds one posting's contribution c and mask bits m to document d, which it appends
// to touched[:n] when new, and returns n and the greatest partial score. The document is
// written whether new or not, and kept by advancing n: a store where a branch on newness
// would often be mispredicted.
func lexAdd(acc []lexAcc, touched []uint32, n int, d uint32, c, m uint32, maxAcc uint32) (int, uint32) {
	a := &acc[d]
	touched[n] = d
	if a.mask == 0 {
		n++
	}
	sc := a.score + c
	a.score = sc
	a.mask |= m
	if sc > maxAcc {
		maxAcc = sc
	}
	return n, maxAcc
}
