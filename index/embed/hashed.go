package embed

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
)

// DefaultHashedDim is the dimension of NewHashed: 2^18 buckets keep collisions rare for
// sparse vectors of a few hundred features.
const DefaultHashedDim = 1 << 18

// hashedVersion is part of Hashed.ID; bump it whenever features or weights change.
const hashedVersion = "v1"

// Feature weights of Hashed, before sublinear term frequency and L2 normalisation.
const (
	// weightGrams is the total weight of one word's character n-grams: each of a word's
	// k n-grams weighs weightGrams/sqrt(k), so long and short words count alike.
	weightGrams = 1.0
	// weightWord is the weight of a whole stemmed word (and of a joined camel-case form).
	weightWord = 1.0
	// weightUnigram and weightBigram weigh CJK unigrams and bigrams.
	weightUnigram = 0.5
	weightBigram  = 1.0
	// weightConcept weighs each concept of the bilingual lexicon: the bridge between
	// languages and synonyms, so it weighs more than any surface feature.
	weightConcept = 2.5
)

// N-gram lengths, in runes, of a word wrapped in boundary marks ("<word>").
const (
	minGram = 3
	maxGram = 5
	// maxGramRunes bounds the words that get n-grams; longer tokens get only the
	// whole-word feature.
	maxGramRunes = 64
)

// Feature namespaces, hashed in front of the feature bytes so kinds never collide.
const (
	nsGram    = 'g'
	nsWord    = 'w'
	nsCJK     = 'c'
	nsConcept = 'k'
)

// Hashed is the default offline embedder: hashed character n-grams of folded words (3 to
// 5 runes, with boundary marks), whole stemmed words, CJK unigrams and bigrams, and one
// feature per concept of the bilingual lexicon (text.AppendConcepts), weighted 2.5 times a
// word. Term frequency is sublinear (1+ln tf); vectors are L2-normalised. English stop
// words are ignored.
//
// Its natural form is sparse (EmbedSparse). Embed returns dense vectors of Dim entries,
// which is sensible only for a small dimension (NewHashedDim(512)); at the default 2^18 a
// dense vector takes 1 MiB. Hashed is safe for concurrent use.
type Hashed struct {
	dim  uint32
	mask uint64 // dim-1 when dim is a power of two (x%dim == x&mask), else 0
	bits int    // bits of the largest bucket, dim-1
	id   string
	// conceptBuckets returns the bucket of every default-lexicon concept, by concept id.
	conceptBuckets func() []uint32
}

// NewHashed returns a Hashed embedder of DefaultHashedDim dimensions.
func NewHashed() *Hashed { return NewHashedDim(DefaultHashedDim) }

// NewHashedDim returns a Hashed embedder of dim dimensions (DefaultHashedDim when dim < 1,
// at most 2^31). Small dimensions make dense vectors practical at the cost of collisions.
func NewHashedDim(dim int) *Hashed {
	if dim < 1 || dim > 1<<31 {
		dim = DefaultHashedDim
	}
	h := &Hashed{dim: uint32(dim), bits: bits.Len32(uint32(dim - 1)), id: "hashed-" + hashedVersion + "-" + strconv.Itoa(dim)}
	if dim&(dim-1) == 0 {
		h.mask = uint64(dim - 1)
	}
	h.conceptBuckets = sync.OnceValue(func() []uint32 {
		lex := text.DefaultLexicon()
		b := make([]uint32, lex.Len())
		for id := range b {
			b[id] = h.bucket(nsConcept, lex.Name(int32(id)))
		}
		return b
	})
	return h
}

// ID is "hashed-v1-<dim>"; the version changes whenever features or weights change.
func (h *Hashed) ID() string { return h.id }

// Dim is the number of hash buckets.
func (h *Hashed) Dim() int { return int(h.dim) }

// Embed returns dense vectors of Dim entries (see the type's caveat on size).
func (h *Hashed) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = h.EmbedSparse(s).Dense(int(h.dim))
	}
	return out, nil
}

// feat is one weighted feature occurrence packed as bucket<<32 | float32 bits of the
// weight, so a plain integer sort orders by bucket.
type feat uint64

func mkFeat(idx uint32, w float32) feat { return feat(uint64(idx)<<32 | uint64(math.Float32bits(w))) }

func (f feat) idx() uint32 { return uint32(f >> 32) }
func (f feat) w() float32  { return math.Float32frombits(uint32(f)) }

type hashedScratch struct {
	feats    []feat
	tmp      []feat       // sort buffer
	bins     []int32      // binSort's counters
	toks     []text.Token // the scanned text, for the concept matcher
	concepts []int32
	sc       text.Scanner
	marked   []byte
	offs     []int
}

var scratchPool = sync.Pool{New: func() any {
	return &hashedScratch{feats: make([]feat, 0, 256), toks: make([]text.Token, 0, 64), concepts: make([]int32, 0, 16), marked: make([]byte, 0, 128), offs: make([]int, 0, maxGramRunes+3)}
}}

// EmbedSparse returns the sparse vector of s; the empty vector when s has no features.
func (h *Hashed) EmbedSparse(s string) SparseVector {
	st := scratchPool.Get().(*hashedScratch)
	defer scratchPool.Put(st)
	feats := st.feats[:0]

	// One scan gives the surface features and the tokens the concept matcher needs (the
	// same text.AppendConceptIDs would scan for, stop words included).
	toks := st.toks[:0]
	st.sc.Reset(s)
	for st.sc.Next() {
		kind := st.sc.Kind()
		key, stop := st.sc.Key()
		toks = append(toks, text.Token{Key: key, Kind: kind})
		switch {
		case kind == text.KindCJK:
			feats = h.cjkFeatures(feats, key)
		case stop:
		case kind == text.KindWord:
			feats = append(feats, mkFeat(h.bucket(nsWord, key), weightWord))
			feats = h.gramFeatures(feats, st, st.sc.Bytes())
		case kind == text.KindJoined:
			feats = append(feats, mkFeat(h.bucket(nsWord, key), weightWord))
		}
	}
	st.sc.Reset("")

	st.concepts = text.DefaultLexicon().AppendTokenConceptIDs(st.concepts[:0], toks)
	buckets := h.conceptBuckets()
	for _, c := range st.concepts {
		feats = append(feats, mkFeat(buckets[c], weightConcept))
	}
	clear(toks)
	st.toks = toks[:0]

	st.feats = feats
	v := st.finish(h.bits)
	st.feats = st.feats[:0]
	if cap(st.feats) > maxPooledFeats || cap(st.tmp) > maxPooledFeats || cap(st.toks) > maxPooledFeats/4 { // a huge text: do not pin its buffers
		st.feats, st.tmp, st.toks = make([]feat, 0, 256), nil, make([]text.Token, 0, 64)
	}
	return v
}

// maxPooledFeats bounds the feature buffers a pooled scratch keeps (128 KiB each).
const maxPooledFeats = 1 << 14

// gramFeatures appends the character n-grams of a folded word wrapped as "<word>".
func (h *Hashed) gramFeatures(feats []feat, st *hashedScratch, word []byte) []feat {
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
		return append(feats, mkFeat(h.bucketBytes(nsGram, marked), weightGrams))
	}
	w := float32(weightGrams / math.Sqrt(float64(k)))
	// The n-grams starting at one rune share a prefix, so FNV is run once per start and
	// each of its 3-, 4- and 5-rune prefixes emitted; finish sorts, so order is free.
	for a := 0; a+minGram <= runes; a++ {
		x := uint64(fnvOffset)
		x = (x ^ nsGram) * fnvPrime
		for _, c := range marked[offs[a]:offs[a+minGram-1]] {
			x = (x ^ uint64(c)) * fnvPrime
		}
		for n := minGram; n <= maxGram && a+n <= runes; n++ {
			for _, c := range marked[offs[a+n-1]:offs[a+n]] {
				x = (x ^ uint64(c)) * fnvPrime
			}
			feats = append(feats, mkFeat(h.reduce(x), w))
		}
	}
	return feats
}

// cjkFeatures appends the unigrams and bigrams of a CJK run.
func (h *Hashed) cjkFeatures(feats []feat, run string) []feat {
	for i := 0; i < len(run); {
		_, n := utf8.DecodeRuneInString(run[i:])
		j := i + n
		feats = append(feats, mkFeat(h.bucket(nsCJK, run[i:j]), weightUnigram))
		if j < len(run) {
			_, m := utf8.DecodeRuneInString(run[j:])
			feats = append(feats, mkFeat(h.bucket(nsCJK, run[i:j+m]), weightBigram))
		}
		i = j
	}
	return feats
}

// Feature occurrences are sorted by value (bucket, then weight bits) before merging:
// fewer than binSortMin by slices.Sort; up to binSortMax by binSort, as long as its bins
// hold a few occurrences each; longer texts by radixSort and a per-bucket insertion sort.
const (
	binSortMin = 32
	binSortMax = 1 << 13
	// maxBinBits bounds binSort's bins (2^maxBinBits counters).
	maxBinBits = 12
	// maxBinLoad is the largest mean occupancy of a bin binSort accepts; beyond it (a
	// small dimension leaves few bins) the insertion sort would degrade.
	maxBinLoad = 4
)

// radixBits is the digit width of finish's LSD radix sort: two passes for 2^18 buckets.
const radixBits = 9

// finish merges feature occurrences per bucket with sublinear term frequency and
// L2-normalises: a bucket hit c times by features of weight w gets w·(1+ln c). The
// occurrences are ordered as slices.Sort orders them (by bucket, then weight bits), so
// each bucket's weights are summed in the same float32 order. It reads st.feats, whose
// buffer the sort may swap with st.tmp; idxBits is the width of the largest bucket.
func (st *hashedScratch) finish(idxBits int) SparseVector {
	if len(st.feats) == 0 {
		return SparseVector{}
	}
	sorted := true // whole occurrences in order, not only buckets
	switch n := len(st.feats); {
	case n < binSortMin:
		slices.Sort(st.feats)
	case n <= binSortMax && binSort(&st.feats, &st.tmp, &st.bins, idxBits):
	default:
		radixSort(&st.feats, &st.tmp, idxBits)
		sorted = false
	}
	feats := st.feats
	n := 1
	for i := 1; i < len(feats); i++ {
		if feats[i].idx() != feats[i-1].idx() {
			n++
		}
	}
	v := SparseVector{Idx: make([]uint32, 0, n), Val: make([]float32, 0, n)}
	var ss float64
	for i := 0; i < len(feats); {
		j := i + 1
		for j < len(feats) && feats[j].idx() == feats[i].idx() {
			j++
		}
		val := feats[i].w()
		if j > i+1 { // one occurrence: ln 1 = 0
			run := feats[i:j]
			if !sorted { // radixSort orders buckets only: runs are short, insertion-sort them
				insertionSort(run)
			}
			var sum, wmax float32
			for _, f := range run {
				sum += f.w()
				wmax = max(wmax, f.w())
			}
			val = wmax * float32(1+math.Log(float64(sum/wmax)))
		}
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

// insertionSort sorts a short or nearly sorted run of occurrences.
func insertionSort(run []feat) {
	for a := 1; a < len(run); a++ {
		for b := a; b > 0 && run[b] < run[b-1]; b-- {
			run[b], run[b-1] = run[b-1], run[b]
		}
	}
}

// binSort sorts *featsp by value in one counting pass and one scatter into about
// len/2 bins by the top bits of the bucket (*tmp is the second buffer; the two may swap;
// *bins holds the counters), then an insertion sort that only has to order each bin:
// buckets are hashes, so the bins hold a couple of occurrences each. It reports false,
// sorting nothing, when the bins would be too crowded for that (a small dimension).
func binSort(featsp, tmp *[]feat, binsp *[]int32, idxBits int) bool {
	feats := *featsp
	k := min(bits.Len(uint(len(feats)))-1, idxBits, maxBinBits)
	if len(feats)>>k > maxBinLoad {
		return false
	}
	if cap(*tmp) < len(feats) {
		*tmp = make([]feat, len(feats), 2*len(feats))
	}
	dst := (*tmp)[:len(feats)]
	shift := 32 + idxBits - k // the top k bits of the bucket, in the packed feat
	if cap(*binsp) < 1<<k {
		*binsp = make([]int32, 1<<maxBinBits)
	}
	bins := (*binsp)[:1<<k]
	clear(bins)
	for _, f := range feats {
		bins[f>>shift]++
	}
	var sum int32
	for d, c := range bins {
		bins[d] = sum
		sum += c
	}
	for _, f := range feats {
		d := f >> shift
		dst[bins[d]] = f
		bins[d]++
	}
	insertionSort(dst)
	*featsp, *tmp = dst, feats[:0]
	return true
}

// radixSort stably sorts *featsp by bucket (the low idxBits bits of idx), LSD in digits
// of radixBits, with *tmp as the second buffer; on return *featsp holds the sorted
// features (possibly in what was *tmp) and *tmp the other buffer.
func radixSort(featsp, tmp *[]feat, idxBits int) {
	feats := *featsp
	if cap(*tmp) < len(feats) {
		*tmp = make([]feat, len(feats), 2*len(feats))
	}
	src, dst := feats, (*tmp)[:len(feats)]
	var count [1 << radixBits]int
	for shift := 0; shift < max(idxBits, 1); shift += radixBits {
		clear(count[:])
		for _, f := range src {
			count[(f.idx()>>shift)&(1<<radixBits-1)]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, f := range src {
			d := (f.idx() >> shift) & (1<<radixBits - 1)
			dst[count[d]] = f
			count[d]++
		}
		src, dst = dst, src
	}
	*featsp, *tmp = src, dst[:0]
}

// FNV-1a 64 with a final avalanche step, over a namespace byte and the feature bytes.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// reduce maps a feature hash to its bucket.
func (h *Hashed) reduce(x uint64) uint32 {
	x = mix(x)
	if h.mask != 0 || h.dim == 1 {
		return uint32(x & h.mask)
	}
	return uint32(x % uint64(h.dim))
}

func (h *Hashed) bucket(ns byte, s string) uint32 {
	x := uint64(fnvOffset)
	x = (x ^ uint64(ns)) * fnvPrime
	for i := 0; i < len(s); i++ {
		x = (x ^ uint64(s[i])) * fnvPrime
	}
	return h.reduce(x)
}

func (h *Hashed) bucketBytes(ns byte, b []byte) uint32 {
	x := uint64(fnvOffset)
	x = (x ^ uint64(ns)) * fnvPrime
	for _, c := range b {
		x = (x ^ uint64(c)) * fnvPrime
	}
	return h.reduce(x)
}
