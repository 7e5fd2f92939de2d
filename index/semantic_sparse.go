package index

import (
	"context"
	"math"
	"math/bits"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/embed"
)

// maxDenseFeatureTable bounds the feature → list table of the sparse index; larger
// dimensions use a map.
const maxDenseFeatureTable = 1 << 22

// rankWord is 64 features of the sparse index: which are present, and how many present
// features precede them.
type rankWord struct {
	bits uint64
	rank uint32
}

// semList is one posting list of the sparse semantic index: documents docs[start:start+df]
// with values q8[start:start+df] × scale.
type semList struct {
	start, df uint32
	scale     float32 // per list quantisation step, times the list's idf weight (semIdf)
	cid       uint32  // 1 + the list's id among the common lists; 0 for a rarer list
}

// semIdfExp is the exponent of the idf weight of the sparse semantic index: a document's
// value of feature f is multiplied by ln(1 + n/df_f)^semIdfExp. The hashed embedder has no
// idf, so the n-grams of common words ("<ge", "the", "ion>") weigh as much as rare ones. On
// the ../shared/eval sets this mild weight (with the candidate completion below) raises the
// semantic retriever's recall@5 from 0.591 to 0.648 on seal_tools, 0.722 to 0.744 on
// hammerbench_zh and 0.569 to 0.588 on metatool, and keeps the fused search within 0.003
// of unweighted cosine; exponents 0.5 to 1 help the retriever alone about as much but
// lower the fused nDCG@5 of seal_tools by up to 0.008.
const semIdfExp = 0.25

// semIdf is the idf weight of a feature found in df of n documents.
func semIdf(n int, df uint32) float32 {
	return float32(math.Pow(math.Log1p(float64(n)/float64(max(df, 1))), semIdfExp))
}

// A feature of the sparse semantic index is common when more than max(n/semCommonFrac,
// semCommonMin) of the n documents have it (at most maxCommonLists features are: the most
// frequent). The n-grams of common words hold most of a long query's postings (on
// seal_tools 97%: 105,000 postings in 214 common lists against 3,200 in 183 rarer ones).
// When walking a query's common lists would cost more than completing candidates through
// the forward postings (completionCost), the rarer features (and concepts) select the
// max(4×limit, semCommonCands) best candidates, and the common features complete those
// candidates' scores exactly from each one's forward postings; shorter queries are scored
// exhaustively. When the rarer features find too few documents, the shortest common lists
// are walked too, until they do. On the ../shared/eval sets this keeps recall@5 and
// nDCG@5 of the fused search within 0.003 of the previous cosine retriever (see
// BenchmarkEvalSets; TestSemanticSparseExhaustive checks the exact parts).
const (
	semCommonFrac  = 80
	semCommonMin   = 32
	semCommonCands = 128
	maxCommonLists = 1 << 16 // common ids are uint16
)

func (g *Generation) buildSparse(ctx context.Context) error {
	x := &g.sem
	dim := g.emb.Dim()
	useTable := dim > 0 && dim <= maxDenseFeatureTable
	if !useTable {
		x.fmap = map[uint32]uint32{}
	}
	vecs := make([]embed.SparseVector, g.n)
	err := parallelFor(ctx, 0, g.n, func(d int) { vecs[d] = x.sparse.EmbedSparse(embedText(g.snap.Caps[d])) })
	if err != nil {
		return err
	}
	var df []uint32
	var absMax []float32
	if useTable {
		x.ftab = make([]rankWord, (dim+63)/64)
		for _, v := range vecs {
			for _, f := range v.Idx {
				if int(f/64) < len(x.ftab) {
					x.ftab[f/64].bits |= 1 << (f % 64)
				}
			}
		}
		var r uint32
		for i := range x.ftab {
			x.ftab[i].rank = r
			r += uint32(bits.OnesCount64(x.ftab[i].bits))
		}
		df, absMax = make([]uint32, r), make([]float32, r)
	}
	listOf := func(f uint32) uint32 {
		if useTable {
			if l, ok := x.sparseList(f); ok {
				return l
			}
		} else if l, ok := x.fmap[f]; ok {
			return l
		}
		// a feature beyond the table (an embedder returning indices >= Dim)
		if x.fmap == nil {
			x.fmap = map[uint32]uint32{}
		}
		x.fmap[f] = uint32(len(df))
		df = append(df, 0)
		absMax = append(absMax, 0)
		return uint32(len(df) - 1)
	}
	for _, v := range vecs {
		for i, f := range v.Idx {
			l := listOf(f)
			df[l]++
			absMax[l] = max(absMax[l], float32(math.Abs(float64(v.Val[i]))))
		}
	}

	x.commonDF = uint32(max(g.n/semCommonFrac, semCommonMin))
	if c := countAbove(df, x.commonDF); c > maxCommonLists {
		sorted := slices.Clone(df)
		slices.Sort(sorted)
		x.commonDF = sorted[len(sorted)-maxCommonLists]
	}
	x.lists = make([]semList, len(df))
	var total, nfwd uint32
	for l, c := range df {
		sl := &x.lists[l]
		sl.start, sl.df = total, c
		sl.scale = absMax[l] / 127 * semIdf(g.n, c)
		total += c
		if c > x.commonDF {
			x.ncommon++
			sl.cid = uint32(x.ncommon)
			nfwd += c
		}
	}
	x.docs = make([]uint32, total)
	x.q8 = make([]int8, total)
	x.fwdOff = make([]uint32, g.n+1)
	x.fwdCID = make([]uint16, 0, nfwd)
	x.fwdQ = make([]int8, 0, nfwd)
	fill := make([]uint32, len(df))
	for d, v := range vecs {
		for i, f := range v.Idx {
			l := listOf(f)
			sl := &x.lists[l]
			var q int8
			if step := absMax[l] / 127; step > 0 {
				q = int8(max(-127, min(127, math.Round(float64(v.Val[i]/step)))))
			}
			p := sl.start + fill[l]
			fill[l]++
			x.docs[p], x.q8[p] = uint32(d), q
			if sl.cid != 0 {
				x.fwdCID = append(x.fwdCID, uint16(sl.cid-1))
				x.fwdQ = append(x.fwdQ, q)
			}
		}
		x.fwdOff[d+1] = uint32(len(x.fwdCID))
		vecs[d] = embed.SparseVector{}
	}
	return nil
}

// countAbove returns how many of v exceed t.
func countAbove(v []uint32, t uint32) int {
	n := 0
	for _, c := range v {
		if c > t {
			n++
		}
	}
	return n
}

// sparseList returns the list id of feature f.
func (x *semIndex) sparseList(f uint32) (uint32, bool) {
	if w := f / 64; int(w) < len(x.ftab) {
		rw := &x.ftab[w]
		bit := uint64(1) << (f % 64)
		if rw.bits&bit == 0 {
			return 0, false
		}
		return rw.rank + uint32(bits.OnesCount64(rw.bits&(bit-1))), true
	}
	if x.fmap == nil {
		return 0, false
	}
	l, ok := x.fmap[f]
	return l, ok
}

var semanticMatched = []string{"embedding"}

func semNames(uint32) []string { return semanticMatched }

// semanticSparse ranks the allowed documents by the dot product of their idf-weighted
// vectors with the query's. The lists of the query's rarer features are walked; those of
// its common features too when that costs less than completing candidates through the
// forward postings, else only the shortest of them, until there are enough candidates
// (see semCommonFrac).
func (g *Generation) semanticSparse(q *Query, allow *roaring.Bitmap, limit int) []Hit {
	x := &g.sem
	v := x.sparse.EmbedSparse(q.Text)
	if len(v.Idx) == 0 {
		return nil
	}
	s := getScratch()
	defer putScratch(s)
	bits := s.allowBits(allow, g.n)
	acc, seen := s.dense(g.n)
	if cap(s.lw) < x.ncommon {
		s.lw = make([]float32, x.ncommon)
	}
	lw := s.lw[:x.ncommon] // the query's weight per common list, by common id
	touched := s.docs[:0]
	common := s.keys64[:0] // the query's common lists: df<<32 | list id
	commonPostings := 0
	for i, f := range v.Idx {
		l, ok := x.sparseList(f)
		if !ok {
			continue
		}
		sl := &x.lists[l]
		w := v.Val[i] * sl.scale
		if sl.cid == 0 {
			touched = x.accumulate(sl, w, bits, acc, seen, touched)
			continue
		}
		lw[sl.cid-1] = w
		common = append(common, uint64(sl.df)<<32|uint64(l))
		commonPostings += int(sl.df)
	}
	s.keys64 = common

	cands := max(4*limit, semCommonCands)
	forward := commonPostings > x.completionCost(g.n, cands)
	if forward && len(touched) < cands {
		// too few candidates: walk the shortest common lists too
		slices.Sort(common)
	}
	s.top.reset(limit)
	for _, c := range common {
		if forward && len(touched) >= cands {
			break
		}
		sl := &x.lists[uint32(c)]
		touched = x.accumulate(sl, lw[sl.cid-1], bits, acc, seen, touched)
		lw[sl.cid-1] = 0
	}
	s.docs = touched
	if forward {
		x.complete(s, lw, cands)
	} else {
		for _, d := range touched {
			if sc := acc[d]; sc > 0 {
				s.top.push(cand{doc: d, score: sc})
			}
		}
	}
	for _, c := range common {
		lw[x.lists[uint32(c)].cid-1] = 0
	}
	s.clearTouched()
	return hitsOf(s.top.best(), semNames)
}

// completionCost estimates the cost, in postings, of completing cands candidates through
// the forward postings of the n documents: the sparse retriever walks a query's common
// lists when they hold fewer postings.
func (x *semIndex) completionCost(n, cands int) int {
	return cands * len(x.fwdCID) / max(n, 1)
}

// complete adds the common features (weights lw by common id) to the best cands of the
// touched documents (and any tied with the last) through their forward postings, and
// offers them to s.top.
func (x *semIndex) complete(s *scratch, lw []float32, cands int) {
	acc, touched := s.acc, s.docs
	floor := float32(math.Inf(-1))
	if len(touched) > cands {
		vals := s.vals[:0]
		for _, d := range touched {
			vals = append(vals, acc[d])
		}
		s.vals = vals
		floor = selectKth(vals, cands-1)
	}
	for _, d := range touched {
		sc := acc[d]
		if sc < floor {
			continue
		}
		a, b := x.fwdOff[d], x.fwdOff[d+1]
		cids, q8 := x.fwdCID[a:b:b], x.fwdQ[a:b:b]
		for p, c := range cids {
			sc += lw[c] * float32(q8[p])
		}
		if sc > 0 {
			s.top.push(cand{doc: d, score: sc})
		}
	}
}

// accumulate adds w × the values of list sl to the allowed documents' accumulators, and
// appends the documents seen for the first time to touched.
func (x *semIndex) accumulate(sl *semList, w float32, bits []uint64, acc []float32, seen []uint32, touched []uint32) []uint32 {
	a, b := sl.start, sl.start+sl.df
	docs, q8 := x.docs[a:b:b], x.q8[a:b:b]
	for p, d := range docs {
		if bits != nil && bits[d>>6]&(1<<(d&63)) == 0 {
			continue
		}
		if seen[d] == 0 {
			seen[d] = 1
			touched = append(touched, d)
		}
		acc[d] += w * float32(q8[p])
	}
	return touched
}
