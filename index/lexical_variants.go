package index

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// A query term's variants are the index terms of the same word family that the stemmer
// leaves apart: the one is the other plus a short suffix ("scan" and "scanner", "rental"
// and "rent", "financi" (financial) and "financ" (finance), "crypto" and "cryptocurr").
// The lexical retriever adds them to a query at LexicalParams.VariantWeight of a query
// term's weight. Two Latin terms (folded, stemmed, letters a-z only) are variants when
// the shorter has at least variantMinLen letters, the longer adds at most
// LexicalParams.VariantSuffix letters, and what it adds is not itself a word of the index
// (then the longer term is a compound of two words, as the joined "newstool" of
// "NewsTool" is, not a form of the shorter one).
const (
	variantMinLen = 4
	// maxVariantTerms bounds the variants of one query (those of highest idf are kept)
	maxVariantTerms = 32
	// maskVariant marks a lexical candidate matched through a variant.
	maskVariant = 1 << 14
	// maxVariantMemo bounds the query terms whose variants a generation memoises.
	maxVariantMemo = 1 << 14
)

// lexVocab is what the variants of one lexical index are found with, built on first use:
// its sorted vocabulary, the set of its terms less their last letter (isWord), and the
// variants of the query terms met so far (at most maxVariantMemo terms).
type lexVocab struct {
	once  sync.Once
	terms []string
	short map[string]struct{}
	memo  sync.Map // variantKey → []uint32
	nmemo atomic.Int32
}

type variantKey struct {
	term   string
	suffix int
}

// vocabulary returns x.vocab, built.
func (x *lexIndex) vocabulary() *lexVocab {
	v := x.vocab
	v.once.Do(func() {
		terms := make([]string, 0, len(x.dict)+len(x.more))
		for _, m := range []map[string]uint32{x.dict, x.more} {
			for t, id := range m {
				if x.df[id] > 0 {
					terms = append(terms, t)
				}
			}
		}
		slices.Sort(terms)
		v.terms = terms
		v.short = make(map[string]struct{}, len(terms))
		for _, t := range terms {
			if len(t) > 3 {
				v.short[t[:len(t)-1]] = struct{}{}
			}
		}
	})
	return v
}

// sortedTerms returns the terms that occur in some document, sorted.
func (x *lexIndex) sortedTerms() []string { return x.vocabulary().terms }

// latinTerm reports whether t is made of the letters a-z alone.
func latinTerm(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] < 'a' || t[i] > 'z' {
			return false
		}
	}
	return t != ""
}

// appendVariants appends to dst the ids of the index terms that are variants of the query
// term t (see above), at most maxSuffix letters longer or shorter: the longer ones in
// vocabulary order, then the shorter ones, longest first.
func (x *lexIndex) appendVariants(dst []uint32, t string, maxSuffix int) []uint32 {
	if maxSuffix <= 0 || len(t) < variantMinLen || !latinTerm(t) {
		return dst
	}
	v := x.vocabulary()
	k := variantKey{t, maxSuffix}
	if m, ok := v.memo.Load(k); ok {
		return append(dst, m.([]uint32)...)
	}
	n := len(dst)
	dst = x.findVariants(dst, t, maxSuffix)
	if v.nmemo.Load() < maxVariantMemo {
		if _, loaded := v.memo.LoadOrStore(k, slices.Clone(dst[n:])); !loaded {
			v.nmemo.Add(1)
		}
	}
	return dst
}

// findVariants is appendVariants without the memo.
func (x *lexIndex) findVariants(dst []uint32, t string, maxSuffix int) []uint32 {
	voc := x.sortedTerms()
	i, _ := slices.BinarySearch(voc, t)
	for ; i < len(voc) && strings.HasPrefix(voc[i], t); i++ {
		u := voc[i]
		if len(u) == len(t) || len(u)-len(t) > maxSuffix || !latinTerm(u) || x.isWord(u[len(t):]) {
			continue
		}
		if id, ok := x.termID(u); ok {
			dst = append(dst, id)
		}
	}
	for n := len(t) - 1; n >= variantMinLen && len(t)-n <= maxSuffix; n-- {
		if x.isWord(t[n:]) {
			continue
		}
		if id, ok := x.termID(t[:n]); ok {
			dst = append(dst, id)
		}
	}
	return dst
}

// isWord reports whether s (3 letters or more) is a word of the index: a term, or a term
// less its last letter (the stem of "phone" is "phone": the rest of "smartphon" after
// "smart" is "phon").
func (x *lexIndex) isWord(s string) bool {
	if len(s) < 3 {
		return false
	}
	if _, ok := x.termID(s); ok {
		return true
	}
	_, ok := x.vocabulary().short[s]
	return ok
}
