package rank

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// A term cache of a chain (NewTermChain, Next) is persisted with the index state (fast
// open: engine/persist.go) and loaded at open instead of analysing every capability again.
// The bytes are, integers as uvarints:
//
//	format | documents | vocabulary (count, then each term) | values (count, then each)
//	| alias keys (count, then each, in docID order) | per document, in docID order: the
//	  lengths of its parts (entries, not-use entries, referrals, values, heads, text) and
//	  its numbers but the heads
//
// The records are written compactly (no garbage), the heads (hashes of the alias phrases'
// first words under the cache's seed) are computed again at load under a new seed, and
// what follows from the records is derived as an assembly derives it: each term's counts
// (refs, df) and idf, the live terms' index, the fold map, the attributes (from the
// capabilities). Every count is bounded by the bytes left and every number checked
// against what it refers to, so damaged bytes give an error, never a panic; a few records
// are compared with the analysis of their capabilities (loadCheck), so a cache written by
// a build that analyses differently is not taken.

// termsFormat is the version of the bytes AppendPersisted writes.
const termsFormat = 1

// ErrTermsPersisted wraps why persisted term cache bytes were not loaded.
var ErrTermsPersisted = errors.New("rank: persisted term cache not usable")

// AppendPersisted appends the bytes LoadTermChain reads to b. It returns b unchanged and
// false when t is not the cache of a chain (NewTermCache's).
func (t *TermCache) AppendPersisted(b []byte) ([]byte, bool) {
	if t.chain == nil || t.voc == nil {
		return b, false
	}
	t.voc.Lock()
	defer t.voc.Unlock()
	b = binary.AppendUvarint(b, termsFormat)
	b = binary.AppendUvarint(b, uint64(len(t.docs)))
	nv := t.voc.Len()
	b = binary.AppendUvarint(b, uint64(nv))
	for v := range nv {
		b = appendStr(b, t.voc.Term(uint32(v)))
	}
	b = binary.AppendUvarint(b, uint64(len(t.values)))
	for _, v := range t.values {
		b = appendStr(b, v)
	}
	na := 0
	for d := range t.docs {
		na += int(t.docs[d].aliases())
	}
	b = binary.AppendUvarint(b, uint64(na))
	for d := range t.docs {
		r := &t.docs[d]
		for _, k := range t.aliasKey[r.alias : r.alias+r.aliases()] {
			b = appendStr(b, k)
		}
	}
	for d := range t.docs {
		r := &t.docs[d]
		for _, l := range [...]uint32{r.notUse - r.off, r.refer - r.notUse, r.values - r.refer, r.heads - r.values, r.text - r.heads, r.end - r.text} {
			b = binary.AppendUvarint(b, uint64(l))
		}
		for _, v := range t.nums[r.off:r.heads] {
			b = binary.AppendUvarint(b, uint64(v))
		}
		for _, v := range t.nums[r.text:r.end] {
			b = binary.AppendUvarint(b, uint64(v))
		}
	}
	return b, true
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// LoadTermChain returns the term cache of caps (positions are docIDs, sorted by id as in a
// registry.Snapshot) from bytes AppendPersisted wrote for the same capabilities: a cache
// of a chain that keeps no analysis, as NewTermChain makes, answering as NewTermChain's
// does. analyze is the function the cache was made with (it is called on a few
// capabilities, to check the records). The error wraps ErrTermsPersisted.
func LoadTermChain(b []byte, caps []*registry.Capability, analyze func(string) []string) (*TermCache, error) {
	t, err := loadTermChain(b, caps)
	if err == nil {
		err = t.loadCheck(analyze)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTermsPersisted, err)
	}
	return t, nil
}

// tdec reads the bytes of AppendPersisted; the first error sticks.
type tdec struct {
	b   []byte
	off int
	err error
}

func (d *tdec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b[d.off:])
	if k <= 0 {
		d.err = fmt.Errorf("bad number at byte %d", d.off)
		return 0
	}
	d.off += k
	return v
}

// count reads a count of items of at least minBytes each, bounded by the bytes left.
func (d *tdec) count(minBytes int) int {
	v := d.uvarint()
	if d.err == nil && v > uint64(len(d.b)-d.off)/uint64(minBytes) {
		d.err = fmt.Errorf("count %d beyond the bytes left at byte %d", v, d.off)
		return 0
	}
	return int(v)
}

// below reads a number that must be below n.
func (d *tdec) below(n int) uint32 {
	v := d.uvarint()
	if d.err == nil && v >= uint64(n) {
		d.err = fmt.Errorf("number %d not below %d at byte %d", v, n, d.off)
		return 0
	}
	return uint32(v)
}

func (d *tdec) str() string {
	k := d.count(1)
	if d.err != nil {
		return ""
	}
	s := string(d.b[d.off : d.off+k])
	d.off += k
	return s
}

// loadTermChain decodes b (see AppendPersisted) over caps.
func loadTermChain(b []byte, caps []*registry.Capability) (*TermCache, error) {
	d := &tdec{b: b}
	if f := d.uvarint(); d.err == nil && f != termsFormat {
		return nil, fmt.Errorf("format %d, want %d", f, termsFormat)
	}
	if n := d.uvarint(); d.err == nil && n != uint64(len(caps)) {
		return nil, fmt.Errorf("%d capabilities, want %d", n, len(caps))
	}
	t := &TermCache{docs: make([]docTerms, len(caps)), seed: maphash.MakeSeed(), folds: make(map[string][]uint32), byID: true,
		voc: text.NewVocab(), chain: new(chainTerms)}
	nv := d.count(1)
	for range nv {
		if t.voc.Number(d.str()) != uint32(t.voc.Len()-1) && d.err == nil {
			d.err = errors.New("a term twice in the vocabulary")
		}
	}
	t.values = make([]string, d.count(1))
	for i := range t.values {
		t.values[i] = d.str()
		k := foldKey(t.values[i])
		t.folds[k] = append(t.folds[k], uint32(i))
	}
	t.aliasKey = make([]string, d.count(1))
	for i := range t.aliasKey {
		t.aliasKey[i] = d.str()
	}
	if d.err != nil {
		return nil, d.err
	}
	ch := t.chain
	ch.refs, ch.df = make([]uint32, nv), make([]uint32, nv)
	stamp := make([]uint32, nv) // the last document (+1) that counted each term in refs
	alias := 0
	for doc, c := range caps {
		var l [6]int
		for i := range l {
			l[i] = d.count(1)
		}
		if d.err != nil {
			return nil, d.err
		}
		if doc > 0 && caps[doc-1].ID >= c.ID {
			t.byID = false
		}
		r := &t.docs[doc]
		r.cap, r.attrs = c, attrsOf(c)
		r.off = uint32(len(t.nums))
		r.notUse = r.off + uint32(l[0])
		r.refer = r.notUse + uint32(l[1])
		r.values = r.refer + uint32(l[2])
		r.heads = r.values + uint32(l[3])
		r.text = r.heads + uint32(l[4])
		r.end = r.text + uint32(l[5])
		r.alias = uint32(alias)
		if l[4]%2 != 0 || alias+l[4]/2 > len(t.aliasKey) {
			return nil, fmt.Errorf("document %d: %d head numbers for %d alias keys left", doc, l[4], len(t.aliasKey)-alias)
		}
		count := func(v uint32) {
			if stamp[v] != uint32(doc)+1 {
				stamp[v] = uint32(doc) + 1
				ch.refs[v]++
			}
		}
		// entries: each entry's length, then its sorted unique terms
		for _, part := range l[:2] {
			for k := 0; k < part; {
				m := int(d.uvarint())
				if d.err == nil && m >= part-k {
					d.err = fmt.Errorf("document %d: an entry of %d terms beyond its part", doc, m)
				}
				if d.err != nil {
					return nil, d.err
				}
				t.nums = append(t.nums, uint32(m))
				if err := t.sortedTerms(d, m, nv, count); err != nil {
					return nil, fmt.Errorf("document %d: %w", doc, err)
				}
				k += 1 + m
			}
		}
		for range l[2] { // referrals: docIDs of others
			v := d.below(len(caps))
			if d.err == nil && int(v) == doc {
				d.err = fmt.Errorf("document %d refers to itself", doc)
			}
			t.nums = append(t.nums, v)
		}
		// values: a count per kind, then the value numbers
		if l[3] < valueKinds {
			return nil, fmt.Errorf("document %d: %d value numbers", doc, l[3])
		}
		sum := 0
		for range valueKinds {
			v := d.uvarint()
			sum += int(min(v, 1<<30))
			t.nums = append(t.nums, uint32(v))
		}
		if d.err == nil && sum != l[3]-valueKinds {
			d.err = fmt.Errorf("document %d: %d values counted, %d given", doc, sum, l[3]-valueKinds)
		}
		for range l[3] - valueKinds {
			t.nums = append(t.nums, d.below(len(t.values)))
		}
		if d.err != nil {
			return nil, d.err
		}
		for _, k := range t.aliasKey[alias : alias+l[4]/2] {
			h := t.pairAt(k, 0)
			t.nums = append(t.nums, uint32(h), uint32(h>>32))
		}
		alias += l[4] / 2
		if err := t.sortedTerms(d, l[5], nv, func(v uint32) { count(v); ch.df[v]++ }); err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
	}
	if alias != len(t.aliasKey) {
		return nil, fmt.Errorf("%d alias keys, %d used", len(t.aliasKey), alias)
	}
	if d.off != len(b) {
		return nil, fmt.Errorf("%d bytes after the records", len(b)-d.off)
	}
	ids := make(map[string]uint32)
	t.idf = make([]float32, nv)
	for v := range nv {
		if ch.refs[v] > 0 {
			ids[t.voc.Term(uint32(v))] = uint32(v)
		}
		t.idf[v] = termIDF(len(caps), ch.df[v], ch.refs[v])
	}
	ch.live = len(ids)
	ch.arena = &numArena{nums: len(t.nums), keys: len(t.aliasKey)}
	t.terms = newTermIndex(ids)
	t.maxIDF = termIDF(len(caps), 0, 1)
	return t, nil
}

// sortedTerms reads m term numbers (below nv, strictly increasing), appends them to the
// numbers and calls each with them.
func (t *TermCache) sortedTerms(d *tdec, m, nv int, each func(uint32)) error {
	last := -1
	for range m {
		v := d.below(nv)
		if d.err != nil {
			return d.err
		}
		if int(v) <= last {
			return errors.New("terms not sorted")
		}
		last = int(v)
		t.nums = append(t.nums, v)
		each(v)
	}
	return nil
}

// loadCheck compares the records of a few capabilities, spread over the catalogue, with
// their analysis now: the terms of their entries and text, their values and alias keys.
func (t *TermCache) loadCheck(analyze func(string) []string) error {
	n := len(t.docs)
	var sb strings.Builder
	for i := range min(n, 8) {
		d := i * n / min(n, 8)
		c := t.docs[d].cap
		a := analyse(&sb, c, analyze)
		voc := text.NewVocab() // the analysis's terms as strings, compared with the record's
		encode(voc, &a)
		all, txt := seqTerms(a.seq)
		ra, rt := t.recordTerms(d)
		same := func(x []uint32, y []uint32) bool {
			if len(x) != len(y) {
				return false
			}
			got := make([]string, len(y))
			for j, v := range y {
				got[j] = t.voc.Term(v)
			}
			want := make([]string, len(x))
			for j, v := range x {
				want[j] = voc.Term(v)
			}
			slices.Sort(got)
			slices.Sort(want)
			return slices.Equal(got, want)
		}
		r := &t.docs[d]
		var vals []string
		p := r.values + valueKinds
		for range r.heads - p {
			vals = append(vals, t.values[t.nums[p]])
			p++
		}
		var want []string
		for _, l := range a.values {
			want = append(want, l...)
		}
		if !same(all, ra) || !same(txt, rt) || !slices.Equal(vals, want) ||
			!slices.Equal(a.alias, t.aliasKey[r.alias:r.alias+r.aliases()]) {
			return fmt.Errorf("the record of %s is not its analysis now (written by a build that analyses otherwise)", c.ID)
		}
	}
	return nil
}
