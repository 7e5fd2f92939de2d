package index

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"reflect"
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

// semFeat is one feature of the sparse semantic index: its posting list and the scale of
// its values.
type semFeat struct {
	list  uint32
	scale float32 // the feature's quantisation step, times its idf weight (semIdf)
}

// semList is one posting list of the sparse semantic index: postings post[start:start+df]
// (see semIndex), or xpost[start-semPatchArena:][:df] when start has the bit semPatchArena
// (a list of a patched index, semantic_patch.go), shared by the features whose quantised
// values are the same in every document.
type semList struct {
	start, df uint32
	cid       uint32 // 1 + the list's id among the common lists; 0 for a rarer list
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

// A list of the sparse semantic index is common when more than max(n/semCommonFrac,
// semCommonMin) of the n documents are in it (at most maxCommonLists lists are: the
// longest). The n-grams of common words hold most of a long query's postings (on
// seal_tools 97%: 105,000 postings in 214 common lists against 3,200 in 231 rarer ones).
// When walking a query's common lists would cost more than completing candidates through
// the forward postings (completionCost), the semRareTerms strongest of the rarer lists
// (n-grams, words and concepts) select the max(semCandsPerHit×limit, semCommonCands) best candidates, and
// the common features complete those candidates' scores from each one's forward
// postings; shorter queries are scored exhaustively. When the rarer features find too few
// documents, the shortest common lists are walked too, until they do.
//
// Both limits trade the retriever alone for speed, not the fused search: on the
// ../shared/eval sets (only seal_tools has queries long enough to take the forward
// postings) they lower the semantic retriever's recall@5 on seal_tools from 0.648 to
// 0.624 (0.605 when the limit counted features rather than lists), while the fused recall@5 and nDCG@5 of every set stay within 0.001 of walking
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
	if g.canPatchSparse() {
		if done, err := g.patchSparse(ctx); done || err != nil {
			return err
		}
	}
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
	prev := g.prev
	if prev != nil && !sameEmbedder(prev.emb, g.emb) {
		prev = nil
	}
	err := parallelFor(ctx, 0, g.n, func(d int) {
		if pd := g.reused(d); prev != nil && pd >= 0 && prev.sparse != nil && prev.sparse[pd].Idx != nil {
			vecs[d] = prev.sparse[pd]
		} else {
			vecs[d] = x.sparse.EmbedSparse(embedText(g.snap.Caps[d]))
		}
	})
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
	featureOf := func(f uint32) uint32 {
		if useTable {
			if id, ok := x.feature(f); ok {
				return id
			}
		} else if id, ok := x.fmap[f]; ok {
			return id
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
			id := featureOf(f)
			df[id]++
			absMax[id] = max(absMax[id], float32(math.Abs(float64(v.Val[i]))))
		}
	}

	// Each feature's postings, in document order: feature id's are post[start[id]:start[id+1]].
	start := make([]uint32, len(df)+1)
	for id, c := range df {
		start[id+1] = start[id] + c
	}
	post := make([]uint32, start[len(df)])
	fill := slices.Clone(start[:len(df)])
	for d, v := range vecs {
		for i, f := range v.Idx {
			id := featureOf(f)
			post[fill[id]] = uint32(d)<<8 | uint32(uint8(quantize(v.Val[i], absMax[id])))
			fill[id]++
		}
		if g.an == nil {
			vecs[d] = embed.SparseVector{}
		}
	}
	if g.an != nil { // kept for the next build
		g.an.sparse, g.an.emb = vecs, g.emb
	}
	x.feats = make([]semFeat, len(df))
	for id, c := range df {
		x.feats[id].scale = semScale(absMax[id], g.n, c)
	}
	x.absMax = absMax
	x.shareLists(post, start)
	x.markCommon(g.n)
	x.buildForward(g.n)
	x.fwdExcess = len(x.fwd) - x.commonPost
	return nil
}

// quantize returns a document's value v of a feature whose largest absolute value over
// the documents is absMax, as the multiple of absMax/127 a posting holds.
func quantize(v, absMax float32) int8 {
	if step := absMax / 127; step > 0 {
		return int8(max(-127, min(127, math.Round(float64(v/step)))))
	}
	return 0
}

// semScale is the scale of a feature (semFeat.scale) whose largest absolute value is
// absMax, found in df of n documents.
func semScale(absMax float32, n int, df uint32) float32 {
	step := absMax / 127
	return step * semIdf(n, df)
}

// sameEmbedder reports whether a and b are the same embedder (the vectors of one are
// those of the other).
func sameEmbedder(a, b embed.Embedder) bool {
	if a == nil || b == nil || reflect.TypeOf(a) != reflect.TypeOf(b) || !reflect.TypeOf(a).Comparable() {
		return false
	}
	return a == b
}

// shareLists lays out the features' postings (feature id's are post[start[id]:start[id+1]])
// as posting lists, one for each distinct sequence: the n-grams of a word that no other
// word of the catalogue holds, for one, have the same postings. Sharing is exact (a query
// sums the weights of a list's features) and halves the common postings of the generated
// 10k catalogue (2.7 million to 1.2 million) and the lists of seal_tools (27,500 to 13,300).
func (x *semIndex) shareLists(post, start []uint32) {
	first := make(map[uint64]uint32, len(x.feats)) // a hash of postings → the first list with them
	w := uint32(0)
	for id := range x.feats {
		p := post[start[id]:start[id+1]]
		h := hashPostings(p)
		if l, ok := first[h]; ok {
			if sl := x.lists[l]; slices.Equal(post[sl.start:sl.start+sl.df], p) {
				x.feats[id].list = l
				continue
			}
			// a hash collision: the postings get a list of their own, unshared
		} else {
			first[h] = uint32(len(x.lists))
		}
		x.feats[id].list = uint32(len(x.lists))
		x.lists = append(x.lists, semList{start: w, df: uint32(len(p))})
		w += uint32(copy(post[w:], p)) // w <= start[id]: the lists laid out stay intact
	}
	x.post = slices.Clone(post[:w])
}

// semPatchArena flags the start of a list held in the patch arena (semIndex.xpost).
const semPatchArena = 1 << 31

// postings returns list sl's postings.
func (x *semIndex) postings(sl *semList) []uint32 { return x.span(sl.start, sl.df) }

// span returns the df postings of a list that start at start (semList.start).
func (x *semIndex) span(start, df uint32) []uint32 {
	if start&semPatchArena != 0 {
		start &^= semPatchArena
		return x.xpost[start : start+df]
	}
	return x.post[start : start+df]
}

// hashPostings hashes a sequence of postings.
func hashPostings(p []uint32) uint64 {
	h := uint64(len(p))
	for _, v := range p {
		h = (h ^ uint64(v)) * 0x9e3779b97f4a7c15
		h ^= h >> 29
	}
	return h
}

// markCommon sets commonDF and gives the common lists their ids (semList.cid).
func (x *semIndex) markCommon(n int) {
	x.commonDF = uint32(max(n/semCommonFrac, semCommonMin))
	dfs := make([]uint32, len(x.lists))
	for l, sl := range x.lists {
		dfs[l] = sl.df
	}
	if c := countAbove(dfs, x.commonDF); c > maxCommonLists {
		slices.Sort(dfs)
		x.commonDF = dfs[len(dfs)-maxCommonLists]
	}
	x.numberCommon()
}

// numberCommon gives the lists of more than commonDF documents their common ids, in list
// order, and sums their postings (commonPost).
func (x *semIndex) numberCommon() {
	x.ncommon, x.commonPost = 0, 0
	for l := range x.lists {
		sl := &x.lists[l]
		sl.cid = 0
		if sl.df > x.commonDF {
			x.ncommon++
			sl.cid = uint32(x.ncommon)
			x.commonPost += int(sl.df)
		}
	}
}

// buildForward holds the common lists per document: forward postings (see semIndex).
func (x *semIndex) buildForward(n int) {
	off := make([]uint32, n+1) // a document's records are recs[off[doc]:off[doc+1]]
	for _, sl := range x.lists {
		if sl.cid != 0 {
			for _, p := range x.postings(&sl) {
				off[p>>8+1]++
			}
		}
	}
	for d := range n {
		off[d+1] += off[d]
	}
	recs := make([]uint32, off[n]) // cid<<8 | q, by document in increasing common id
	fill := slices.Clone(off[:n])
	for _, sl := range x.lists {
		if sl.cid != 0 {
			for _, p := range x.postings(&sl) {
				d := p >> 8
				recs[fill[d]] = (sl.cid-1)<<8 | p&0xff
				fill[d]++
			}
		}
	}
	x.fwdOff = make([]uint32, n+1)
	x.fwd = make([]uint16, 0, off[n]+off[n]/8)
	for d := range n {
		x.fwd = appendForward(x.fwd, recs[off[d]:off[d+1]])
		x.fwdOff[d+1] = uint32(len(x.fwd))
	}
}

// appendForward appends a document's forward postings (cid<<8 | q, in increasing common id)
// to fwd as records gap | q<<8: gap is the distance from the previous id (from 0 for the
// first), and a gap of fwdSkip or more takes filler records (fwdSkip, 0), which move the
// id without adding anything. Two bytes a posting keep the candidates' postings, read from
// scattered documents, to few cache lines.
func appendForward(fwd []uint16, common []uint32) []uint16 {
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

// feature returns the feature id of feature f.
func (x *semIndex) feature(f uint32) (uint32, bool) {
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
	common  []int32            // the query's common terms, by index in terms
	rare    []int32            // the query's rarer terms walked, by index in terms
	part    []int32            // kthLargest's values: the rarer terms' weights or the candidates' partial scores
	chosen  []uint32           // the candidates complete completes
	sel     []int32            // kthLargestSpan's buffer
	slots   []int32            // mergeTerms' table, zero between uses
	marks   []int32            // queryTerms' marks, by list, zero between uses
	fids    []uint32           // queryTerms' feature ids, then lists
	fws     []float32          // queryTerms' weights
	qvec    embed.SparseVector // the query's vector, its buffers reused (embed.SparseIntoEmbedder)
}

// maxPooledQuery bounds the features of a query vector whose buffers semScratch keeps.
const maxPooledQuery = 1 << 14

var semScratchPool = sync.Pool{New: func() any { return &semScratch{lw: new([maxCommonLists]int32)} }}

// semTerm is one of the query's posting lists and its weight.
type semTerm struct {
	list, start, df, cid uint32
	w                    float32 // the query's value × the feature's scale, summed over the list's features
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
	return g.semanticSparseCands(q, allow, limit, max(semCandsPerHit*limit, semCommonCands))
}

// semanticSparseCands is semanticSparse completing at most cands candidates through the
// forward postings when it takes that path (clauseBest asks for fewer, clauseCands).
func (g *Generation) semanticSparseCands(q *Query, allow *roaring.Bitmap, limit, cands int) []Hit {
	x := &g.sem
	st := semScratchPool.Get().(*semScratch)
	defer semScratchPool.Put(st)
	var v embed.SparseVector
	if se, ok := x.sparse.(embed.SparseIntoEmbedder); ok {
		v = se.EmbedSparseInto(st.qvec, q.Text)
		if len(v.Idx) <= maxPooledQuery { // a huge query: do not pin its buffers
			st.qvec = v
		}
	} else {
		v = x.sparse.EmbedSparse(q.Text)
	}
	if len(v.Idx) == 0 {
		return nil
	}
	ts, sum := x.queryTerms(st, v)
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
	common, rare := st.common[:0], st.rare[:0]
	commonPostings, postings := 0, 0
	for i := range ts {
		t := &ts[i]
		t.wi = int32(math.Round(float64(t.w) * inv))
		postings += int(t.df)
		if t.cid == 0 {
			rare = append(rare, int32(i))
		} else {
			common = append(common, int32(i))
			commonPostings += int(t.df)
		}
	}
	st.common, st.rare = common, rare
	s.top.reset(limit)
	switch {
	case commonPostings > x.completionCost(g.n, cands):
		x.forward(st, bits, &s.top, step, cands)
	case postings*semDenseFrac >= g.n:
		x.dense(st, bits, &s.top, step, g.n)
	default:
		for i := range ts {
			x.accumulate(st, &ts[i], bits)
		}
		for _, d := range st.touched {
			if sc := st.acc[d]; sc > 0 {
				s.top.push(cand{doc: d, score: float32(float64(sc) * step)})
			}
		}
		st.reset()
	}
	return hitsOf(s.top.best(), semNames)
}

// semDenseFrac: the sparse retriever scores every term's list into a dense array of scores,
// without recording which documents it touched, when the lists hold at least
// n/semDenseFrac postings (n documents). Recording costs a posting about 2 ns, about as
// much as scanning and clearing the array costs a document: on the titles of the generated
// 10k catalogue (40,000 postings a query) the dense array halves the time of the lists.
const semDenseFrac = 2

// forward scores the candidates found by the query's strongest rarer terms (and the
// shortest common ones, when those find too few) in full through the forward postings, and
// offers them to top (see semCommonFrac).
func (x *semIndex) forward(st *semScratch, bits []uint64, top *topN, step float64, cands int) {
	ts, common, rare := st.terms, st.common, st.rare
	if len(rare) > semRareTerms {
		rare = strongest(st, ts, rare, semRareTerms)
	}
	for _, r := range rare {
		x.accumulate(st, &ts[r], bits)
	}
	if len(st.touched) < cands {
		// too few candidates: walk the shortest common lists too
		slices.SortFunc(common, func(a, b int32) int { return cmpDF(&ts[a], &ts[b]) })
	}
	lw := st.lw
	for _, c := range common {
		lw[ts[c].cid-1] = ts[c].wi
	}
	for _, c := range common {
		if len(st.touched) >= cands {
			break
		}
		t := &ts[c]
		x.accumulate(st, t, bits)
		lw[t.cid-1] = 0
	}
	x.complete(st, top, step, cands)
	for _, c := range common {
		lw[ts[c].cid-1] = 0
	}
	st.reset()
}

// dense scores every allowed document through the lists of all the query's terms, in a
// dense array, and offers the positive scores to top.
func (x *semIndex) dense(st *semScratch, bits []uint64, top *topN, step float64, n int) {
	acc := st.acc[:n]
	for i := range st.terms {
		t := &st.terms[i]
		w := t.wi
		for _, p := range x.span(t.start, t.df) {
			acc[p>>8] += w * int32(int8(p))
		}
	}
	// Only documents above floor can enter top: floor is 0 and, once top is full, its worst
	// score in steps less a margin for the float32 rounding of scores (2^-24).
	floor, inv := int32(0), (1-1e-6)/step
	for d, sc := range acc {
		if sc <= floor || (bits != nil && bits[d>>6]&(1<<(d&63)) == 0) {
			continue
		}
		if top.push(cand{doc: uint32(d), score: float32(float64(sc) * step)}) && top.full() {
			floor = max(floor, int32(float64(top.floor())*inv))
		}
	}
	clear(acc)
}

// reset clears what the tracked accumulation (accumulate) left in st.
func (st *semScratch) reset() {
	for _, d := range st.touched {
		st.acc[d] = 0
		st.seen[d>>6] = 0
	}
	st.touched = st.touched[:0]
}

// queryTerms resolves the features of the query's vector v to terms, one per list (the
// weights of features sharing a list summed), in st.terms, and returns them with the sum of
// their absolute weights.
func (x *semIndex) queryTerms(st *semScratch, v embed.SparseVector) ([]semTerm, float64) {
	// Each pass resolves one level and the next pass reads what it found: the loads of a
	// pass are independent, so their cache misses can overlap.
	if len(x.lists) > maxListMarks {
		return x.finishTerms(st, x.hashMergedTerms(st, v))
	}
	// features → feature ids and the query's values (in st.fids, st.fws), → lists and
	// weights, merged per list through st.marks (1 + the index of the list's term, zero
	// between uses): the weights of one list summed in feature order into its first term
	ids, ws := slices.Grow(st.fids[:0], len(v.Idx))[:len(v.Idx)], slices.Grow(st.fws[:0], len(v.Idx))[:len(v.Idx)]
	n := 0
	for i, f := range v.Idx {
		if id, ok := x.feature(f); ok {
			ids[n], ws[n] = id, v.Val[i]
			n++
		}
	}
	ids, ws = ids[:n], ws[:n:n]
	st.fids, st.fws = ids, ws
	for i, id := range ids {
		fe := &x.feats[id]
		ids[i], ws[i] = fe.list, ws[i]*fe.scale
	}
	if len(st.marks) < len(x.lists) {
		st.marks = make([]int32, len(x.lists))
	}
	marks := st.marks
	ts := slices.Grow(st.terms[:0], n)[:n]
	n = 0
	for i, l := range ids {
		if m := marks[l]; m != 0 {
			ts[m-1].w += ws[i]
			continue
		}
		ts[n] = semTerm{list: l, w: ws[i]}
		n++
		marks[l] = int32(n)
	}
	ts = ts[:n]
	for i := range ts {
		marks[ts[i].list] = 0
	}
	return x.finishTerms(st, ts)
}

// finishTerms fills in the lists of the query's merged terms, keeps them in st.terms and
// returns them with the sum of their absolute weights.
func (x *semIndex) finishTerms(st *semScratch, ts []semTerm) ([]semTerm, float64) {
	var sum float64
	for i := range ts {
		t, sl := &ts[i], &x.lists[ts[i].list]
		t.start, t.df, t.cid = sl.start, sl.df, sl.cid
		sum += math.Abs(float64(t.w))
	}
	st.terms = ts
	return ts, sum
}

// hashMergedTerms resolves v's features to terms one per feature in st.terms, then their
// lists and weights, and merges them per list through mergeTerms' hash table: queryTerms'
// path when there are too many lists for a mark each.
func (x *semIndex) hashMergedTerms(st *semScratch, v embed.SparseVector) []semTerm {
	ts := st.terms[:0]
	for i, f := range v.Idx {
		if id, ok := x.feature(f); ok {
			ts = append(ts, semTerm{list: id, w: v.Val[i]})
		}
	}
	for i := range ts {
		fe := &x.feats[ts[i].list]
		ts[i].list, ts[i].w = fe.list, ts[i].w*fe.scale
	}
	return mergeTerms(st, ts)
}

// mergeTerms sums the weights of the terms of one list into the first of them and returns
// the terms left, in their order. A small open-addressing table (st.slots: 1 + the index of
// a list's term) finds them.
func mergeTerms(st *semScratch, ts []semTerm) []semTerm {
	k := bits.Len(uint(2 * len(ts)))
	if cap(st.slots) < 1<<k {
		st.slots = make([]int32, 1<<k)
	}
	slots, mask := st.slots[:1<<k], uint32(1)<<k-1
	out := ts[:0]
	for _, t := range ts {
		for h := (t.list * 0x9e3779b1) >> (32 - k); ; h = (h + 1) & mask {
			if s := slots[h]; s == 0 {
				slots[h] = int32(len(out) + 1)
				out = append(out, t)
				break
			} else if o := &out[s-1]; o.list == t.list {
				o.w += t.w
				break
			}
		}
	}
	clear(slots)
	return out
}

// maxListMarks bounds the posting lists for which queryTerms keeps a mark per
// list (4 bytes each, in every scratch) to merge a query's terms; more lists take
// mergeTerms' hash table.
const maxListMarks = 1 << 22

// strongest returns the k terms of idx with the largest weights (and any tied with the
// k-th), in their order.
func strongest(st *semScratch, ts []semTerm, idx []int32, k int) []int32 {
	// the bits of a float's absolute value order as the values do
	mag := func(t *semTerm) int32 { return int32(math.Float32bits(t.w) &^ (1 << 31)) }
	vals := st.part[:0]
	for _, i := range idx {
		vals = append(vals, mag(&ts[i]))
	}
	floor := kthLargest(vals, k-1)
	st.part = vals
	out := idx[:0]
	for _, i := range idx {
		if mag(&ts[i]) >= floor {
			out = append(out, i)
		}
	}
	return out
}

// cmpDF orders terms by document frequency, then list.
func cmpDF(a, b *semTerm) int {
	if a.df != b.df {
		return int(a.df) - int(b.df)
	}
	return int(a.list) - int(b.list)
}

// completionCost estimates the cost, in postings, of completing cands candidates through
// the forward postings of the n documents (their common postings; the filler records of
// appendForward, which depend on how the common lists are numbered, are not counted): the
// sparse retriever walks a query's common lists when they hold fewer postings.
func (x *semIndex) completionCost(n, cands int) int {
	return cands * x.commonPost / max(n, 1)
}

// complete adds the common features (weights st.lw by common id) to the best cands of the
// touched documents (and any tied with the last) through their forward postings, and
// offers them to top, scores in units of step.
func (x *semIndex) complete(st *semScratch, top *topN, step float64, cands int) {
	acc, chosen := st.acc, st.touched
	if len(chosen) > cands {
		// the partial scores, in the order of touched, and their span; kthLargestSpan
		// leaves part as it is (its ranges go to st.sel), so the choice reads it again
		part := slices.Grow(st.part[:0], len(chosen))[:len(chosen)]
		lo, hi := acc[chosen[0]], acc[chosen[0]]
		for i, d := range chosen {
			sc := acc[d]
			part[i] = sc
			lo, hi = min(lo, sc), max(hi, sc)
		}
		st.sel = slices.Grow(st.sel[:0], len(part))
		floor := kthLargestSpan(part, cands-1, lo, hi, st.sel)
		st.part = part
		chosen = st.chosen[:0]
		for i, d := range st.touched[:len(part)] {
			if part[i] >= floor {
				chosen = append(chosen, d)
			}
		}
		st.chosen = chosen
	}
	offer := func(d uint32, sc int32) {
		if sc > 0 {
			top.push(cand{doc: d, score: float32(float64(sc) * step)})
		}
	}
	// two documents at a time: two chains of dependent loads, and two streams of records
	// to fetch, in flight together
	for i := 0; i+1 < len(chosen); i += 2 {
		a, b := chosen[i], chosen[i+1]
		sa, sb := dotForward2(x.fwd[x.fwdOff[a]:x.fwdOff[a+1]], x.fwd[x.fwdOff[b]:x.fwdOff[b+1]], st.lw)
		offer(a, acc[a]+sa)
		offer(b, acc[b]+sb)
	}
	if len(chosen)%2 == 1 {
		d := chosen[len(chosen)-1]
		offer(d, acc[d]+dotForward(x.fwd[x.fwdOff[d]:x.fwdOff[d+1]], 0, 0, st.lw))
	}
}

// kthLargest returns the k-th largest (from 0) of v, k < len(v), reordering v. It is a
// radix select: each pass counts the values left by 256 ranges of their span and keeps the
// range holding the k-th (in place, at the front of v), so a pass costs a few operations
// a value and no unpredictable branch but the range test; quickselect's partitions
// mispredicted about every other comparison (6 µs for 500 partial scores).
func kthLargest(v []int32, k int) int32 {
	lo, hi := v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return kthLargestSpan(v, k, lo, hi, v)
}

// kthLargestSpan is kthLargest of v given its smallest and largest values lo and hi: the
// first pass keeps its range in buf (which may be v; else v is left as it is, and buf
// needs room for all of v), the next ones in place.
func kthLargestSpan(v []int32, k int, lo, hi int32, buf []int32) int32 {
	for {
		if lo == hi {
			return lo
		}
		shift := max(bits.Len32(uint32(hi-lo))-8, 0) // hi-lo < 2^32: a uint32 holds it
		var count [256]int32
		for _, x := range v {
			count[uint32(x-lo)>>shift]++
		}
		r := 255
		for ; int(count[r]) <= k; r-- {
			k -= int(count[r])
		}
		buf = buf[:len(v)]
		n := 0
		for _, x := range v {
			if int(uint32(x-lo)>>shift) == r {
				buf[n] = x
				n++
			}
		}
		v = buf[:n]
		lo, hi = v[0], v[0]
		for _, x := range v[1:] {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
}

// dotForward returns sum plus the dot product of a document's forward postings (see
// appendForward) with the query's weights by common id, the records fwd starting after
// common id c. (Not inlined: inside complete's loop the compiler spills the running id to
// the stack.)
//
//go:noinline
func dotForward(fwd []uint16, c uint16, sum int32, lw *[maxCommonLists]int32) int32 {
	_ = lw[0] // the nil check, out of the loop
	for _, r := range fwd {
		c += r & 0xff
		sum += lw[c] * int32(int8(r>>8))
	}
	return sum
}

// dotForward2 returns dotForward of two documents, interleaved as long as both have
// records.
func dotForward2(a, b []uint16, lw *[maxCommonLists]int32) (int32, int32) {
	n := min(len(a), len(b))
	ca, cb, sa, sb := dotForwardPairs(a[:n], b[:n], lw)
	return dotForward(a[n:], ca, sa, lw), dotForward(b[n:], cb, sb, lw)
}

// dotForwardPairs is dotForward2's interleaved loop over the records of two documents, a
// and b of one length, returning the common ids reached and the sums. (A function of its
// own so that the loop keeps its values in registers.)
//
//go:noinline
func dotForwardPairs(a, b []uint16, lw *[maxCommonLists]int32) (ca, cb uint16, sa, sb int32) {
	b = b[:len(a)]
	_ = lw[0]
	for i, ra := range a {
		rb := b[i]
		ca += ra & 0xff
		cb += rb & 0xff
		sa += lw[ca] * int32(int8(ra>>8))
		sb += lw[cb] * int32(int8(rb>>8))
	}
	return ca, cb, sa, sb
}

// accumulate adds t's weight × the values of its list to the allowed documents' scores,
// and appends the documents seen for the first time to st.touched.
func (x *semIndex) accumulate(st *semScratch, t *semTerm, bits []uint64) {
	post := x.span(t.start, t.df)
	n := len(st.touched)
	// grown before the loops, so that no call to grow it keeps their values out of
	// registers
	touched := slices.Grow(st.touched, len(post))[:n+len(post)]
	if bits == nil {
		n = accumulateAll(post, t.wi, st.acc, st.seen, touched, n)
	} else {
		n = accumulateAllowed(post, t.wi, st.acc, st.seen, touched, n, bits)
	}
	st.touched = touched[:n]
}

// accumulateAll is accumulate's loop for every document: it adds w × the postings' values
// to acc, records the documents not yet in seen in touched[n:] and returns the new n.
func accumulateAll(post []uint32, w int32, acc []int32, seen []uint64, touched []uint32, n int) int {
	for _, p := range post {
		d := p >> 8
		if m := uint64(1) << (d & 63); seen[d>>6]&m == 0 {
			seen[d>>6] |= m
			touched[n] = d
			n++
		}
		acc[d] += w * int32(int8(p))
	}
	return n
}

// accumulateAllowed is accumulateAll for the documents of bits only.
func accumulateAllowed(post []uint32, w int32, acc []int32, seen []uint64, touched []uint32, n int, bits []uint64) int {
	for _, p := range post {
		d := p >> 8
		if bits[d>>6]&(1<<(d&63)) == 0 {
			continue
		}
		if m := uint64(1) << (d & 63); seen[d>>6]&m == 0 {
			seen[d>>6] |= m
			touched[n] = d
			n++
		}
		acc[d] += w * int32(int8(p))
	}
	return n
}
