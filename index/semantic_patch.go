package index

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/capdex/capdex/index/embed"
)

// A sparse semantic index built by patchSparse holds what a build from scratch holds (the
// same features, feature ids, scales, lists, list ids and postings: semDiff in the tests)
// but for the numbering of the common lists, which the forward postings are keyed by. A
// change keeps the common id of every list it does not touch, so that only the forward
// postings of the documents whose common lists changed are written again; the others are
// copied. A common id of a list that no longer exists stays unused (its records in other
// documents weigh nothing, since no query gives it a weight) until the forward postings
// are numbered again: when they hold a quarter more records than at their last numbering,
// or the ids run out.
//
// What a query reads is then what it reads in a full build: the same terms (lists), the
// same weights and postings, the same choice of rarer and common lists (list ids and
// document frequencies), and the same completion of candidates through the forward
// postings, whose integer sums do not depend on the common ids.

// semRenumberEveryPatch makes every patch number the common lists again (for tests).
var semRenumberEveryPatch = false

// canPatchSparse reports whether g's sparse semantic index can be patched from the one it
// reuses (g.shared): the same documents at the same docIDs, their vectors kept by the same
// embedder, features numbered through the rank table (no map), and common lists chosen by
// document frequency alone (fewer than maxCommonLists).
func (g *Generation) canPatchSparse() bool {
	if g.an == nil || g.shared == nil || g.prev == nil || g.prevDoc == nil || (g.prev.sparse != nil && len(g.prev.sparse) != g.n) {
		return false
	}
	px := &g.shared.sem
	dim := g.emb.Dim()
	return px.sparse != nil && px.absMax != nil && px.fmap == nil && dim > 0 && dim <= maxDenseFeatureTable && len(px.post) < semPatchArena &&
		len(px.ftab) == (dim+63)/64 && sameEmbedder(g.prev.emb, g.emb) && sameEmbedder(g.shared.emb, g.emb) &&
		px.commonDF == uint32(max(g.n/semCommonFrac, semCommonMin))
}

// semTouched is a feature that a changed document holds or held.
type semTouched struct {
	raw    uint32
	oldFid int32    // its id in the previous index, -1 when it was in no document
	post   []uint32 // its postings now (none when no document holds it any more)
	absMax float32  // its largest absolute value now
	group  int32    // its group (semGroup) among the touched features
}

// semGroup is a set of touched features whose postings are now the same.
type semGroup struct {
	post []uint32
	into int32 // the previous list that has these postings and keeps untouched features, or -1
	from int32 // the previous list of the group's first feature, or -1
}

// patchSparse builds g's sparse semantic index from the previous generation's (g.shared)
// when only the texts of some documents changed (canPatchSparse). The changed documents are
// embedded; the features they hold or held get their postings, largest value (all their
// postings quantised again when it moved), document frequency and scale anew; those
// features are grouped into lists again, and the lists of untouched features are kept as
// they are. It reports false, having changed nothing, when the change cannot be patched.
func (g *Generation) patchSparse(ctx context.Context) (bool, error) {
	px := &g.shared.sem
	n := g.n
	vecs := make([]embed.SparseVector, n)
	var changed []int
	for d := range n {
		if pd := g.reused(d); pd >= 0 {
			if g.prev.sparse != nil {
				vecs[d] = g.prev.sparse[pd] // missing when not kept (reuse_derived.go)
			}
		} else {
			changed = append(changed, d)
		}
	}
	// the changed documents' vectors now, and before (kept, or embedded again from the
	// previous generation's capability)
	old := make([]embed.SparseVector, len(changed))
	if err := parallelFor(ctx, 0, len(changed), func(i int) {
		d := changed[i]
		vecs[d] = g.sem.sparse.EmbedSparse(embedText(g.snap.Caps[d]))
		if g.prev.sparse != nil && g.prev.sparse[d].Idx != nil {
			old[i] = g.prev.sparse[d]
		} else {
			old[i] = g.sem.sparse.EmbedSparse(embedText(g.shared.snap.Caps[d]))
		}
	}); err != nil {
		return false, err
	}
	dv := &derivedVectors{vecs: vecs, caps: g.snap.Caps, emb: g.sem.sparse}
	isChanged := make([]bool, n)
	var raws []uint32
	for i, d := range changed {
		isChanged[d] = true
		raws = append(raws, old[i].Idx...)
		raws = append(raws, vecs[d].Idx...)
	}
	slices.Sort(raws)
	raws = slices.Compact(raws)
	if len(raws) > 0 && int(raws[len(raws)-1]/64) >= len(px.ftab) {
		return false, nil // a feature beyond the table: a build numbers it in a map
	}

	ts := make([]semTouched, len(raws))
	for i, f := range raws {
		t, err := px.touch(ctx, f, changed, isChanged, old, dv)
		if err != nil {
			return false, err
		}
		ts[i] = t
	}
	groups, members := px.regroup(ts, dv, isChanged)

	x := semIndex{sparse: g.sem.sparse, params: g.sem.params, commonDF: px.commonDF, ncommon: px.ncommon}
	x.ftab = slices.Clone(px.ftab)
	for i := range ts {
		f, bit := ts[i].raw, uint64(1)<<(ts[i].raw%64)
		if len(ts[i].post) > 0 {
			x.ftab[f/64].bits |= bit
		} else {
			x.ftab[f/64].bits &^= bit
		}
	}
	var r uint32
	for i := range x.ftab {
		x.ftab[i].rank = r
		r += uint32(bits.OnesCount64(x.ftab[i].bits))
	}

	// The features in id order; each list is the identity of its first feature's: a
	// previous list (ids below nOld) or a group of touched features (nOld + its index).
	nOld := len(px.lists)
	x.feats, x.absMax = make([]semFeat, r), make([]float32, r)
	listOf := make([]int32, nOld+len(groups))
	for i := range listOf {
		listOf[i] = -1
	}
	var srcs []int32 // by new list: its identity
	fid, ti := 0, 0
	for w := range x.ftab {
		for b := x.ftab[w].bits; b != 0; b &= b - 1 {
			bit := b & -b
			f := uint32(w)*64 + uint32(bits.TrailingZeros64(b))
			for ti < len(ts) && ts[ti].raw < f {
				ti++
			}
			var id int32
			if ti < len(ts) && ts[ti].raw == f {
				t := &ts[ti]
				gr := &groups[t.group]
				id = int32(nOld) + t.group
				if gr.into >= 0 {
					id = gr.into
				}
				x.absMax[fid] = t.absMax
				x.feats[fid].scale = semScale(t.absMax, n, uint32(len(t.post)))
			} else {
				ofid := px.ftab[w].rank + uint32(bits.OnesCount64(px.ftab[w].bits&(bit-1)))
				of := px.feats[ofid]
				id = int32(of.list)
				x.absMax[fid], x.feats[fid].scale = px.absMax[ofid], of.scale
			}
			if listOf[id] < 0 {
				listOf[id] = int32(len(srcs))
				srcs = append(srcs, id)
			}
			x.feats[fid].list = uint32(listOf[id])
			fid++
		}
	}
	// The kept lists stay where they are (the arenas are shared); the groups' postings go
	// to the end of the patch arena (copied: another build may patch px too), unless the
	// arenas are laid out again now (semLayout).
	x.lists, x.post = make([]semList, len(srcs)), px.post
	need, liveMain, liveX := 0, 0, 0
	for _, id := range srcs {
		switch {
		case int(id) >= nOld:
			need += len(groups[int(id)-nOld].post)
		case px.lists[id].start&semPatchArena != 0:
			liveX += int(px.lists[id].df)
		default:
			liveMain += int(px.lists[id].df)
		}
	}
	liveX += need
	layout := semLayout(len(px.post), len(px.xpost)+need, liveMain, liveX)
	if layout == semLayoutAll {
		// every list into one new arena in list order, as a build lays them out, the
		// groups' postings taken from where they are
		if liveMain+liveX >= semPatchArena {
			return false, nil
		}
		post := make([]uint32, 0, liveMain+liveX)
		for l, id := range srcs {
			var p []uint32
			if int(id) < nOld {
				p = px.postings(&px.lists[id])
			} else {
				p = groups[int(id)-nOld].post
			}
			x.lists[l] = semList{start: uint32(len(post)), df: uint32(len(p))}
			post = append(post, p...)
		}
		x.post = post
	} else {
		x.xbuf, x.xpost = px.xbuf.extend(px.xpost, need, len(px.post)/max(semPatchShare, 1))
		for l, id := range srcs {
			if int(id) < nOld {
				x.lists[l] = semList{start: px.lists[id].start, df: px.lists[id].df}
				continue
			}
			p := groups[int(id)-nOld].post
			if len(x.xpost)+len(p) >= semPatchArena {
				return false, nil
			}
			x.lists[l] = semList{start: semPatchArena | uint32(len(x.xpost)), df: uint32(len(p))}
			x.xpost = append(x.xpost, p...)
		}
		if layout == semLayoutPatch {
			x.compactPatch(liveX)
		}
	}

	// Common ids: a kept list keeps its own; a group takes the id of its first feature's
	// previous list when that list kept no untouched feature and no other group took it,
	// and a new id otherwise. The documents whose records change are written again.
	rewrite := slices.Clone(isChanged) // the changed documents and those whose forward records change
	claimed := map[int32]bool{}
	ncommon := 0
	for l, id := range srcs {
		sl := &x.lists[l]
		if int(id) < nOld {
			sl.cid = px.lists[id].cid
		} else if sl.df > x.commonDF {
			gr := &groups[int(id)-nOld]
			if from := gr.from; from >= 0 && px.lists[from].cid != 0 && members[from] == 0 && !claimed[from] {
				claimed[from] = true
				sl.cid = px.lists[from].cid
				markChanged(rewrite, px.postings(&px.lists[from]), gr.post)
			} else {
				x.ncommon++
				sl.cid = uint32(x.ncommon)
				for _, p := range gr.post {
					rewrite[p>>8] = true
				}
			}
		}
		if sl.cid != 0 {
			ncommon++
			x.commonPost += int(sl.df)
		}
	}
	if ncommon > maxCommonLists {
		return false, nil // a build would raise commonDF
	}
	x.fwdExcess = px.fwdExcess
	if x.ncommon <= maxCommonLists {
		x.fwdOff = make([]uint32, n+1)
		x.fwd = make([]uint16, 0, len(px.fwd)+len(px.fwd)/32)
		var recs, redo []uint32
		for d := range n {
			if rewrite[d] {
				redo = append(redo, uint32(d)<<8)
			}
		}
		if err := dv.fill(ctx, redo, func(int) bool { return true }); err != nil {
			return false, err
		}
		for d := range n {
			if rewrite[d] {
				recs = x.commonRecords(recs[:0], dv.at(d))
				x.fwd = appendForward(x.fwd, recs)
			} else {
				x.fwd = append(x.fwd, px.fwd[px.fwdOff[d]:px.fwdOff[d+1]]...)
			}
			x.fwdOff[d+1] = uint32(len(x.fwd))
		}
	}
	if x.ncommon > maxCommonLists || len(x.fwd)-x.commonPost > x.fwdExcess+x.commonPost/4 || semRenumberEveryPatch {
		// stale records or no ids left: number the common lists again, as a build does
		x.numberCommon()
		x.buildForward(n)
		x.fwdExcess = len(x.fwd) - x.commonPost
	}
	g.sem = x
	g.an.sparse, g.an.emb = vecs, g.emb
	g.stats.SemanticPatched = true
	return true, nil
}

// touch derives feature f's postings and largest value now from the previous index (x),
// the changed documents' vectors before (old, in the order of changed) and now (vecs),
// and, when its largest value moved, the vectors of the other documents that hold it.
func (x *semIndex) touch(ctx context.Context, f uint32, changed []int, isChanged []bool, old []embed.SparseVector, vecs *derivedVectors) (semTouched, error) {
	t := semTouched{raw: f, oldFid: -1}
	var op []uint32
	var oldMax float32
	if id, ok := x.feature(f); ok {
		t.oldFid = int32(id)
		sl := x.lists[x.feats[id].list]
		op = x.postings(&sl)
		oldMax = x.absMax[id]
	}
	var cur []docValue // the changed documents' values now, in docID order
	held := false      // a changed document held the largest value
	var newMax float32
	for i, d := range changed {
		if v, ok := valueOf(old[i], f); ok && absf(v) == oldMax {
			held = true
		}
		if v, ok := valueOf(vecs.vecs[d], f); ok {
			cur = append(cur, docValue{d, v})
			newMax = max(newMax, absf(v))
		}
	}
	unchanged := func(d int) bool { return !isChanged[d] }
	if held { // the largest of the unchanged documents' values
		if err := vecs.fill(ctx, op, unchanged); err != nil {
			return t, err
		}
		for _, p := range op {
			if d := p >> 8; !isChanged[d] {
				v, _ := valueOf(vecs.at(int(d)), f)
				newMax = max(newMax, absf(v))
			}
		}
	} else {
		newMax = max(newMax, oldMax)
	}
	t.absMax = newMax
	requant := newMax != oldMax
	if !requant && sameQuantized(op, changed, cur, newMax) {
		t.post = op // the postings are the previous list's: it is kept (regroup)
		return t, nil
	}
	post := make([]uint32, 0, len(op)+len(cur))
	emit := func(d int, v float32) {
		post = append(post, uint32(d)<<8|uint32(uint8(quantize(v, newMax))))
	}
	if !requant {
		// the unchanged documents' postings as they were, copied in runs between the
		// changed documents
		i, k := 0, 0
		for _, d := range changed {
			j := i + searchDoc(op[i:], uint32(d))
			post = append(post, op[i:j]...)
			if j < len(op) && int(op[j]>>8) == d {
				j++
			}
			if k < len(cur) && cur[k].d == d {
				emit(d, cur[k].v)
				k++
			}
			i = j
		}
		t.post = append(post, op[i:]...)
		return t, nil
	}
	if err := vecs.fill(ctx, op, unchanged); err != nil {
		return t, err
	}
	k := 0
	for _, p := range op {
		d := int(p >> 8)
		for ; k < len(cur) && cur[k].d < d; k++ {
			emit(cur[k].d, cur[k].v)
		}
		if !isChanged[d] {
			v, _ := valueOf(vecs.at(d), f)
			emit(d, v)
		}
	}
	for ; k < len(cur); k++ {
		emit(cur[k].d, cur[k].v)
	}
	t.post = post
	return t, nil
}

// docValue is a document's value of a feature.
type docValue struct {
	d int
	v float32
}

// sameQuantized reports whether the changed documents' postings of a feature, from their
// values now (cur, in docID order) quantised by its largest value, are those of its
// previous list (op): held by the same documents, with the same values.
func sameQuantized(op []uint32, changed []int, cur []docValue, absMax float32) bool {
	k := 0
	for _, d := range changed {
		j := searchDoc(op, uint32(d))
		had := j < len(op) && int(op[j]>>8) == d
		has := k < len(cur) && cur[k].d == d
		if had != has || has && op[j] != uint32(d)<<8|uint32(uint8(quantize(cur[k].v, absMax))) {
			return false
		}
		if has {
			k++
		}
	}
	return true
}

// searchDoc returns the index of the first posting of post whose document is d or later.
func searchDoc(post []uint32, d uint32) int {
	lo, hi := 0, len(post)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if post[m]>>8 < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// samplePostings hashes a few postings of p and its length: postings that differ in a
// sampled place hash apart, and the others are told apart by comparing them.
func samplePostings(p []uint32) uint64 {
	n := len(p)
	return hashPostings([]uint32{uint32(n), p[0], p[n/4], p[n/2], p[3*n/4], p[n-1]})
}

// regroup groups the touched features (ts, in feature order) by their postings now, and
// finds the groups whose postings are those of a previous list that keeps untouched
// features (which they then join). It returns the groups and, by previous list, how many
// untouched features it keeps.
func (x *semIndex) regroup(ts []semTouched, vecs *derivedVectors, isChanged []bool) ([]semGroup, []int32) {
	members := make([]int32, len(x.lists))
	for _, fe := range x.feats {
		members[fe.list]++
	}
	var groups []semGroup
	byHash := map[uint64][]int32{}
	for i := range ts {
		t := &ts[i]
		if t.oldFid >= 0 {
			members[x.feats[t.oldFid].list]--
		}
		if len(t.post) == 0 {
			t.group = -1
			continue
		}
		h := samplePostings(t.post)
		t.group = -1
		for _, c := range byHash[h] {
			if slices.Equal(groups[c].post, t.post) {
				t.group = c
				break
			}
		}
		if t.group < 0 {
			from := int32(-1)
			if t.oldFid >= 0 {
				from = int32(x.feats[t.oldFid].list)
			}
			t.group = int32(len(groups))
			groups = append(groups, semGroup{post: t.post, into: -1, from: from})
			byHash[h] = append(byHash[h], t.group)
		}
	}
	for gi := range groups {
		gr := &groups[gi]
		if gr.from >= 0 {
			// postings a touched feature kept (touch): its previous list, as it is
			if op := x.postings(&x.lists[gr.from]); len(op) == len(gr.post) && &op[0] == &gr.post[0] {
				gr.into = gr.from
				members[gr.from]++ // the list is kept: no other group takes its common id
				continue
			}
		}
		if slices.ContainsFunc(gr.post, func(p uint32) bool { return isChanged[p>>8] }) {
			continue // no untouched list holds a changed document
		}
		// a list with these postings holds their first document, an unchanged one
		for _, f := range vecs.at(int(gr.post[0] >> 8)).Idx {
			id, ok := x.feature(f)
			if !ok {
				continue
			}
			l := x.feats[id].list
			if sl := &x.lists[l]; members[l] > 0 && int(sl.df) == len(gr.post) && slices.Equal(x.postings(sl), gr.post) {
				gr.into = int32(l)
				break
			}
		}
	}
	return groups, members
}

// A patched index keeps the lists of untouched features in the arena they are in and puts
// the others in the patch arena (xpost). Once it holds more than 1/semPatchShare as many
// postings as the main arena, the patch lays out again its live lists alone or every list
// in one new arena, as a build does (semLayout). 0 never lays out again. (A variable for
// tests.)
var semPatchShare = 4

// semPatchBuf is the backing array of patch arenas (semIndex.xpost), shared by the
// generations that patched one another in turn: each appends its lists after the
// postings of the one it patched, which reads none of them. used is how many postings
// were written; a patch reserves room by moving it from the length of the arena it
// extends, so a second patch of the same generation copies the arena instead.
type semPatchBuf struct {
	buf  []uint32
	used atomic.Int64
}

// extend returns a patch arena that holds xpost (b's, or nil) and room for need more
// postings, and its backing array; a new one has room for at least size postings (those
// the arena holds until it is compacted).
func (b *semPatchBuf) extend(xpost []uint32, need, size int) (*semPatchBuf, []uint32) {
	n := len(xpost)
	if b != nil && cap(b.buf)-n >= need && b.used.CompareAndSwap(int64(n), int64(n+need)) {
		return b, b.buf[:n]
	}
	nb := &semPatchBuf{buf: make([]uint32, n, max(2*(n+need), size+need))}
	copy(nb.buf, xpost)
	nb.used.Store(int64(n + need))
	return nb, nb.buf[:n]
}

// How a patch lays out the arenas (semLayout).
const (
	semLayoutKeep  = iota // the patch arena extended
	semLayoutPatch        // the patch arena's live lists alone into a new one (compactPatch)
	semLayoutAll          // every list into one new arena, as a build lays them out
)

// semLayout decides how a patch lays out its arenas, from the postings of the main arena
// (main, P) and of the patch arena once extended (patch), and the live postings each would
// hold (liveMain, liveX: A). While the patch arena holds at most 1/semPatchShare (s) of the
// main arena's postings it is extended. Past that, the lists a patch touches being mostly
// the same ones (the common n-grams' lists are in most documents), the main arena's other
// lists stay live, and copying only the patch arena's live lists into a new one costs A
// every (P/s - A)/t patches (t postings touched a patch), against P every P/(s t) for
// laying everything out again: the patch arena alone is laid out when A < P/(s+1) and less
// than P/s of the main arena is dead (lists moved out of it), which bounds the dead
// postings as laying everything out does; everything otherwise. On the generated 10k
// catalogue one document's lists hold over a quarter of the postings (its common n-grams),
// so every patch lays everything out, at once (no copy into the patch arena first).
func semLayout(main, patch, liveMain, liveX int) int {
	switch {
	case patch*semPatchShare <= main:
		return semLayoutKeep
	case (main-liveMain)*semPatchShare > main || liveX*(semPatchShare+1) >= main:
		return semLayoutAll
	}
	return semLayoutPatch
}

// compactPatch copies the lists of the patch arena, live postings in all, into a new
// patch arena with room for what it may hold until it is laid out again.
func (x *semIndex) compactPatch(live int) {
	nb := &semPatchBuf{buf: make([]uint32, 0, live+len(x.post)/max(semPatchShare, 1))}
	for l := range x.lists {
		if sl := &x.lists[l]; sl.start&semPatchArena != 0 {
			p := x.postings(sl)
			sl.start = semPatchArena | uint32(len(nb.buf))
			nb.buf = append(nb.buf, p...)
		}
	}
	nb.used.Store(int64(len(nb.buf)))
	x.xbuf, x.xpost = nb, nb.buf
}

// markChanged sets changed[d] for every document whose posting differs between a and b
// (held by one only, or with another value).
func markChanged(changed []bool, a, b []uint32) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		for i < len(a) && j < len(b) && a[i] == b[j] {
			i++
			j++
		}
		switch {
		case i == len(a) && j == len(b):
		case j == len(b) || (i < len(a) && a[i]>>8 < b[j]>>8):
			changed[a[i]>>8] = true
			i++
		case i == len(a) || b[j]>>8 < a[i]>>8:
			changed[b[j]>>8] = true
			j++
		default:
			if a[i] != b[j] {
				changed[a[i]>>8] = true
			}
			i++
			j++
		}
	}
}

// commonRecords appends to recs a document's common postings (cid-1)<<8 | q, in increasing
// common id, from its vector v.
func (x *semIndex) commonRecords(recs []uint32, v embed.SparseVector) []uint32 {
	for i, f := range v.Idx {
		id, ok := x.feature(f)
		if !ok {
			continue
		}
		if sl := x.lists[x.feats[id].list]; sl.cid != 0 {
			recs = append(recs, (sl.cid-1)<<8|uint32(uint8(quantize(v.Val[i], x.absMax[id]))))
		}
	}
	slices.Sort(recs)
	return slices.Compact(recs) // the features of one list give one record
}

// valueOf returns the value of feature f in v.
func valueOf(v embed.SparseVector, f uint32) (float32, bool) {
	if i, ok := slices.BinarySearch(v.Idx, f); ok {
		return v.Val[i], true
	}
	return 0, false
}

// absf is |v|, as the build computes it.
func absf(v float32) float32 { return float32(math.Abs(float64(v))) }
