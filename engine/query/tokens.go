package query

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
)

// token is one unit of matching: a Latin word (matched by its stem) or one CJK character.
type token struct {
	key        string     // stem of a word, or the CJK character
	word       string     // folded word, or the CJK character
	start, end int32      // byte offsets in the tokenised text
	first      entryRange // the entries of the lexicon key starts (set only by analysis scans)
	num        int32      // the number of the key in the entries' later tokens (Lexicon.nums), or 0
	cjk        bool
	// stop: a word on text's English stop list (text.IsStopWord(word)); for a CJK character
	// (analysis scans only), a particle (text.IsParticle)
	stop bool
}

// tokenize appends the tokens of s to dst. Joined forms of case-split words are skipped:
// phrases are matched on their parts.
func tokenize(dst []token, s string) []token {
	var sc text.Scanner
	sc.Reset(s)
	for sc.Next() {
		switch sc.Kind() {
		case text.KindWord:
			start := int32(sc.Offset())
			t := token{word: sc.Folded(), start: start, end: start + int32(len(sc.Text()))}
			t.key, t.stop = sc.Key()
			dst = append(dst, t)
		case text.KindCJK:
			run, off := sc.Text(), int32(sc.Offset())
			for i := 0; i < len(run); {
				_, n := utf8.DecodeRuneInString(run[i:])
				ch := run[i : i+n]
				dst = append(dst, token{key: ch, word: ch, start: off + int32(i), end: off + int32(i+n), cjk: true})
				i += n
			}
		}
	}
	return dst
}

// scanText tokenizes the query with the lexicon (see tokenize): its tokens start the
// lexicon's entries and, from the same scan, it collects the query's search terms (what
// text.AppendTerms appends) with their sort keys, and its phrase key (what rank.PhraseKey
// returns: the terms of the words, stop words left out, and the CJK characters but the
// particles, each followed by a space, after a leading space), and the tokens the shared
// concept lexicon matches (what text.AppendConceptIDs scans the text into).
func (a *analysis) scanText() {
	lex, sc, s := a.lex, &a.sc, a.s
	toks, terms, pre, phrase := a.toks[:0], a.terms[:0], a.termPre[:0], append(a.phrase[:0], ' ')
	ctoks := a.ctoks[:0]
	sc.Reset(s)
	for sc.Next() {
		switch sc.Kind() {
		case text.KindWord:
			start := int32(sc.Offset())
			w := lex.word(sc)
			t := token{start: start, end: start + int32(len(sc.Text())), first: w.first, num: w.num}
			t.word, t.key, t.stop = w.get()
			toks = append(toks, t)
			ctoks = append(ctoks, text.Token{Key: t.key, Kind: text.KindWord, NoEntry: w.noConcept()})
			if !t.stop {
				terms, pre = append(terms, t.key), append(pre, w.pre)
				phrase = append(w.appendKey(phrase), ' ')
			}
		case text.KindJoined: // a term, not a token
			w := lex.word(sc)
			_, key, stop := w.get()
			ctoks = append(ctoks, text.Token{Key: key, Kind: text.KindJoined})
			if !stop {
				terms, pre = append(terms, key), append(pre, w.pre)
			}
		case text.KindCJK:
			run, off := sc.Text(), int32(sc.Offset())
			var noStart uint64 // the characters the concept matcher need not look up
			for i, k := 0, 0; i < len(run); k++ {
				_, n := utf8.DecodeRuneInString(run[i:])
				ch := run[i : i+n]
				w := lex.char(ch)
				if k < 64 && w.noConcept() {
					noStart |= 1 << k
				}
				t := token{key: ch, word: ch, start: off + int32(i), end: off + int32(i+n), first: w.first, num: w.num, cjk: true, stop: w.stop()}
				toks = append(toks, t)
				// the unigram unless a particle, then the bigram
				if !t.stop {
					terms, pre = append(terms, ch), append(pre, w.pre)
					phrase = append(append(phrase, ch...), ' ')
				}
				if i+n < len(run) {
					_, m := utf8.DecodeRuneInString(run[i+n:])
					bi := run[i : i+n+m]
					terms, pre = append(terms, bi), append(pre, prefix8(bi))
				}
				i += n
			}
			ctoks = append(ctoks, text.Token{Key: run, Kind: text.KindCJK, NoStart: noStart})
		}
	}
	sc.Reset("")
	a.toks, a.terms, a.termPre, a.phrase, a.ctoks = toks, terms, pre, phrase, ctoks
}

// prefix8 is the big-endian value of the first eight bytes of s, zero-padded: strings
// order as their prefixes do, unless these are equal.
func prefix8(s string) uint64 {
	var k uint64
	for i := range 8 {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}

// wordTable memoises, per lexicon, what a scan needs of the words (and CJK characters)
// of queries: the key, the stop flag and the entries the key starts. A query's words then
// cost one probe here instead of a probe of text's stem memo (large, shared with indexing
// and mostly out of cache by the time a query comes) and one of the lexicon's map.
//
// Everything a probe reads of a word is in its slot, one cache line: the slot holds the
// word's first bytes, its layout and where its entries are rather than pointers to them,
// for a query's words are spread over the table and each line read is likely a cache
// miss.
//
// It is an open-addressing hash table (linear probing) whose slots are written once:
// lookups are lock-free, reading a slot once its meta word, stored last, is non-zero;
// inserts are serialised by mu. Growing builds a table of twice the slots and publishes
// it; a reader still probing the old one finds the words it held. A full table (at
// wordTableMax) takes no more words: they are analysed each time.
type wordTable struct {
	seed maphash.Seed
	tab  atomic.Pointer[wordSlots]
	mu   sync.Mutex // serialises inserts and growth
	n    int        // words held; guarded by mu
}

// The table starts at wordTableMin slots (256 KiB, the words of some hundred queries) and
// doubles while it is at most half full, up to wordTableMax (4 MiB, 32,768 words).
const (
	wordTableMin = 1 << 12
	wordTableMax = 1 << 16
)

type wordSlots struct {
	slots []wordSlot
	mask  uint64
}

// wordSlot is one word of a wordTable, 64 bytes: a cache line.
type wordSlot struct {
	// meta is 0 while the slot is empty, else the word's layout (see slotMeta); it is
	// stored last, publishing the other fields, which never change afterwards.
	meta  atomic.Uint64
	text  string     // the word, followed by its key unless that is a prefix of the word
	pre   uint64     // prefix8 of the key, its sort key among the signal terms
	first entryRange // the entries the key starts
	num   int32      // the number of the key in the entries' later tokens (Lexicon.nums)
	// inline holds the first bytes of text: a probe compares a word, and a scan copies
	// its key, without reading text.
	inline [wordInline]byte
}

// wordInline is the number of bytes of a word a wordSlot holds in place.
const wordInline = 20

// A wordSlot's meta word packs the word's layout: a tag of its hash (never 0) in the low
// 16 bits, then the length of the word and the offset and length of its key in text,
// metaLenBits each, then the stop flag and metaNoConcept. A length fits: it is at most
// MaxQueryBytes.
const (
	metaLenBits = 13
	metaLenMask = 1<<metaLenBits - 1
	metaTagLen  = 1<<(16+metaLenBits) - 1 // the tag and the word's length
	metaStop    = 1 << (16 + 3*metaLenBits)
	// metaNoConcept: the shared concept lexicon's matcher has no entry under the word's key
	// (text.Lexicon.HasWord is false) or, for a CJK character, none starting with it
	// (text.Lexicon.HasCJK is false), so it need not look it up
	metaNoConcept = metaStop << 1
)

// The lengths of a slot's word and key are at most MaxQueryBytes (a constant overflow if not).
const _ = uint(metaLenMask - MaxQueryBytes)

// slotMeta returns the meta word of a word of hash h.
func slotMeta(h uint64, wlen, koff, klen int, stop, noConcept bool) uint64 {
	m := uint64(uint16(h>>48)|1) | uint64(wlen)<<16 | uint64(koff)<<(16+metaLenBits) | uint64(klen)<<(16+2*metaLenBits)
	if stop {
		m |= metaStop
	}
	if noConcept {
		m |= metaNoConcept
	}
	return m
}

// layout returns the length of the slot's word and the offset and length of its key.
func (sl *wordSlot) layout() (m uint64, wlen, koff, klen int) {
	m = sl.meta.Load()
	return m, int(m >> 16 & metaLenMask), int(m >> (16 + metaLenBits) & metaLenMask), int(m >> (16 + 2*metaLenBits) & metaLenMask)
}

// get returns the slot's word, key and stop flag.
func (sl *wordSlot) get() (word, key string, stop bool) {
	m, wlen, koff, klen := sl.layout()
	return sl.text[:wlen], sl.text[koff : koff+klen], m&metaStop != 0
}

// stop reports whether the slot's word is a stop word or a particle.
func (sl *wordSlot) stop() bool { return sl.meta.Load()&metaStop != 0 }

// noConcept reports whether the shared concept lexicon's matcher has no entry under the
// slot's word (see metaNoConcept).
func (sl *wordSlot) noConcept() bool { return sl.meta.Load()&metaNoConcept != 0 }

// appendKey appends the slot's key to dst, from the bytes in place when it has them.
func (sl *wordSlot) appendKey(dst []byte) []byte {
	_, _, koff, klen := sl.layout()
	if koff+klen <= wordInline {
		return append(dst, sl.inline[koff:koff+klen]...)
	}
	return append(dst, sl.text[koff:koff+klen]...)
}

func newWordTable() *wordTable {
	t := &wordTable{seed: maphash.MakeSeed()}
	t.tab.Store(&wordSlots{slots: make([]wordSlot, wordTableMin), mask: wordTableMin - 1})
	return t
}

// find returns the slot of word w (hash h), or nil.
func find[W string | []byte](t *wordSlots, h uint64, w W) *wordSlot {
	want := uint64(uint16(h>>48)|1) | uint64(len(w))<<16 // tag and length
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		sl := &t.slots[i]
		m := sl.meta.Load()
		if m == 0 {
			return nil
		}
		if m&metaTagLen == want && (len(w) <= wordInline && string(sl.inline[:len(w)]) == string(w) || len(w) > wordInline && sl.text[:len(w)] == string(w)) {
			return sl
		}
	}
}

// word returns the slot of the scanner's current word or joined word (text.KindWord,
// text.KindJoined).
func (l *Lexicon) word(sc *text.Scanner) *wordSlot {
	b := sc.Bytes()
	h := maphash.Bytes(l.words.seed, b)
	if sl := find(l.words.tab.Load(), h, b); sl != nil {
		return sl
	}
	key, stop := sc.Key() // from text's memo, or a copy of a long word
	return l.words.insert(h, sc.Folded(), key, stop, !text.DefaultLexicon().HasWord(key), l.byKey[key], l.nums[key])
}

// char returns the slot of a CJK character.
func (l *Lexicon) char(ch string) *wordSlot {
	h := maphash.String(l.words.seed, ch)
	if sl := find(l.words.tab.Load(), h, ch); sl != nil {
		return sl
	}
	return l.words.insert(h, ch, ch, text.IsParticle(ch), !text.DefaultLexicon().HasCJK(ch), l.byKey[ch], l.nums[ch])
}

// insert adds the slot of word w (hash h) unless another scan added it meanwhile, and
// returns it. A word the table cannot take gets a slot of its own.
func (t *wordTable) insert(h uint64, w, key string, stop, noConcept bool, first entryRange, num int32) *wordSlot {
	text, koff := w, 0
	if !strings.HasPrefix(w, key) {
		text, koff = w+key, len(w)
	} else {
		text = strings.Clone(w) // the table must not keep the query alive
	}
	fill := func(sl *wordSlot) *wordSlot {
		sl.text, sl.pre, sl.first, sl.num = text, prefix8(key), first, num
		copy(sl.inline[:], text)
		sl.meta.Store(slotMeta(h, len(w), koff, len(key), stop, noConcept))
		return sl
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tab := t.tab.Load()
	if sl := find(tab, h, w); sl != nil {
		return sl // inserted by another scan since our probe
	}
	if 2*(t.n+1) > len(tab.slots) {
		if len(tab.slots) >= wordTableMax {
			return fill(new(wordSlot)) // full: analysed, not memoised
		}
		tab = t.grow(tab)
	}
	i := h & tab.mask
	for tab.slots[i].meta.Load() != 0 {
		i = (i + 1) & tab.mask
	}
	t.n++
	return fill(&tab.slots[i])
}

// grow publishes a table of twice the slots of tab holding tab's words, and returns it.
func (t *wordTable) grow(tab *wordSlots) *wordSlots {
	nt := &wordSlots{slots: make([]wordSlot, 2*len(tab.slots)), mask: uint64(2*len(tab.slots) - 1)}
	for i := range tab.slots {
		sl := &tab.slots[i]
		m := sl.meta.Load()
		if m == 0 {
			continue
		}
		_, wlen, _, _ := sl.layout()
		j := maphash.String(t.seed, sl.text[:wlen]) & nt.mask
		for nt.slots[j].meta.Load() != 0 {
			j = (j + 1) & nt.mask
		}
		d := &nt.slots[j]
		d.text, d.pre, d.first, d.num, d.inline = sl.text, sl.pre, sl.first, sl.num, sl.inline
		d.meta.Store(m)
	}
	t.tab.Store(nt)
	return nt
}

// keys returns the match keys of a phrase ("sign_in" → [sign in], "删除日程" → 删 除 日 程).
func keys(s string) []string {
	toks := tokenize(nil, s)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.key
	}
	return out
}

// joinable reports whether tokens a and b (a before b) are adjacent parts of one phrase:
// CJK characters of one run, or words separated only by spaces, "_", "-", "." or "/".
func joinable(s string, a, b *token) bool {
	if a.end > b.start {
		return false
	}
	gap := s[a.end:b.start]
	if a.cjk && b.cjk {
		return gap == ""
	}
	if len(gap) > 3 {
		return false
	}
	for i := 0; i < len(gap); i++ {
		switch gap[i] {
		case ' ', '_', '-', '.', '/':
		default:
			return false
		}
	}
	return true
}
