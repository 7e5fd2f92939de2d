package index

import (
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

// kthOf returns the k-th best score among docs (0 when there are fewer than k).
func kthOf(s *scratch, docs []uint32, k int) float32 {
	if len(docs) < k {
		return 0
	}
	s.top.reset(k)
	for _, d := range docs {
		s.top.push(cand{doc: d, score: s.acc[d]})
	}
	return s.top.floor()
}

// scoreTerms scores the union of s.terms into the best limit candidates, best first.
//
// It is MaxScore in term-at-a-time form (Turtle & Flood 1995). Terms go by upper bound,
// strongest first, into dense accumulators. Once the bounds of the remaining terms sum to
// less than the k-th best partial score (a lower bound of the k-th best final score), no
// document still unseen can enter the answer, so the remaining posting lists are no longer
// walked: they are only probed, by galloping search, for the candidates that can still make
// it. With non-negative contributions (BM25 impacts, the Hashed embedder's features) the
// answer equals exhaustive scoring; a term that may contribute negatively turns pruning off.
// Long lists of common terms ("the template words") are thus probed for a few candidates
// instead of being walked, whatever order the documents are in.
func scoreTerms(s *scratch, bits []uint64, n, limit int) []cand {
	terms := s.terms
	slices.SortFunc(terms, func(a, b qterm) int {
		switch {
		case a.ub > b.ub:
			return -1
		case a.ub < b.ub:
			return 1
		}
		return 0
	})
	prune := true
	s.cum = slices.Grow(s.cum[:0], len(terms)+1)[:len(terms)+1]
	rem := s.cum
	rem[len(terms)] = 0
	for i := len(terms) - 1; i >= 0; i-- {
		rem[i] = rem[i+1] + terms[i].ub*boundSlack
		if terms[i].neg {
			prune = false
		}
	}
	acc, mask := s.dense(n)
	touched := s.docs[:0]
	var kth, maxAcc float32
	lastCheck := rem[0]
	i := 0
	for ; i < len(terms); i++ {
		if prune && rem[i] < kth {
			break
		}
		t := &terms[i]
		for p, d := range t.docs {
			if !has(bits, d) {
				continue
			}
			v, m := t.at(p)
			if mask[d] == 0 {
				touched = append(touched, d)
			}
			acc[d] += v
			mask[d] |= m | touchedBit
			maxAcc = max(maxAcc, acc[d])
		}
		// refresh the k-th partial score when the remaining bounds got small enough for it to
		// matter, and again each time they shrank by a fifth
		if prune && i+1 < len(terms) && len(touched) >= limit && rem[i+1] < maxAcc && rem[i+1] <= 0.8*lastCheck {
			kth = kthOf(s, touched, limit)
			lastCheck = rem[i+1]
		}
	}
	s.docs = touched
	cands := touched
	if i < len(terms) {
		// complete the candidates that can still reach the k-th score
		cands = s.ids[:0]
		for _, d := range touched {
			if acc[d]+rem[i] >= kth {
				cands = append(cands, d)
			}
		}
		slices.Sort(cands)
		for j := i; j < len(terms) && len(cands) > 0; j++ {
			t := &terms[j]
			pos, w := 0, 0
			for _, d := range cands {
				if acc[d]+rem[j] < kth {
					continue
				}
				pos = seek(t.docs, pos, d)
				if pos < len(t.docs) && t.docs[pos] == d {
					v, m := t.at(pos)
					acc[d] += v
					mask[d] |= m
				}
				cands[w] = d
				w++
			}
			cands = cands[:w]
			if j+1 < len(terms) && w > limit {
				kth = max(kth, kthOf(s, cands, limit))
			}
		}
		s.ids = cands
	}
	s.top.reset(limit)
	for _, d := range cands {
		if sc := acc[d]; sc > 0 {
			s.top.push(cand{doc: d, score: sc, mask: mask[d] &^ touchedBit})
		}
	}
	s.clearTouched()
	return s.top.best()
}
