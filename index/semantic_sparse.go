package index

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

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

// semList is one posting list of the sparse semantic index: postings post[start:start+df]
// (see semIndex) of values q × scale.
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
// seal_tools 97%: 105,000 postings in 214 common lists against 3,200 in 231 rarer ones).
// When walking a query's common lists would cost more than completing candidates through
// the forward postings (completionCost), the semRareTerms strongest of the rarer features
// (and concepts) select the max(semCandsPerHit×limit, semCommonCands) best candidates, and
// the common features complete those candidates' scores from each one's forward
// postings; shorter queries are scored exhaustively. When the rarer features find too few
// documents, the shortest common lists are walked too, until they do.
//
// Both limits trade the retriever alone for speed, not the fused search: on the
// ../shared/eval sets (only seal_tools has queries long enough to take the forward
// postings) they lower the semantic retriever's recall@5 on seal_tools from 0.648 to
// 0.605, while the fused recall@5 and nDCG@5 of every set stay within 0.001 of walking
// every rarer list and completing max(4×limit, 128) candidates (see BenchmarkEvalSets;
// TestSemanticSparseExhaustive checks the rest against exhaustive scoring).
const (
	semCommonFrac  = 80
	semCommonMin   = 32
	semCandsPerHit = 3
	semCommonCands = 96
	semRareTerms   = 64
	maxCommonLists = 1 << 16 // common ids are uint16
)

// maxSparseDocs bounds the documents of the sparse semantic index: a posting holds a
// document in 24 bits.
const maxSparseDocs = 1 << 24

func (g *Generation) buildSparse(ctx context.Context) error {
	x := &g.sem
	dim := g.emb.Dim()
	useTable := dim > 0 && dim <= maxDenseFeatureTable
	if !useTable {
		x.fmap = map[uint32]uint32{}
	}
	if g.n > maxSparseDocs {
		return fmt.Errorf("index: the sparse semantic index holds at most %d capabilities, not %d", maxSparseDocs, g.n)
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
	x.post = make([]uint32, total)
	x.fwdOff = make([]uint32, g.n+1)
	x.fwd = make([]uint16, 0, nfwd+nfwd/8)
	var common []uint32 // a document's common postings: cid<<8 | q
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
			x.post[p] = uint32(d)<<8 | uint32(uint8(q))
			if sl.cid != 0 {
				common = append(common, (sl.cid-1)<<8|uint32(uint8(q)))
			}
		}
		x.fwd = appendForward(x.fwd, common)
		x.fwdOff[d+1] = uint32(len(x.fwd))
		common = common[:0]
		vecs[d] = embed.SparseVector{}
	}
	return nil
}

// appendForward appends a document's forward postings (cid<<8 | q) to fwd as records
// gap | q<<8, in increasing common id: gap is the distance from the previous id (from 0 for
// the first), and a gap of fwdSkip or more takes filler records (fwdSkip, 0), which move
// the id without adding anything. Two bytes a posting keep the candidates' postings, read
// from scattered documents, to few cache lines.
func appendForward(fwd []uint16, common []uint32) []uint16 {
	slices.Sort(common)
	prev := uint32(0)
	for _, c := range common {
		gap := c>>8 - prev
		for ; gap >= fwdSkip; gap -= fwdSkip {
			fwd = append(fwd, fwdSkip)
		}
		fwd = append(fwd, uint16(gap)|uint16(c&0xff)<<8)
		prev = c >> 8
	}
	return fwd
}

// fwdSkip is the gap of a filler forward record (see appendForward).
const fwdSkip = 255

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

// semScratch is the working memory of semanticSparse, recycled through semScratchPool.
// Scores are integers: multiples of the query's step (see semanticSparse).
type semScratch struct {
	acc     []int32                // per document, zero between uses
	seen    []uint64               // bitset of the documents in touched, zero between uses
	touched []uint32               // the documents with a partial score
	lw      *[maxCommonLists]int32 // the query's weight per common id, zero between uses
	terms   []semTerm
	common  []int32 // the query's common terms, by index in terms
	rare    []int32 // the query's rarer terms walked, by index in terms
	vals    []float32
}

var semScratchPool = sync.Pool{New: func() any { return &semScratch{lw: new([maxCommonLists]int32)} }}

// semTerm is one of the query's features found in the index: its list and weight.
type semTerm struct {
	list, start, df, cid uint32
	w                    float32 // the query's value × the list's scale
	wi                   int32   // w in units of the query's step
}

// semanticSparse ranks the allowed documents by the dot product of their idf-weighted
// vectors with the query's. The lists of the query's rarer features are walked; those of
// its common features too when that costs less than completing candidates through the
// forward postings, else only the shortest of them, until there are enough candidates
// (see semCommonFrac).
//
// Scores are summed in integers: each query weight is rounded to a multiple of a step
// chosen so that no document's sum can overflow (a document holds a feature once, so its
// score is at most 127 × the sum of the query's weights in steps, about 2^30). The
// rounding moves a score by at most 6e-8 of the query's largest possible score per
// matching feature; integer multiply-adds cost a quarter of the float ones, whose int8 to
// float conversions dominated (in a micro-benchmark of the forward postings).
func (g *Generation) semanticSparse(q *Query, allow *roaring.Bitmap, limit int) []Hit {
	x := &g.sem
	v := x.sparse.EmbedSparse(q.Text)
	if len(v.Idx) == 0 {
		return nil
	}
	st := semScratchPool.Get().(*semScratch)
	defer semScratchPool.Put(st)
	// Resolve the features to lists first and read the lists after: the loads of each pass
	// are independent, so their cache misses can overlap.
	ts := st.terms[:0]
	for i, f := range v.Idx {
		if l, ok := x.sparseList(f); ok {
			ts = append(ts, semTerm{list: l, w: v.Val[i]})
		}
	}
	var sum float64
	for i := range ts {
		t, sl := &ts[i], &x.lists[ts[i].list]
		t.start, t.df, t.cid = sl.start, sl.df, sl.cid
		t.w *= sl.scale
		sum += math.Abs(float64(t.w))
	}
	st.terms = ts
	if sum == 0 {
		return nil
	}
	step := sum * 127 / (1 << 30)
	inv := 1 / step

	s := getScratch()
	defer putScratch(s)
	bits := s.allowBits(allow, g.n)
	if len(st.acc) < g.n {
		st.acc = make([]int32, g.n)
		st.seen = make([]uint64, (g.n+63)/64)
	}
	lw := st.lw
	common, rare := st.common[:0], st.rare[:0]
	commonPostings := 0
	for i := range ts {
		t := &ts[i]
		t.wi = int32(math.Round(float64(t.w) * inv))
		if t.cid == 0 {
			rare = append(rare, int32(i))
			continue
		}
		lw[t.cid-1] = t.wi
		common = append(common, int32(i))
		commonPostings += int(t.df)
	}
	cands := max(semCandsPerHit*limit, semCommonCands)
	forward := commonPostings > x.completionCost(g.n, cands)
	if forward && len(rare) > semRareTerms {
		rare = strongest(st, ts, rare, semRareTerms)
	}
	for _, r := range rare {
		x.accumulate(st, &ts[r], bits)
	}
	st.common, st.rare = common, rare

	if forward && len(st.touched) < cands {
		// too few candidates: walk the shortest common lists too
		slices.SortFunc(common, func(a, b int32) int { return cmpDF(&ts[a], &ts[b]) })
	}
	s.top.reset(limit)
	for _, c := range common {
		if forward && len(st.touched) >= cands {
			break
		}
		t := &ts[c]
		x.accumulate(st, t, bits)
		lw[t.cid-1] = 0
	}
	if forward {
		x.complete(st, &s.top, step, cands)
	} else {
		for _, d := range st.touched {
			if sc := st.acc[d]; sc > 0 {
				s.top.push(cand{doc: d, score: float32(float64(sc) * step)})
			}
		}
	}
	for _, c := range common {
		lw[ts[c].cid-1] = 0
	}
	for _, d := range st.touched {
		st.acc[d] = 0
		st.seen[d>>6] = 0
	}
	st.touched = st.touched[:0]
	return hitsOf(s.top.best(), semNames)
}

// strongest returns the k terms of idx with the largest weights (and any tied with the
// k-th), in their order.
func strongest(st *semScratch, ts []semTerm, idx []int32, k int) []int32 {
	vals := st.vals[:0]
	for _, i := range idx {
		vals = append(vals, abs32(ts[i].w))
	}
	st.vals = vals
	floor := selectKth(vals, k-1)
	out := idx[:0]
	for _, i := range idx {
		if abs32(ts[i].w) >= floor {
			out = append(out, i)
		}
	}
	return out
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// cmpDF orders terms by document frequency, then list.
func cmpDF(a, b *semTerm) int {
	if a.df != b.df {
		return int(a.df) - int(b.df)
	}
	return int(a.list) - int(b.list)
}

// completionCost estimates the cost, in postings, of completing cands candidates through
// the forward postings of the n documents (records, see appendForward): the sparse
// retriever walks a query's common lists when they hold fewer postings.
func (x *semIndex) completionCost(n, cands int) int {
	return cands * len(x.fwd) / max(n, 1)
}

// complete adds the common features (weights st.lw by common id) to the best cands of the
// touched documents (and any tied with the last) through their forward postings, and
// offers them to top, scores in units of step.
func (x *semIndex) complete(st *semScratch, top *topN, step float64, cands int) {
	acc, touched := st.acc, st.touched
	floor := float32(math.Inf(-1))
	if len(touched) > cands {
		vals := st.vals[:0]
		for _, d := range touched {
			vals = append(vals, float32(acc[d]))
		}
		st.vals = vals
		floor = selectKth(vals, cands-1)
	}
	for _, d := range touched {
		sc := acc[d]
		if float32(sc) < floor {
			continue
		}
		sc += dotForward(x.fwd[x.fwdOff[d]:x.fwdOff[d+1]], st.lw)
		if sc > 0 {
			top.push(cand{doc: d, score: float32(float64(sc) * step)})
		}
	}
}

// dotForward returns the dot product of a document's forward postings (see appendForward)
// with the query's weights by common id. (Not inlined: inside complete's loop the compiler
// spills the running id to the stack.)
//
//go:noinline
func dotForward(fwd []uint16, lw *[maxCommonLists]int32) int32 {
	var sum int32
	c := uint16(0)
	for _, r := range fwd {
		c += r & 0xff
		sum += lw[c] * int32(int8(r>>8))
	}
	return sum
}

// accumulate adds t's weight × the values of its list to the allowed documents' scores,
// and appends the documents seen for the first time to st.touched.
func (x *semIndex) accumulate(st *semScratch, t *semTerm, bits []uint64) {
	acc, seen, touched, w := st.acc, st.seen, st.touched, t.wi
	for _, p := range x.post[t.start : t.start+t.df] {
		d := p >> 8
		if bits != nil && bits[d>>6]&(1<<(d&63)) == 0 {
			continue
		}
		if m := uint64(1) << (d & 63); seen[d>>6]&m == 0 {
			seen[d>>6] |= m
			touched = append(touched, d)
		}
		acc[d] += w * int32(int8(p))
	}
	st.touched = touched
}
