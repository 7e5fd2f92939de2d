package index

import (
	"math"
	"slices"
)

// lexAcc is the dense per-document accumulator of the lexical scorer: the partial score and
// the bits of what matched, side by side, so that a posting touches one cache line.
type lexAcc struct {
	score float32
	mask  uint32 // field bits, maskConcept, lexTouched, lexCand
}

// Bits of lexAcc.mask beside the field bits (0..numFields-1) and maskConcept.
const (
	lexTouched = 1 << 31 // the document has a partial score and is in scratch.docs
	lexCand    = 1 << 30 // the document is a candidate still being completed
)

// maxLexAcc bounds the accumulators a pooled scratch keeps (in documents).
const maxLexAcc = 1 << 17

// lexDense returns the zeroed lexical accumulators sized for n docs.
func (s *scratch) lexDense(n int) []lexAcc {
	if cap(s.lacc) < n {
		s.lacc = make([]lexAcc, n)
	}
	return s.lacc[:n]
}

// eliteMin is the least number of best partial scores the lexical scorer follows during
// candidate completion to refresh its k-th score estimate (see scoreLexical).
const eliteMin = 64

// scoreLexical scores the union of s.terms (lexical terms: impacts and field masks, every
// contribution ≥ 0) into the best limit candidates, best first. It returns exactly what
// exhaustive scoring would, and each score is the float32 sum of its terms' contributions
// in the same order as scoreTerms adds them, so the two agree bit for bit.
//
// It is MaxScore in term-at-a-time form, as scoreTerms, specialised to lexical terms:
//
//   - Phase 1 adds the terms strongest first (by upper bound) into dense accumulators, until
//     the bounds of the remaining terms sum to less than a lower bound of the k-th best final
//     score (the k-th best partial score among the first documents touched): no document
//     still unseen can enter the answer.
//   - Phase 2 completes only the touched documents that can still reach the k-th score,
//     walking a short list and galloping into a long one. As the remaining bounds shrink it
//     drops the candidates that can no longer make it. The k-th score estimate is refreshed
//     from an elite: the best partial scores when phase 2 starts, which are candidates and
//     whose k-th partial score is a lower bound of the final k-th score. Following a few
//     dozen documents instead of selecting over every candidate keeps the refresh cheap.
func scoreLexical(s *scratch, bits []uint64, n, limit int) []cand {
	terms := s.terms
	// order terms by upper bound, strongest first: sort packed keys (the bits of a
	// non-negative float32 order like the values) instead of calling a comparator
	keys := s.keys64[:0]
	for i := range terms {
		keys = append(keys, uint64(^math.Float32bits(terms[i].ub))<<32|uint64(i))
	}
	slices.Sort(keys)
	order := s.order[:0]
	for _, k := range keys {
		order = append(order, int32(uint32(k)))
	}
	s.keys64, s.order = keys, order
	s.cum = slices.Grow(s.cum[:0], len(order)+1)[:len(order)+1]
	rem := s.cum
	rem[len(order)] = 0
	for i := len(order) - 1; i >= 0; i-- {
		rem[i] = rem[i+1] + terms[order[i]].ub*boundSlack
	}

	acc := s.lexDense(n)
	touched := s.docs[:0]
	var kth, maxAcc float32
	lastCheck := rem[0]
	i := 0
	for ; i < len(order) && rem[i] >= kth; i++ {
		touched, maxAcc = lexAccumulate(&terms[order[i]], bits, acc, touched, maxAcc)
		// refresh the k-th partial score once the remaining bounds are small enough for it
		// to matter, then each time they halve
		if i+1 < len(order) && len(touched) >= limit && rem[i+1] < maxAcc && rem[i+1] <= 0.5*lastCheck {
			kth = max(kth, s.lexKth(acc, touched[:min(len(touched), kthSample)], limit))
			lastCheck = rem[i+1]
		}
	}
	s.docs = touched
	cands := touched
	if i < len(order) {
		cands = s.lexComplete(acc, i, kth, limit)
	}
	s.top.reset(limit)
	for _, d := range cands {
		if a := acc[d]; a.score > 0 {
			s.top.push(cand{doc: d, score: a.score, mask: a.mask &^ (lexTouched | lexCand)})
		}
	}
	for _, d := range touched {
		acc[d] = lexAcc{}
	}
	s.docs = touched[:0]
	return s.top.best()
}

// lexAccumulate adds one term's posting list to the accumulators, appending the documents
// it touches first to touched, and returns touched and the greatest partial score so far.
func lexAccumulate(t *qterm, bits []uint64, acc []lexAcc, touched []uint32, maxAcc float32) ([]uint32, float32) {
	w, flag := t.w, t.flag|lexTouched
	imps, masks := t.imps[:len(t.docs)], t.masks[:len(t.docs)]
	if bits == nil {
		for p, d := range t.docs {
			a := &acc[d]
			if a.mask == 0 {
				touched = append(touched, d)
			}
			sc := a.score + w*imps[p]
			a.score = sc
			a.mask |= flag | uint32(masks[p])
			maxAcc = max(maxAcc, sc)
		}
		return touched, maxAcc
	}
	for p, d := range t.docs {
		if bits[d>>6]&(1<<(d&63)) == 0 {
			continue
		}
		a := &acc[d]
		if a.mask == 0 {
			touched = append(touched, d)
		}
		sc := a.score + w*imps[p]
		a.score = sc
		a.mask |= flag | uint32(masks[p])
		maxAcc = max(maxAcc, sc)
	}
	return touched, maxAcc
}

// lexKth returns the k-th best partial score among docs (0 when there are fewer than k).
func (s *scratch) lexKth(acc []lexAcc, docs []uint32, k int) float32 {
	if len(docs) < k || k <= 0 {
		return 0
	}
	v := s.vals[:0]
	for _, d := range docs {
		v = append(v, acc[d].score)
	}
	s.vals = v
	var kth float32
	s.heap, kth = kthLargest(s.heap, v, k)
	return kth
}

// lexComplete adds the terms from s.order[i:] to the touched documents that can still reach
// kth, and returns those candidates.
func (s *scratch) lexComplete(acc []lexAcc, i int, kth float32, limit int) []uint32 {
	terms, order, rem := s.terms, s.order, s.cum
	floor := kth - rem[i]
	cands, vals := s.ids[:0], s.vals[:0]
	for _, d := range s.docs {
		if sc := acc[d].score; sc >= floor {
			cands = append(cands, d)
			vals = append(vals, sc)
			acc[d].mask |= lexCand
		}
	}
	s.vals = vals
	// the elite: the best m candidates by partial score (all of them when there are few)
	elite := append(s.elite[:0], cands...)
	if m := max(eliteMin, 2*limit); len(cands) > 2*m {
		var cut float32
		s.heap, cut = kthLargest(s.heap, vals, m)
		elite = elite[:0]
		for k, sc := range vals {
			if sc >= cut && len(elite) < m {
				elite = append(elite, cands[k])
			}
		}
	}
	s.elite = elite
	sorted := false
	lastCheck := rem[i]
	for j := i; j < len(order) && len(cands) > 0; j++ {
		if rem[j] <= 0.5*lastCheck && len(cands) > limit {
			// drop the candidates that can no longer make it
			kth = max(kth, s.lexKth(acc, elite, limit))
			lastCheck = rem[j]
			w := 0
			for _, d := range cands {
				if acc[d].score+rem[j] >= kth {
					cands[w] = d
					w++
				} else {
					acc[d].mask &^= lexCand
				}
			}
			cands = cands[:w]
		}
		t := &terms[order[j]]
		if len(t.docs) <= 8*len(cands) {
			for p, d := range t.docs {
				if a := &acc[d]; a.mask&lexCand != 0 {
					a.score += t.w * t.imps[p]
					a.mask |= t.flag | uint32(t.masks[p])
				}
			}
			continue
		}
		if !sorted {
			slices.Sort(cands)
			sorted = true
		}
		pos := 0
		for _, d := range cands {
			pos = seek(t.docs, pos, d)
			if pos == len(t.docs) {
				break
			}
			if t.docs[pos] == d {
				a := &acc[d]
				a.score += t.w * t.imps[pos]
				a.mask |= t.flag | uint32(t.masks[pos])
			}
		}
	}
	s.ids = cands
	return cands
}

// kthLargest returns the k-th largest of v (1 ≤ k ≤ len(v)), keeping the k largest seen so
// far in a min-heap held in h's buffer. Most values lose to the heap's root at once, so it
// costs about one comparison per value, whatever the ties.
func kthLargest(h []float32, v []float32, k int) ([]float32, float32) {
	h = append(h[:0], v[:k]...)
	for i := k/2 - 1; i >= 0; i-- {
		siftDown32(h, i)
	}
	for _, x := range v[k:] {
		if x > h[0] {
			h[0] = x
			siftDown32(h, 0)
		}
	}
	return h, h[0]
}

// siftDown32 restores the min-heap order of h below i.
func siftDown32(h []float32, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r] < h[l] {
			m = r
		}
		if h[m] >= h[i] {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
