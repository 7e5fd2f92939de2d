package query

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// A lexicon is persisted as its frozen entries in scan order (each entry's kind, member
// flag, tokens, value and values) and the maps a parse reads (verbs, intent values, member
// entities, ids, packs and their scope keys). What is derived from those is derived again
// at load: each entry's verb flag, cue bit and "~" name, the ranges of the keys, the
// numbers of the later tokens (numbered as freeze numbers them: in scan order, so the
// layout is the written one) and the share of Chinese descriptions. LoadLexicon bounds
// every count by the bytes left and checks every number, and checks the loaded lexicon
// against what this build makes of the snapshot: the entries of the shared part (cues,
// concepts, blockers) by kind counts and a sample, and the entries of a sample of
// capabilities spread over the catalogue, so bytes written by a build that analyses
// otherwise are refused.

// ErrLexiconPersisted wraps why persisted lexicon bytes were not loaded.
var ErrLexiconPersisted = errors.New("query: persisted lexicon not usable")

// lexFormat starts the persisted form; another layout is another format.
const lexFormat = "qlex1"

// lexChecked is how many capabilities (and shared entries) LoadLexicon compares with a
// fresh analysis.
const lexChecked = 8

// AppendPersisted appends the persisted form of l (LoadLexicon) to dst.
func (l *Lexicon) AppendPersisted(dst []byte) []byte {
	dst = append(dst, lexFormat...)
	dst = binary.AppendUvarint(dst, uint64(l.ncaps))
	dst = binary.AppendUvarint(dst, uint64(len(l.all)))
	for i := range l.all {
		e := &l.all[i]
		m := byte(0)
		if e.member {
			m = 1
		}
		dst = append(dst, byte(e.kind), m)
		dst = appendStrings(dst, e.toks)
		dst = appendString(dst, e.value)
		dst = appendStrings(dst, e.values)
	}
	dst = appendStrings(dst, slices.Sorted(maps.Keys(l.verbs)))
	dst = appendListMap(dst, l.intentVals)
	dst = appendListMap(dst, l.memberEntities)
	dst = appendListMap(dst, l.ids)
	dst = binary.AppendUvarint(dst, uint64(len(l.packs)))
	for _, p := range l.packs {
		dst = appendString(dst, p.id)
		dst = binary.AppendUvarint(dst, uint64(p.nkeys))
	}
	dst = binary.AppendUvarint(dst, uint64(len(l.packKeys)))
	for _, k := range slices.Sorted(maps.Keys(l.packKeys)) {
		dst = appendString(dst, k)
		dst = binary.AppendUvarint(dst, uint64(len(l.packKeys[k])))
		for _, pk := range l.packKeys[k] {
			dst = binary.AppendUvarint(dst, uint64(pk.pack))
			dst = binary.AppendUvarint(dst, uint64(pk.w))
		}
	}
	return dst
}

func appendString(dst []byte, s string) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(s))), s...)
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = appendString(dst, s)
	}
	return dst
}

func appendListMap(dst []byte, m map[string][]string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		dst = appendString(dst, k)
		dst = appendStrings(dst, m[k])
	}
	return dst
}

// lexReader reads a persisted lexicon; the first fault is kept in err and every later
// read returns zero values.
type lexReader struct {
	s   string // the bytes, as one string the strings read are cut from
	off int
	err error
}

func (r *lexReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", ErrLexiconPersisted, r.off, fmt.Sprintf(format, args...))
	}
}

func (r *lexReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		if r.off >= len(r.s) {
			break
		}
		c := r.s[r.off]
		r.off++
		if shift == 63 && c > 1 {
			break
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			if c == 0 && shift > 0 {
				break // not the shortest form: another writer
			}
			return v
		}
	}
	r.fail("bad number")
	return 0
}

// count reads a count of items each taking at least per bytes, bounded by the bytes left.
func (r *lexReader) count(per int) int {
	v := r.uvarint()
	if v > uint64(len(r.s)-r.off)/uint64(per) {
		r.fail("count %d exceeds the bytes left", v)
		return 0
	}
	return int(v)
}

func (r *lexReader) u8() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.s) {
		r.fail("truncated")
		return 0
	}
	b := r.s[r.off]
	r.off++
	return b
}

func (r *lexReader) str() string {
	n := r.count(1)
	if r.err != nil {
		return ""
	}
	s := r.s[r.off : r.off+n]
	r.off += n
	return s
}

func (r *lexReader) strs() []string {
	n := r.count(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

func (r *lexReader) listMap() map[string][]string {
	n := r.count(2)
	m := make(map[string][]string, n)
	prev := ""
	for i := range n {
		k := r.str()
		if i > 0 && k <= prev {
			r.fail("key %q not after %q", k, prev)
		}
		prev = k
		m[k] = r.strs()
	}
	return m
}

// LoadLexicon loads the lexicon of snap persisted by AppendPersisted. It checks every count
// and number, and compares the entries of a sample of snap's capabilities and of the
// shared part with what this build makes of them (see the top of this file). The error
// wraps ErrLexiconPersisted.
func LoadLexicon(b []byte, snap *registry.Snapshot) (*Lexicon, error) {
	if snap == nil {
		return nil, fmt.Errorf("%w: no snapshot", ErrLexiconPersisted)
	}
	if !strings.HasPrefix(string(b[:min(len(b), len(lexFormat))]), lexFormat) {
		return nil, fmt.Errorf("%w: not format %s", ErrLexiconPersisted, lexFormat)
	}
	base := baseLexicon()
	r := &lexReader{s: string(b), off: len(lexFormat)}
	l := &Lexicon{
		generation: snap.Generation,
		words:      newWordTable(),
		reads:      base.reads,
		packIDs:    make(map[string]bool),
	}
	if nc := r.uvarint(); nc != uint64(len(snap.Caps)) {
		r.fail("%d capabilities, the snapshot has %d", nc, len(snap.Caps))
	}
	// An entry takes at least 4 bytes: kind, member, token count (≥ 1) and a value length.
	n := r.count(4)
	l.all = make([]entry, n)
	l.tailAt = make([]int32, 0, n+1)
	l.byKey = make(map[string]entryRange)
	l.nums = make(map[string]int32)
	for i := range l.all {
		e := &l.all[i]
		k, m := r.u8(), r.u8()
		if r.err == nil && (k < byte(kConcept) || k > byte(kBlock) || m > 1) {
			r.fail("entry %d: kind %d, member %d", i, k, m)
		}
		e.kind, e.member = kind(k), m == 1
		e.toks = r.strs()
		e.value = r.str()
		e.values = r.strs()
		if r.err != nil {
			break
		}
		if len(e.toks) == 0 {
			r.fail("entry %d has no token", i)
			break
		}
		key := e.toks[0]
		if i == 0 || key != l.all[i-1].toks[0] {
			if _, dup := l.byKey[key]; dup {
				r.fail("entry %d: key %q starts two runs", i, key)
				break
			}
			l.byKey[key] = entryRange{lo: int32(i)}
		}
		rg := l.byKey[key]
		rg.n++
		l.byKey[key] = rg
		l.appendTail(e.toks[1:])
	}
	l.tailAt = append(l.tailAt, int32(len(l.tail)))
	verbs := r.strs()
	l.verbs = make(map[string]bool, len(verbs))
	for i, v := range verbs {
		if i > 0 && v <= verbs[i-1] {
			r.fail("verb %q not after %q", v, verbs[i-1])
		}
		l.verbs[v] = true
	}
	l.intentVals = r.listMap()
	if l.memberEntities = r.listMap(); len(l.memberEntities) == 0 {
		l.memberEntities = nil
	}
	l.ids = r.listMap()
	np := r.count(2)
	l.packs = make([]packInfo, 0, np)
	for range np {
		p := packInfo{id: r.str()}
		nk := r.uvarint()
		if nk > math.MaxInt32 {
			r.fail("pack %q: %d keys", p.id, nk)
		}
		p.nkeys = int(nk)
		l.packIDs[p.id] = true
		l.packs = append(l.packs, p)
	}
	nk := r.count(2)
	l.packKeys = make(map[string][]packKey, nk)
	prevKey := ""
	for i := range nk {
		k := r.str()
		if i > 0 && k <= prevKey {
			r.fail("pack key %q not after %q", k, prevKey)
		}
		prevKey = k
		list := make([]packKey, r.count(2))
		for j := range list {
			p, w := r.uvarint(), r.uvarint()
			if r.err == nil && (p >= uint64(len(l.packs)) || w < 1 || w > 2) {
				r.fail("pack key %q: pack %d of %d, weight %d", k, p, len(l.packs), w)
			}
			list[j] = packKey{pack: int32(p), w: int32(w)}
		}
		l.packKeys[k] = list
	}
	if r.err == nil && r.off != len(r.s) {
		r.fail("%d bytes after the lexicon", len(r.s)-r.off)
	}
	if r.err != nil {
		return nil, r.err
	}
	for i := range l.all {
		e := &l.all[i]
		e.verb = e.kind == kConcept && l.verbs[e.value]
		switch e.kind {
		case kCue:
			e.cue = cueBits[e.value]
		case kConcept:
			e.tilde = "~" + e.value
		}
	}
	if err := l.check(base, snap); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLexiconPersisted, err)
	}
	l.ncaps = len(snap.Caps)
	l.zhShare = zhDescribedShare(snap.Caps)
	return l, nil
}

// check compares loaded lexicon l with what this build makes of snap: the shared entries
// by kind counts and a sample, and the entries, verbs, ids and packs of lexChecked
// capabilities spread over the catalogue.
func (l *Lexicon) check(base *Lexicon, snap *registry.Snapshot) error {
	var counts, want [kBlock + 1]int
	for i := range l.all {
		counts[l.all[i].kind]++
	}
	for i := range base.all {
		want[base.all[i].kind]++
	}
	for _, k := range []kind{kCue, kConcept, kBlock} {
		if counts[k] != want[k] {
			return fmt.Errorf("%d entries of kind %d, this build has %d", counts[k], k, want[k])
		}
	}
	for j := range lexChecked {
		e := &base.all[j*len(base.all)/lexChecked]
		if !l.has(e.kind, e.value, e.toks, e.values) {
			return fmt.Errorf("shared entry %q (kind %d) missing", e.value, e.kind)
		}
	}
	var infoMemo map[string]symptomInfo
	info := func(s string) symptomInfo {
		if in, ok := infoMemo[s]; ok {
			return in
		}
		if infoMemo == nil {
			infoMemo = make(map[string]symptomInfo)
		}
		in := newSymptomInfo(s)
		infoMemo[s] = in
		return in
	}
	for j := range min(lexChecked, len(snap.Caps)) {
		c := snap.Caps[j*len(snap.Caps)/min(lexChecked, len(snap.Caps))]
		for _, v := range c.Intents {
			v = text.Fold(v)
			if !l.has(kIntent, v, keys(v), nil) {
				return fmt.Errorf("%s: intent %q differs", c.ID, v)
			}
			for _, cn := range text.Concepts(v) {
				if !l.verbs[cn] || !slices.Contains(l.intentVals[cn], v) {
					return fmt.Errorf("%s: intent %q: concept %q differs", c.ID, v, cn)
				}
			}
		}
		for _, v := range c.Entities {
			v = text.Fold(v)
			if !l.has(kEntity, v, keys(v), nil) {
				return fmt.Errorf("%s: entity %q differs", c.ID, v)
			}
		}
		for _, v := range c.Symptoms {
			v = text.Fold(v)
			if !l.has(kSymptom, v, keys(v), nil) {
				return fmt.Errorf("%s: symptom %q differs", c.ID, v)
			}
		}
		for _, a := range c.Aliases {
			if syms := aliasSymptoms(a, c.Symptoms, info); len(syms) > 0 && !l.has(kAlias, strings.Join(syms, ","), keys(a), syms) {
				return fmt.Errorf("%s: alias %q differs", c.ID, a)
			}
		}
		if id := c.ID; strings.ContainsAny(id, "._-:") && !strings.ContainsAny(id, " \t") {
			if list := l.ids[id]; len(list) < maxIDsPerName && !slices.Contains(list, id) {
				return fmt.Errorf("%s: id not registered", id)
			}
		}
		if (c.ResourceType == registry.TypePack) != l.packIDs[c.ID] {
			return fmt.Errorf("%s: pack differs", c.ID)
		}
	}
	return nil
}

// has reports whether l holds an entry of kind k and value v with tokens toks (and values
// values, when k is kAlias).
func (l *Lexicon) has(k kind, v string, toks, values []string) bool {
	if len(toks) == 0 {
		return true // a surface without words is never added
	}
	r, ok := l.byKey[toks[0]]
	if !ok {
		return false
	}
	for i := r.lo; i < r.lo+r.n; i++ {
		e := &l.all[i]
		if e.kind == k && e.value == v && slices.Equal(e.toks, toks) && (k != kAlias || slices.Equal(e.values, values)) {
			return true
		}
	}
	return false
}
