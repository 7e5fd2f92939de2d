package text

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kljensen/snowball/english"
)

// maxStemBytes bounds the words that are stemmed and memoised; longer words are kept as
// they are.
const maxStemBytes = 48

// stemmable reports whether w is an ASCII lower-case word the English stemmer should see.
func stemmable[T string | []byte](w T) bool {
	if len(w) <= 2 || len(w) > maxStemBytes {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// computeTerm returns the term of folded word w: its stem when stemmable, else w.
func computeTerm(w string) string {
	if !stemmable(w) {
		return w
	}
	return english.Stem(w, true)
}

// memoEntry is the analysis of one folded word: its term (see computeTerm) and whether it
// is a stop word. Entries are immutable once published.
type memoEntry struct {
	word, term string
	stop       bool
}

func newMemoEntry(w string) *memoEntry {
	_, stop := stopWords[w]
	return &memoEntry{word: w, term: computeTerm(w), stop: stop}
}

// The memo's table starts at memoMinSlots and doubles while it is at most half full, up to
// memoMaxSlots (so at most memoMaxSlots/2 words are memoised; later words are analysed
// each time).
const (
	memoMinSlots = 1 << 12
	memoMaxSlots = 1 << 18
)

// memoTable is an open-addressing hash table (linear probing) of entries. A slot goes from
// nil to an entry once and never changes again, so readers need no lock.
type memoTable struct {
	slots []atomic.Pointer[memoEntry]
	mask  uint64
}

// termMemo memoises the analysis of folded words of up to maxStemBytes bytes. Lookups are
// lock-free: a probe of the current table with atomic loads. Inserts are serialised by mu;
// growing builds a new table and publishes it, so a reader still probing the old one
// finds the entries it held (or misses and takes the insert path, which looks again).
type termMemo struct {
	seed maphash.Seed
	tab  atomic.Pointer[memoTable]
	mu   sync.Mutex // serialises inserts and growth
	n    int        // entries in tab; guarded by mu
}

var termCache = newTermMemo()

func newTermMemo() *termMemo {
	m := &termMemo{seed: maphash.MakeSeed()}
	m.tab.Store(&memoTable{slots: make([]atomic.Pointer[memoEntry], memoMinSlots), mask: memoMinSlots - 1})
	return m
}

// lookup returns the entry of the folded word w, analysing and memoising it on a miss.
func (m *termMemo) lookup(w string) *memoEntry {
	h := maphash.String(m.seed, w)
	t := m.tab.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			break
		}
		if e.word == w {
			return e
		}
	}
	return m.insert(h, strings.Clone(w))
}

// lookupBytes is lookup for a word held in a byte slice; it does not allocate on a hit.
func (m *termMemo) lookupBytes(b []byte) *memoEntry {
	h := maphash.Bytes(m.seed, b)
	t := m.tab.Load()
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			break
		}
		if e.word == string(b) {
			return e
		}
	}
	return m.insert(h, string(b))
}

// insert memoises the analysis of w (hash h, a string the memo may keep) unless the table
// is full, and returns it.
func (m *termMemo) insert(h uint64, w string) *memoEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tab.Load()
	i := h & t.mask
	for ; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			break
		}
		if e.word == w { // inserted by another goroutine since our probe
			return e
		}
	}
	e := newMemoEntry(w)
	if 2*(m.n+1) > len(t.slots) {
		if len(t.slots) >= memoMaxSlots {
			return e // full: analysed, not memoised
		}
		t = m.grow(t)
		for i = h & t.mask; t.slots[i].Load() != nil; i = (i + 1) & t.mask {
		}
	}
	t.slots[i].Store(e)
	m.n++
	return e
}

// grow publishes a table of twice the slots of t holding t's entries, and returns it.
func (m *termMemo) grow(t *memoTable) *memoTable {
	nt := &memoTable{slots: make([]atomic.Pointer[memoEntry], 2*len(t.slots)), mask: uint64(2*len(t.slots) - 1)}
	for i := range t.slots {
		e := t.slots[i].Load()
		if e == nil {
			continue
		}
		j := maphash.String(m.seed, e.word) & nt.mask
		for nt.slots[j].Load() != nil {
			j = (j + 1) & nt.mask
		}
		nt.slots[j].Store(e)
	}
	m.tab.Store(nt)
	return nt
}

// get returns the term of the folded word w, memoised when short.
func (m *termMemo) get(w string) string {
	if len(w) > maxStemBytes {
		return w
	}
	return m.lookup(w).term
}
