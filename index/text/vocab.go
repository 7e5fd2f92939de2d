package text

import (
	"strings"
	"sync"
)

// Vocab numbers, for good, every term a chain of builds analysed (the lexical indexes of
// index.Options.Reuse, the term caches of rank.TermCache.Next), so that an analysis kept
// for the next build holds four bytes a term instead of a string. It only grows (see
// Outgrown). A build numbers terms while it holds the lock (builds of a chain run one after
// another, but two builds may continue one chain).
type Vocab struct {
	sync.Mutex
	ids   map[string]uint32
	terms []string
}

// NewVocab returns an empty vocabulary.
func NewVocab() *Vocab { return &Vocab{ids: make(map[string]uint32)} }

// Number returns term's number, giving it the next one when it is new (the caller holds
// the lock). The vocabulary keeps its own copy of a new term, never a slice of the text it
// was cut from.
func (v *Vocab) Number(term string) uint32 {
	n, ok := v.ids[term]
	if !ok {
		n = uint32(len(v.terms))
		term = strings.Clone(term)
		v.ids[term] = n
		v.terms = append(v.terms, term)
	}
	return n
}

// Term is the term numbered n (the caller holds the lock).
func (v *Vocab) Term(n uint32) string { return v.terms[n] }

// Len is how many terms the vocabulary numbered (the caller holds the lock).
func (v *Vocab) Len() int { return len(v.terms) }

// Outgrown reports whether the vocabulary holds more than twice the live terms (those of
// the chain's last build, plus a margin), the rest from texts changed since: the next build
// then analyses everything again into a new vocabulary, so that a registry whose words keep
// changing does not keep every word it ever had.
func (v *Vocab) Outgrown(live int) bool {
	v.Lock()
	defer v.Unlock()
	return len(v.terms) > 2*live+1024
}
