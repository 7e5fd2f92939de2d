package index

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"
)

// lexList is a term's postings and entries outside the arena of lexIndex (lexIndex.patch).
type lexList struct {
	docs []uint32
	ftf  []uint32
}

// A lexical index built by patchLexical shares the arena, the dictionary and the kept
// analysis of unchanged documents with the generation it came from, and holds the lists of
// the terms a change touched in lexIndex.patch (terms new since the dictionary was built get
// ids after its own, in lexIndex.more). Once the patched lists hold more than
// 1/lexPatchShare of the postings, the patch compacts them into a new arena (compact: a copy
// of every list, in term order, nothing analysed or sorted).
const lexPatchShare = 4

// termID returns the id of a term that occurs in some document.
func (x *lexIndex) termID(term string) (uint32, bool) {
	id, ok := x.dict[term]
	if !ok && x.more != nil {
		id, ok = x.more[term]
	}
	return id, ok && x.df[id] > 0
}

// canPatch reports whether g's lexical index can be patched from the one it reuses: the
// same documents at the same docIDs, the analysis of the unchanged ones kept in the same
// vocabulary, and the same parameters.
func (g *Generation) canPatch() bool {
	if g.an == nil || g.shared == nil || g.prev == nil || g.prev.voc == nil || g.prevDoc == nil || g.prev.voc.Outgrown(g.prev.terms) {
		return false
	}
	px := &g.shared.lex
	return px.params == currentLexicalParams() && px.off != nil
}

// patchLexical builds g's lexical index from the previous generation's (g.shared) when only
// the texts of some documents changed (canPatch): the changed documents are analysed, the
// lists of the terms they had or have are rebuilt (the others are shared), and the sums of
// the field lengths, df and idf are updated. What a search reads is then what a build from
// scratch gives (lexDiff in the tests): the same entries per term, df, idf and norms; only
// the term ids of terms new since the arena differ, and scores depend on no term id.
func (g *Generation) patchLexical(ctx context.Context) error {
	px := &g.shared.lex
	x := &g.lex
	voc := g.prev.voc
	voc.Lock()
	defer voc.Unlock()
	g.an.voc = voc
	g.an.lex = make([]lexDoc, g.n)
	var changed []int
	for d := range g.n {
		if pd := g.reused(d); pd >= 0 {
			if g.prev.lexKept(pd) {
				g.an.lex[d] = g.prev.lex[pd]
			} // else not kept here either: a later patch derives it (reuse_derived.go)
		} else {
			changed = append(changed, d)
		}
	}
	if err := parallelFor(ctx, 0, len(changed), func(i int) {
		ld := &g.an.lex[changed[i]]
		ld.analyze(g.snap.Caps[changed[i]])
		ld.ents = slices.Clip(ld.ents)
	}); err != nil {
		return err
	}

	x.params = px.params
	x.concepts = make([]atomic.Pointer[[]uint32], len(px.concepts))
	x.vocab = new(lexVocab)
	x.dict, x.off, x.docs, x.eoff, x.ftf = px.dict, px.off, px.docs, px.eoff, px.ftf
	x.more = maps.Clone(px.more)
	if x.more == nil {
		x.more = map[string]uint32{}
	}
	x.df = slices.Clone(px.df)
	x.norms = px.norms
	x.norms.lens = slices.Clone(px.norms.lens)
	x.norms.flen = slices.Clone(px.norms.flen)

	// the entries each changed document has now, by term id, in field order
	adds := map[uint32][]docEntries{}
	touched := map[uint32]bool{} // terms whose list changes
	isChanged := make(map[uint32]bool, len(changed))
	var tids []uint32
	for _, d := range changed {
		isChanged[uint32(d)] = true
		// the old version: its terms lose the document, its lengths leave the sums
		oldTerms, oldLen := g.oldLex(d, g.shared.snap.Caps[d])
		for _, t := range oldTerms {
			id, ok := x.dict[t]
			if !ok {
				id, ok = x.more[t]
			}
			if ok {
				touched[id] = true
			}
		}
		x.norms.remove(oldLen)
		// the new version
		ld := &g.an.lex[d]
		ld.vterms = make([]uint32, len(ld.terms))
		tids = tids[:0]
		for i, t := range ld.terms {
			ld.vterms[i] = voc.Number(t)
			id, ok := x.dict[t]
			if !ok {
				id, ok = x.more[t]
			}
			if !ok {
				id = uint32(len(x.df))
				x.more[t] = id
				x.df = append(x.df, 0)
			}
			tids = append(tids, id)
			touched[id] = true
		}
		ld.terms = nil
		slices.SortFunc(ld.ents, func(a, b lexEntry) int {
			if ta, tb := tids[a.term], tids[b.term]; ta != tb {
				return int(ta) - int(tb)
			}
			return int(a.field) - int(b.field)
		})
		for i := 0; i < len(ld.ents); {
			t := tids[ld.ents[i].term]
			var ftf []uint32
			for ; i < len(ld.ents) && tids[ld.ents[i].term] == t; i++ {
				if len(ftf) > 0 {
					ftf[len(ftf)-1] |= ftfMore
				}
				ftf = append(ftf, uint32(ld.ents[i].field)<<ftfField|uint32(ld.ents[i].tf))
			}
			adds[t] = append(adds[t], docEntries{d: uint32(d), ftf: ftf})
		}
		x.norms.add(ld.flen)
		x.norms.setRow(d, ld.flen[:])
		copy(x.norms.flen[d*numFields:(d+1)*numFields], ld.flen[:])
	}
	x.norms.averages()

	// the touched terms' lists: the unchanged documents' entries, with the changed
	// documents' new ones merged in docID order
	x.patch = make(map[uint32]lexList, len(px.patch)+len(touched))
	maps.Copy(x.patch, px.patch)
	x.patched = px.patched
	for t := range touched {
		var odocs, oftf []uint32
		if int(t) < len(px.df) {
			odocs, oftf = px.list(t)
			if _, ok := px.patch[t]; ok {
				x.patched -= len(odocs)
			}
		}
		add := adds[t]
		slices.SortFunc(add, func(a, b docEntries) int { return int(a.d) - int(b.d) })
		if sameEntries(odocs, oftf, add, isChanged) {
			continue // the list as it was (its df and idf too): kept, shared
		}
		var l lexList
		k := 0
		emit := func(e docEntries) {
			l.docs = append(l.docs, e.d)
			l.ftf = append(l.ftf, e.ftf...)
		}
		e := 0
		for _, d := range odocs {
			for k < len(add) && add[k].d < d {
				emit(add[k])
				k++
			}
			start := e
			for oftf[e]&ftfMore != 0 {
				e++
			}
			e++
			if !isChanged[d] {
				l.docs = append(l.docs, d)
				l.ftf = append(l.ftf, oftf[start:e]...)
			}
		}
		for ; k < len(add); k++ {
			emit(add[k])
		}
		df := uint32(len(l.docs))
		x.patch[t] = l
		x.patched += len(l.docs)
		x.df[t] = df
	}
	x.idf = slices.Clone(px.idf)
	x.idf = append(x.idf, make([]float32, len(x.df)-len(x.idf))...)
	for t := range touched {
		x.idf[t] = lexIDF(g.n, x.df[t])
	}
	x.cache = make(lexImpactCache, len(x.df))
	if x.patched*lexPatchShare > len(x.docs) {
		x.compact()
	}

	live, postings := g.shared.stats.Terms, g.shared.stats.Postings
	for t := range touched {
		before := uint32(0)
		if int(t) < len(px.df) {
			before = px.df[t]
		}
		postings += int(x.df[t]) - int(before)
		switch {
		case before == 0 && x.df[t] > 0:
			live++
		case before > 0 && x.df[t] == 0:
			live--
		}
	}
	g.stats.Terms, g.stats.Postings, g.stats.LexicalPatched = live, postings, true
	g.an.terms = live
	return nil
}

// docEntries is a document's entries of a term (lexIndex.ftf).
type docEntries struct {
	d   uint32
	ftf []uint32
}

// sameEntries reports whether the changed documents' entries of a term now (add, in docID
// order) are those its list (docs, ftf) holds for them: held by the same documents, with
// the same fields and term frequencies.
func sameEntries(docs, ftf []uint32, add []docEntries, isChanged map[uint32]bool) bool {
	k, e := 0, 0
	for _, d := range docs {
		start := e
		for ftf[e]&ftfMore != 0 {
			e++
		}
		e++
		if !isChanged[d] {
			continue
		}
		if k == len(add) || add[k].d != d || !slices.Equal(add[k].ftf, ftf[start:e]) {
			return false
		}
		k++
	}
	return k == len(add)
}

// remove takes a document's field lengths out of the sums.
func (z *lexNorms) remove(flen [numFields]uint16) {
	for f, l := range flen {
		if l > 0 {
			z.sum[f] -= uint64(l)
			z.docs[f]--
		}
	}
}

// add puts a document's field lengths in the sums.
func (z *lexNorms) add(flen [numFields]uint16) {
	for f, l := range flen {
		if l > 0 {
			z.sum[f] += uint64(l)
			z.docs[f]++
		}
	}
}

// compact lays every list out in one new arena, in term order, and empties the patch.
func (x *lexIndex) compact() {
	nt := len(x.df)
	off, eoff := make([]uint32, nt+1), make([]uint32, nt+1)
	for t := range nt {
		d, f := x.list(uint32(t))
		off[t+1], eoff[t+1] = off[t]+uint32(len(d)), eoff[t]+uint32(len(f))
	}
	docs, ftf := make([]uint32, off[nt]), make([]uint32, eoff[nt])
	for t := range nt {
		d, f := x.list(uint32(t))
		copy(docs[off[t]:], d)
		copy(ftf[eoff[t]:], f)
	}
	x.off, x.docs, x.eoff, x.ftf = off, docs, eoff, ftf
	x.patch, x.patched = nil, 0
}
