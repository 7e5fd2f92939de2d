package embed

// The sort-based EmbedSparse as it was before the radix rewrite, kept as the oracle the
// optimised path must match bit for bit (TestEmbedSparseMatchesReference).

import (
	"math"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
)

type refScratch struct {
	feats    []feat
	concepts []string
	sc       text.Scanner
	marked   []byte
	offs     []int
}

var refScratchPool = sync.Pool{New: func() any {
	return &refScratch{feats: make([]feat, 0, 256), concepts: make([]string, 0, 16), marked: make([]byte, 0, 128), offs: make([]int, 0, maxGramRunes+3)}
}}

// EmbedSparse returns the sparse vector of s; the empty vector when s has no features.
func (h *Hashed) refEmbedSparse(s string) SparseVector {
	st := refScratchPool.Get().(*refScratch)
	defer refScratchPool.Put(st)
	feats := st.feats[:0]

	st.sc.Reset(s)
	for st.sc.Next() {
		switch st.sc.Kind() {
		case text.KindCJK:
			feats = h.refCJKFeatures(feats, st.sc.Text())
			feats = h.refBridgeFeatures(feats, st.sc.Text())
		case text.KindWord:
			term, ok := st.sc.Term()
			if !ok {
				continue
			}
			feats = append(feats, mkFeat(h.refBucket(nsWord, term), weightWord))
			feats = h.refGramFeatures(feats, st, st.sc.Bytes())
		case text.KindJoined:
			if term, ok := st.sc.Term(); ok {
				feats = append(feats, mkFeat(h.refBucket(nsWord, term), weightWord))
			}
		}
	}
	st.sc.Reset("")

	st.concepts = text.AppendConcepts(st.concepts[:0], s)
	for _, c := range st.concepts {
		feats = append(feats, mkFeat(h.refBucket(nsConcept, c), weightConcept))
	}
	clear(st.concepts)

	v := refFinish(feats)
	st.feats = feats[:0]
	return v
}

// gramFeatures appends the character n-grams of a folded word wrapped as "<word>".
func (h *Hashed) refGramFeatures(feats []feat, st *refScratch, word []byte) []feat {
	marked := append(append(append(st.marked[:0], '<'), word...), '>')
	st.marked = marked
	offs := st.offs[:0]
	for i := 0; i < len(marked); {
		offs = append(offs, i)
		if len(offs) > maxGramRunes+2 {
			st.offs = offs[:0]
			return feats
		}
		_, size := utf8.DecodeRune(marked[i:])
		i += size
	}
	offs = append(offs, len(marked))
	st.offs = offs[:0]
	runes := len(offs) - 1
	k := 0
	for n := minGram; n <= maxGram; n++ {
		if runes >= n {
			k += runes - n + 1
		}
	}
	if k == 0 { // a one-rune word: "<a>" is its only gram
		return append(feats, mkFeat(h.refBucketBytes(nsGram, marked), weightGrams))
	}
	w := float32(weightGrams / math.Sqrt(float64(k)))
	for n := minGram; n <= maxGram; n++ {
		for a := 0; a+n <= runes; a++ {
			feats = append(feats, mkFeat(h.refBucketBytes(nsGram, marked[offs[a]:offs[a+n]]), w))
		}
	}
	return feats
}

// cjkFeatures appends the unigrams and bigrams of a CJK run.
func (h *Hashed) refCJKFeatures(feats []feat, run string) []feat {
	for i := 0; i < len(run); {
		_, n := utf8.DecodeRuneInString(run[i:])
		j := i + n
		feats = append(feats, mkFeat(h.refBucket(nsCJK, run[i:j]), weightUnigram))
		if j < len(run) {
			_, m := utf8.DecodeRuneInString(run[j:])
			feats = append(feats, mkFeat(h.refBucket(nsCJK, run[i:j+m]), weightBigram))
		}
		i = j
	}
	return feats
}

// finish merges feature occurrences per bucket with sublinear term frequency and
// L2-normalises: a bucket hit c times by features of weight w gets w·(1+ln c).
func refFinish(feats []feat) SparseVector {
	if len(feats) == 0 {
		return SparseVector{}
	}
	slices.Sort(feats)
	n := 1
	for i := 1; i < len(feats); i++ {
		if feats[i].idx() != feats[i-1].idx() {
			n++
		}
	}
	v := SparseVector{Idx: make([]uint32, 0, n), Val: make([]float32, 0, n)}
	var ss float64
	for i := 0; i < len(feats); {
		j := i
		var sum, wmax float32
		for ; j < len(feats) && feats[j].idx() == feats[i].idx(); j++ {
			sum += feats[j].w()
			wmax = max(wmax, feats[j].w())
		}
		val := wmax * float32(1+math.Log(float64(sum/wmax)))
		v.Idx = append(v.Idx, feats[i].idx())
		v.Val = append(v.Val, val)
		ss += float64(val) * float64(val)
		i = j
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v.Val {
		v.Val[i] *= inv
	}
	return v
}

func (h *Hashed) refBucket(ns byte, s string) uint32 {
	x := uint64(fnvOffset)
	x = (x ^ uint64(ns)) * fnvPrime
	for i := 0; i < len(s); i++ {
		x = (x ^ uint64(s[i])) * fnvPrime
	}
	return uint32(mix(x) % uint64(h.dim))
}

func (h *Hashed) refBucketBytes(ns byte, b []byte) uint32 {
	x := uint64(fnvOffset)
	x = (x ^ uint64(ns)) * fnvPrime
	for _, c := range b {
		x = (x ^ uint64(c)) * fnvPrime
	}
	return uint32(mix(x) % uint64(h.dim))
}

// refBridgeFeatures is bridgeBuckets.features over runes: forward maximum matching of the
// run against defaultBridge, each word found adding its English words' features.
func (h *Hashed) refBridgeFeatures(feats []feat, run string) []feat {
	rs := []rune(run)
	b := defaultBridge()
	for i := 0; i < len(rs); {
		n := 1
		for k := min(bridgeMaxRunes, len(rs)-i); k >= bridgeMinRunes; k-- {
			keys, ok := b.wordKeys(string(rs[i : i+k]))
			if !ok {
				continue
			}
			w := float32(weightBridge / math.Sqrt(float64(len(keys))))
			for _, key := range keys {
				feats = append(feats, mkFeat(h.refBucket(nsWord, key), w))
			}
			n = k
			break
		}
		i += n
	}
	return feats
}
