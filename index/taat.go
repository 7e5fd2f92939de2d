package index

import (
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// boundSlack inflates upper bounds so float32 rounding never prunes a document that ties.
const boundSlack = 1.0001

// touchedBit marks a document in scratch.seen once it has a partial score.
const touchedBit = 1 << 31

// allowBits returns allow as a dense bitset over [0, n) in s's buffer (nil when allow is
// nil: everything allowed). Bits of allow at or above n are ignored.
func (s *scratch) allowBits(allow *roaring.Bitmap, n int) []uint64 {
	if allow == nil {
		return nil
	}
	words := (n + 63) / 64
	if cap(s.bits) < words+1024 { // WriteDenseTo copies whole 1024-word containers
		s.bits = make([]uint64, words+1024)
	}
	bits := s.bits[:cap(s.bits)]
	clear(bits)
	if !allow.IsEmpty() {
		if int(allow.Maximum()) >= n {
			allow = allow.Clone()
			allow.RemoveRange(uint64(n), uint64(allow.Maximum())+1)
		}
		allow.WriteDenseTo(bits)
	}
	return bits[:words]
}

// has reports whether d is in the dense bitset bits (nil means every doc).
func has(bits []uint64, d uint32) bool {
	return bits == nil || bits[d>>6]&(1<<(d&63)) != 0
}

// kthOf returns the k-th best score among docs (0 when there are fewer than k), by
// selection over a copy of the scores.
func kthOf(s *scratch, docs []uint32, k int) float32 {
	if len(docs) < k || k <= 0 {
		return 0
	}
	v := s.vals[:0]
	for _, d := range docs {
		v = append(v, s.acc[d])
	}
	s.vals = v
	return selectKth(v, k-1)
}

// kthSample is how many of the first touched documents estimate the k-th partial score
// during the first phase: any subset gives a lower bound, and the documents of the
// strongest lists come first.
const kthSample = 512

// selectKth returns the element that would be at index k if v were sorted descending
// (quickselect; v is reordered).
func selectKth(v []float32, k int) float32 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		// median of three as pivot
		mid := int(uint(lo+hi) >> 1)
		if v[mid] > v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] > v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[mid] > v[hi] {
			v[mid], v[hi] = v[hi], v[mid]
		}
		p := v[hi] // median now at hi
		i := lo
		for j := lo; j < hi; j++ {
			if v[j] > p {
				v[i], v[j] = v[j], v[i]
				i++
			}
		}
		v[i], v[hi] = v[hi], v[i]
		switch {
		case k == i:
			return v[i]
		case k < i:
			hi = i - 1
		default:
			lo = i + 1
		}
	}
	return v[k]
}

// accumulate adds one term's posting list to the accumulators (phase 1 of scoreTerms), with
// one loop per impact representation so the inner loop has no type branches.
func accumulate(t *qterm, bits []uint64, acc []float32, mask []uint32, touched []uint32, maxAcc float32) ([]uint32, float32) {
	w, flag := t.w, t.flag|touchedBit
	switch {
	case t.q8 != nil:
		q8 := t.q8[:len(t.docs)]
		for p, d := range t.docs {
			if bits != nil && bits[d>>6]&(1<<(d&63)) == 0 {
				continue
			}
			if mask[d] == 0 {
				touched = append(touched, d)
			}
			a := acc[d] + w*float32(q8[p])
			acc[d] = a
			mask[d] |= flag
			if a > maxAcc {
				maxAcc = a
			}
		}
	default:
		imps, masks := t.imps[:len(t.docs)], t.masks
		for p, d := range t.docs {
			if bits != nil && bits[d>>6]&(1<<(d&63)) == 0 {
				continue
			}
			if mask[d] == 0 {
				touched = append(touched, d)
			}
			a := acc[d] + w*imps[p]
			acc[d] = a
			m := flag
			if masks != nil {
				m |= uint32(masks[p])
			}
			mask[d] |= m
			if a > maxAcc {
				maxAcc = a
			}
		}
	}
	return touched, maxAcc
}

// candBit marks a document in scratch.seen as a candidate still being completed.
const candBit = 1 << 30

// scoreTerms scores the union of s.terms into the best limit candidates, best first.
//
// It is MaxScore in term-at-a-time form (Turtle & Flood 1995). Terms go by upper bound,
// strongest first, into dense accumulators. Once the bounds of the remaining terms sum to
// less than the k-th best partial score (a lower bound of the k-th best final score), no
// document still unseen can enter the answer, so the remaining terms only complete the
// candidates that can still make it: a short list is walked, a long one probed by galloping
// search per candidate. Long lists of common terms are thus never walked in full, whatever
// order the documents are in. With non-negative contributions (BM25 impacts, the Hashed
// embedder's features) the answer equals exhaustive scoring; a term that may contribute
// negatively turns pruning off.
//
// With approx > 0 only the approx best documents by partial score are completed: an
// approximation for queries of many weak features (see semanticSparse).
func scoreTerms(s *scratch, bits []uint64, n, limit, approx int) []cand {
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
	prune := true
	s.cum = slices.Grow(s.cum[:0], len(order)+1)[:len(order)+1]
	rem := s.cum
	rem[len(order)] = 0
	for i := len(order) - 1; i >= 0; i-- {
		t := &terms[order[i]]
		rem[i] = rem[i+1] + t.ub*boundSlack
		if t.neg {
			prune = false
		}
	}
	acc, mask := s.dense(n)
	touched := s.docs[:0]
	var kth, maxAcc float32
	lastCheck := rem[0]
	i := 0
	for ; i < len(order); i++ {
		if prune && rem[i] < kth {
			break
		}
		t := &terms[order[i]]
		touched, maxAcc = accumulate(t, bits, acc, mask, touched, maxAcc)
		// refresh the k-th partial score once the remaining bounds are small enough for it
		// to matter, then each time they halve
		if prune && i+1 < len(order) && len(touched) >= limit && rem[i+1] < maxAcc && rem[i+1] <= 0.5*lastCheck {
			kth = max(kth, kthOf(s, touched[:min(len(touched), kthSample)], limit))
			lastCheck = rem[i+1]
		}
	}
	s.docs = touched
	cands := touched
	if i < len(order) {
		cands = s.completeCandidates(i, kth, limit, approx)
	}
	s.top.reset(limit)
	for _, d := range cands {
		if sc := acc[d]; sc > 0 {
			s.top.push(cand{doc: d, score: sc, mask: mask[d] &^ (touchedBit | candBit)})
		}
	}
	s.clearTouched()
	return s.top.best()
}

// completeCandidates adds the terms from order[i:] to the touched documents that can still
// reach kth (with approx > 0, to at most about approx of the best of them), and returns
// those candidates.
func (s *scratch) completeCandidates(i int, kth float32, limit, approx int) []uint32 {
	terms, order, rem, acc, mask := s.terms, s.order, s.cum, s.acc, s.seen
	cands := s.ids[:0]
	floor := kth - rem[i]
	if approx > 0 && len(s.docs) > approx {
		floor = max(floor, kthOf(s, s.docs, approx))
	}
	for _, d := range s.docs {
		if acc[d] >= floor {
			cands = append(cands, d)
			mask[d] |= candBit
		}
	}
	sorted := false
	lastCheck := rem[i]
	for j := i; j < len(order) && len(cands) > 0; j++ {
		if rem[j] <= 0.5*lastCheck && len(cands) > limit {
			// drop the candidates that can no longer make it
			kth = max(kth, kthOf(s, cands, limit))
			lastCheck = rem[j]
			w := 0
			for _, d := range cands {
				if acc[d]+rem[j] >= kth {
					cands[w] = d
					w++
				} else {
					mask[d] &^= candBit
				}
			}
			cands = cands[:w]
		}
		t := &terms[order[j]]
		if len(t.docs) <= 8*len(cands) {
			for p, d := range t.docs {
				if mask[d]&candBit != 0 {
					v, m := t.at(p)
					acc[d] += v
					mask[d] |= m
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
				v, m := t.at(pos)
				acc[d] += v
				mask[d] |= m
			}
		}
	}
	s.ids = cands
	return cands
}
