package index

import (
	"slices"
	"sync"
)

// cand is a scored document with the bits of what matched.
type cand struct {
	doc   uint32
	score float32
	mask  uint32
}

// worse orders candidates: lower score first, and at equal score the higher docID, so the
// kept set is deterministic.
func worse(a, b cand) bool {
	return a.score < b.score || (a.score == b.score && a.doc > b.doc)
}

// topN keeps the best k candidates in a min-heap whose root is the worst kept one.
type topN struct {
	k int
	h []cand
}

func (t *topN) reset(k int) {
	t.k = k
	t.h = t.h[:0]
}

func (t *topN) full() bool { return len(t.h) >= t.k }

// floor is the score a candidate must beat to enter: the worst kept score when full, else 0
// (only positive scores are hits).
func (t *topN) floor() float32 {
	if len(t.h) >= t.k {
		return t.h[0].score
	}
	return 0
}

// push offers c and reports whether it was kept.
func (t *topN) push(c cand) bool {
	if len(t.h) < t.k {
		t.h = append(t.h, c)
		t.up(len(t.h) - 1)
		return true
	}
	if !worse(t.h[0], c) {
		return false
	}
	t.h[0] = c
	t.down(0)
	return true
}

func (t *topN) up(i int) {
	h := t.h
	for i > 0 {
		p := (i - 1) / 2
		if !worse(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (t *topN) down(i int) {
	h := t.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// best sorts the kept candidates best first and returns them (the heap is consumed).
func (t *topN) best() []cand {
	slices.SortFunc(t.h, func(a, b cand) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return t.h
}

// scratch is the per-call working memory of a retriever, recycled through scratchPool.
type scratch struct {
	top         topN
	acc         []float32 // dense per-doc accumulator, zero between uses
	seen        []uint32  // dense per-doc marks, zero between uses
	docs        []uint32  // touched docs
	keys        []metaKey
	ids         []uint32
	tids        []uint32 // term ids of a query
	vids        []uint32 // lexical: the variants of a query's terms
	bits        []uint64 // dense allow bitset
	allowBuf    []uint32 // values of the allow bitmap being read (allowBits)
	order       []int32  // terms by upper bound
	keys64      []uint64 // sort keys of order, then of the lexical answer
	lacc        []lexAcc // lexical: dense per-doc accumulators, zero between uses
	lterms      []lterm  // lexical: the terms of a query
	lcum        []uint32 // lexical: the sums of the remaining terms' bounds
	lbest       []lcand  // lexical: the answer
	concepts    []int32  // lexical: concept ids of a query
	cterms      []string // lexical: terms of a clause (liftClauses)
	cconcepts   []int32  // lexical: concept ids of a clause
	wterms      []lterm  // lexical: the whole query's terms while its clauses are scored
	src         []string // lexical: the terms only a query's source nouns hold (sourceSpans)
	srcConcepts []int32  // lexical: the concepts only a query's source nouns name
}

// dense returns the zeroed accumulators sized for n docs.
func (s *scratch) dense(n int) ([]float32, []uint32) {
	if cap(s.acc) < n {
		s.acc = make([]float32, n)
		s.seen = make([]uint32, n)
	}
	return s.acc[:n], s.seen[:n]
}

// clearTouched zeroes the accumulator entries of the touched docs.
func (s *scratch) clearTouched() {
	for _, d := range s.docs {
		s.acc[d] = 0
		s.seen[d] = 0
	}
	s.docs = s.docs[:0]
}

// seek returns the first position ≥ pos whose doc is ≥ target (galloping, then binary search).
func seek(docs []uint32, pos int, target uint32) int {
	n := len(docs)
	if pos >= n || docs[pos] >= target {
		return pos
	}
	lo, step := pos, 1
	hi := lo + step
	for hi < n && docs[hi] < target {
		lo = hi
		step <<= 1
		hi = lo + step
	}
	if hi > n {
		hi = n
	}
	// docs[lo] < target; answer in (lo, hi]
	lo++
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if docs[m] < target {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// nameTable turns match masks into shared, read-only name slices, built once per mask.
type nameTable struct {
	name  func(bit int) string
	cache sync.Map // uint32 mask → []string
}

func newNameTable(name func(bit int) string) *nameTable { return &nameTable{name: name} }

// of names the set bits of mask (nil for 0). The slice is shared: callers must not modify it.
func (t *nameTable) of(mask uint32) []string {
	if mask == 0 {
		return nil
	}
	if v, ok := t.cache.Load(mask); ok {
		return v.([]string)
	}
	var out []string
	for b := 0; b < 32; b++ {
		if mask&(1<<b) != 0 {
			if n := t.name(b); n != "" && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	out = slices.Clip(out)
	t.cache.Store(mask, out)
	return out
}

// sortHits orders hits best first, equal scores by docID: the order of a retriever's answer
// after a pass that raised some scores (the clause lifts).
func sortHits(hits []Hit) {
	slices.SortStableFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return int(a.Doc) - int(b.Doc)
	})
}
