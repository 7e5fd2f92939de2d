package rank

import (
	"hash/maphash"
	"strings"
)

// termIndex maps the analysed terms of a TermCache to their numbers. Rerank numbers every
// term of the query (some forty for a sentence) and the index is mostly out of cache by
// then, so the layout serves a batch of lookups: an open-addressing table of small slots
// (the term's hash tag, number, and place in one string holding every term's bytes), probed
// for all the terms in one pass and verified in the next, so that the cache misses of all
// the terms overlap. A map waits on two or three dependent misses per term.
type termIndex struct {
	seed  maphash.Seed
	slots []termSlot // a power of two, at most half full
	mask  uint32
	text  string // every term's bytes, one term after the other
}

// termSlot is one slot of a termIndex: the term text[off:off+n] numbered id-1 (id 0: an
// empty slot), whose hash has tag as its high half.
type termSlot struct {
	tag, id, off, n uint32
}

// newTermIndex builds the index of ids (term → number).
func newTermIndex(ids map[string]uint32) *termIndex {
	size := 16
	for size < 2*len(ids) {
		size <<= 1
	}
	x := &termIndex{seed: maphash.MakeSeed(), slots: make([]termSlot, size), mask: uint32(size - 1)}
	var sb strings.Builder
	for term, id := range ids {
		h := maphash.String(x.seed, term)
		i := uint32(h) & x.mask
		for x.slots[i].id != 0 {
			i = (i + 1) & x.mask
		}
		x.slots[i] = termSlot{tag: uint32(h >> 32), id: id + 1, off: uint32(sb.Len()), n: uint32(len(term))}
		sb.WriteString(term)
	}
	x.text = sb.String()
	return x
}

// lookup sets ids[i] to the number of terms[i], or -1 when the index lacks it, and returns a
// sum of the words it read ahead, to keep (see touch). ids and hs must be as long as terms;
// hs is scratch space.
func (x *termIndex) lookup(terms []string, ids []int32, hs []uint64) uint32 {
	var sum uint32
	// Pass 1: each term's first slot.
	for i, term := range terms {
		h := maphash.String(x.seed, term)
		hs[i] = h
		sum += x.slots[uint32(h)&x.mask].id
	}
	// Pass 2: the slot that ends each probe: empty, or a term with the same tag and length,
	// whose bytes are read ahead.
	for i, term := range terms {
		j := x.probe(uint32(hs[i])&x.mask, hs[i], len(term))
		ids[i] = int32(j)
		if s := &x.slots[j]; s.id != 0 {
			sum += uint32(x.text[s.off])
		}
	}
	// Pass 3: compare the bytes, probing on past a tag collision.
	for i, term := range terms {
		j := uint32(ids[i])
		ids[i] = -1
		for ; x.slots[j].id != 0; j = x.probe((j+1)&x.mask, hs[i], len(term)) {
			if s := &x.slots[j]; x.text[s.off:s.off+s.n] == term {
				ids[i] = int32(s.id - 1)
				break
			}
		}
	}
	return sum
}

// probe returns the first slot from i on that is empty or holds a term of hash h's tag and
// length n.
func (x *termIndex) probe(i uint32, h uint64, n int) uint32 {
	tag := uint32(h >> 32)
	for {
		s := &x.slots[i]
		if s.id == 0 || s.tag == tag && int(s.n) == n {
			return i
		}
		i = (i + 1) & x.mask
	}
}

// find returns the number of term, or -1 when the index lacks it: lookup for one term.
func (x *termIndex) find(term string) int32 {
	h := maphash.String(x.seed, term)
	for i := uint32(h) & x.mask; x.slots[i].id != 0; i = (i + 1) & x.mask {
		if s := &x.slots[i]; s.tag == uint32(h>>32) && x.text[s.off:s.off+s.n] == term {
			return int32(s.id - 1)
		}
	}
	return -1
}

// lookup is termIndex.lookup over t's terms: in a patched cache also those numbered since
// its index was built (chainTerms.more), and never a term no capability holds any longer
// (deadIDF).
func (t *TermCache) lookup(terms []string, ids []int32, hs []uint64) uint32 {
	sum := t.terms.lookup(terms, ids, hs)
	if t.chain == nil {
		return sum
	}
	for i, id := range ids {
		if id < 0 && t.chain.more != nil {
			id = t.chain.more.find(terms[i])
			ids[i] = id
		}
		if id >= 0 && t.idf[id] == deadIDF {
			ids[i] = -1
		}
	}
	return sum
}
