package rank

import (
	"maps"
	"slices"
	"strings"

	"github.com/capdex/capdex/registry"
)

// numArena records how much of the backing arrays of nums and aliasKey the newest cache of
// a chain uses (guarded by the chain vocabulary's lock): a cache patched from that one
// appends its changed records after them, in place, and any other copies them first, so
// that no two caches write the same place and none writes what another reads.
type numArena struct {
	nums, keys int
}

// patch returns the term cache of caps made from p, which must be the cache of a Next
// chain, when caps holds p's ids at p's docIDs (a change that added or removed none):
// only the capabilities that are not p's (a different *registry.Capability) are analysed,
// and their records are appended after p's numbers; the records, idf and counts of the
// others are shared or copied, never recomputed, and no term is renumbered. It returns
// nil when caps is not such a change, or changes so much of it that an assembly is as
// cheap. The result answers every query as a cache made from scratch does: the coverages
// are sums in fixed point (idfSum), so they do not depend on the terms' numbers.
func (p *TermCache) patch(caps []*registry.Capability, analyze func(string) []string) *TermCache {
	if len(caps) != len(p.docs) || !p.byID {
		return nil
	}
	var changed []int
	for d, c := range caps {
		if o := p.docs[d].cap; o != c {
			if o.ID != c.ID {
				return nil
			}
			changed = append(changed, d)
		}
	}
	if len(changed) > len(caps)/8+16 {
		return nil
	}
	p.voc.Lock()
	defer p.voc.Unlock()
	pc := p.chain
	t := &TermCache{
		docs: slices.Clone(p.docs), seed: p.seed, terms: p.terms, idf: slices.Clone(p.idf),
		maxIDF: p.maxIDF, values: slices.Clip(p.values), folds: p.folds, byID: true,
		an: slices.Clone(p.an), voc: p.voc,
	}
	if t.an == nil { // p keeps no analysis (NewTermChain): nor does t but the changed ones'
		t.an = make([]*analysed, len(caps))
	}
	ch := &chainTerms{
		df: slices.Clone(pc.df), refs: slices.Clone(pc.refs), live: pc.live,
		more: pc.more, added: slices.Clip(pc.added), garbage: pc.garbage, patched: true,
	}
	t.chain = ch
	if a := pc.arena; a.nums == len(p.nums) && a.keys == len(p.aliasKey) {
		t.nums, t.aliasKey, ch.arena = p.nums, p.aliasKey, a // p is the newest: append in place
	} else {
		t.nums, t.aliasKey, ch.arena = slices.Clone(p.nums), slices.Clone(p.aliasKey), new(numArena)
	}
	foldsCopied := false
	var touched []uint32 // terms whose counts changed
	count := func(all, txt []uint32, delta uint32) {
		for _, v := range all {
			for int(v) >= len(ch.refs) {
				ch.refs, ch.df = append(ch.refs, 0), append(ch.df, 0)
				t.idf = append(t.idf, deadIDF)
			}
			ch.refs[v] += delta // delta is 1 or -1 (wrapping)
			touched = append(touched, v)
		}
		for _, v := range txt {
			ch.df[v] += delta
		}
	}
	var sb strings.Builder
	for _, d := range changed {
		c := caps[d]
		a := analyse(&sb, c, analyze)
		encode(t.voc, &a)
		var oldAll, oldTxt []uint32
		if p.an != nil && p.an[d] != nil {
			oldAll, oldTxt = seqTerms(p.an[d].seq)
		} else { // not kept (NewTermChain): the record holds the same terms
			oldAll, oldTxt = p.recordTerms(d)
		}
		count(oldAll, oldTxt, ^uint32(0))
		newAll, newTxt := seqTerms(a.seq)
		count(newAll, newTxt, 1)
		old := &p.docs[d]
		ch.garbage += int(old.end - old.off)
		rec := docTerms{cap: c, off: uint32(len(t.nums)), alias: uint32(len(t.aliasKey)), attrs: attrsOf(c)}
		q := 0
		t.nums, q = appendSeqEntries(t.nums, a.seq, q)
		rec.notUse = uint32(len(t.nums))
		t.nums, q = appendSeqEntries(t.nums, a.seq, q)
		rec.refer = uint32(len(t.nums))
		t.nums = append(t.nums, referralsOf(caps, d)...)
		rec.values = uint32(len(t.nums))
		for _, list := range a.values {
			t.nums = append(t.nums, uint32(len(list)))
		}
		for _, list := range a.values {
			for _, v := range list {
				t.nums = append(t.nums, t.valueNumber(v, &foldsCopied))
			}
		}
		t.appendHeads(&rec, a.alias)
		rec.text = uint32(len(t.nums))
		start := len(t.nums)
		t.nums = append(t.nums, a.seq[q:]...)
		slices.Sort(t.nums[start:])
		t.nums = t.nums[:start+len(slices.Compact(t.nums[start:]))]
		rec.end = uint32(len(t.nums))
		t.docs[d] = rec
		a.use, a.notUse, a.text = nil, nil, nil
		t.an[d] = &a
	}
	// the idf of every term whose counts changed (the number of documents did not), and
	// the index of the terms that are held again but not indexed
	slices.Sort(touched)
	var fresh []uint32
	for _, v := range slices.Compact(touched) {
		t.idf[v] = termIDF(len(caps), ch.df[v], ch.refs[v])
		was := uint32(0)
		if int(v) < len(pc.refs) {
			was = pc.refs[v]
		}
		switch {
		case was == 0 && ch.refs[v] > 0:
			ch.live++
			if term := t.voc.Term(v); t.terms.find(term) < 0 && (ch.more == nil || ch.more.find(term) < 0) {
				fresh = append(fresh, v)
			}
		case was > 0 && ch.refs[v] == 0:
			ch.live--
		}
	}
	if len(fresh) > 0 {
		ch.added = append(ch.added, fresh...)
		ids := make(map[string]uint32)
		if len(ch.added) > ch.live/8+256 { // fold them into the index: every live term
			for v, r := range ch.refs {
				if r > 0 {
					ids[t.voc.Term(uint32(v))] = uint32(v)
				}
			}
			t.terms, ch.more, ch.added = newTermIndex(ids), nil, nil
		} else {
			for _, v := range ch.added {
				ids[t.voc.Term(v)] = v
			}
			ch.more = newTermIndex(ids)
		}
	}
	if ch.garbage > len(t.nums)/4+256 {
		t.compact()
	}
	ch.arena.nums, ch.arena.keys = len(t.nums), len(t.aliasKey)
	return t
}

// compact copies the records' numbers and alias keys into new arrays, in docID order,
// leaving out those no record points to.
func (t *TermCache) compact() {
	nums := make([]uint32, 0, len(t.nums)-t.chain.garbage)
	keys := make([]string, 0, len(t.aliasKey))
	for d := range t.docs {
		r := &t.docs[d]
		at := uint32(len(nums))
		nums = append(nums, t.nums[r.off:r.end]...)
		r.alias, keys = uint32(len(keys)), append(keys, t.aliasKey[r.alias:r.alias+r.aliases()]...)
		for _, f := range []*uint32{&r.notUse, &r.refer, &r.values, &r.heads, &r.text, &r.end} {
			*f = *f - r.off + at
		}
		r.off = at
	}
	t.nums, t.aliasKey = nums, keys
	t.chain.garbage, t.chain.arena = 0, new(numArena)
}

// valueNumber returns the number of value v, numbering it when new; the first new value
// copies the fold map (copied: it was), which t shares with the cache it was patched from.
func (t *TermCache) valueNumber(v string, copied *bool) uint32 {
	k := foldKey(v)
	for _, id := range t.folds[k] {
		if t.values[id] == v {
			return id
		}
	}
	if !*copied {
		t.folds, *copied = maps.Clone(t.folds), true
	}
	id := uint32(len(t.values))
	t.values = append(t.values, strings.Clone(v))
	t.folds[k] = append(slices.Clip(t.folds[k]), id)
	return id
}

// seqTerms returns the sorted unique terms of an analysis's seq (see analysed): all of
// them, and those of its descriptive text.
func seqTerms(seq []uint32) (all, txt []uint32) {
	p := 0
	for range 2 {
		n := int(seq[p])
		p++
		for range n {
			l := int(seq[p])
			all = append(all, seq[p+1:p+1+l]...)
			p += 1 + l
		}
	}
	txt = slices.Clone(seq[p:])
	slices.Sort(txt)
	txt = slices.Compact(txt)
	all = append(all, txt...)
	slices.Sort(all)
	return slices.Compact(all), txt
}

// recordTerms returns the sorted unique terms of record d of a chain's cache (whose numbers
// are the terms' numbers in the chain's vocabulary): all of them and those of its
// descriptive text, which are what seqTerms returns for the analysis the record was made
// from (its entries hold their sorted unique terms, its text part the text's).
func (p *TermCache) recordTerms(d int) (all, txt []uint32) {
	r := &p.docs[d]
	for _, part := range [][2]uint32{{r.off, r.notUse}, {r.notUse, r.refer}} {
		for q := part[0]; q < part[1]; {
			l := p.nums[q]
			all = append(all, p.nums[q+1:q+1+l]...)
			q += 1 + l
		}
	}
	txt = slices.Clone(p.nums[r.text:r.end])
	all = append(all, txt...)
	slices.Sort(all)
	return slices.Compact(all), txt
}

// appendSeqEntries appends the entries of an analysis's seq from position q to nums as
// docTerms encodes them (each entry's length, then its sorted unique numbers) and returns
// the position after them.
func appendSeqEntries(nums, seq []uint32, q int) ([]uint32, int) {
	n := int(seq[q])
	q++
	for range n {
		l := int(seq[q])
		at := len(nums)
		nums = append(nums, 0)
		nums = append(nums, seq[q+1:q+1+l]...)
		slices.Sort(nums[at+1:])
		k := len(slices.Compact(nums[at+1:]))
		nums = nums[:at+1+k]
		nums[at] = uint32(k)
		q += 1 + l
	}
	return nums, q
}

// referralsOf returns what referrals returns for caps[d], caps being sorted by id.
func referralsOf(caps []*registry.Capability, d int) []uint32 {
	var out []uint32
	for _, e := range caps[d].WhenNotToUse {
		if !strings.Contains(e, ".") {
			continue
		}
		for _, w := range strings.FieldsFunc(e, notIDRune) {
			w = strings.TrimRight(w, ".-")
			r, ok := slices.BinarySearchFunc(caps, w, func(c *registry.Capability, id string) int { return strings.Compare(c.ID, id) })
			if ok && r != d && !slices.Contains(out, uint32(r)) {
				out = append(out, uint32(r))
			}
		}
	}
	return out
}

// Patched reports whether Next patched the cache it was made from (a change that kept every
// id) rather than assembling it.
func (t *TermCache) Patched() bool { return t.chain != nil && t.chain.patched }
