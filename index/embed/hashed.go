package embed

import (
	"context"
	"encoding/binary"
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
const hashedVersion = "v2"

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
// word, and for each Chinese word of the CC-CEDICT bridge (bridge.go) found in a CJK run the
// word features of its English glosses, so Chinese and English texts, and two Chinese words
// with one gloss, share features the lexical retriever does not see. Term frequency is sublinear (1+ln tf); vectors are L2-normalised. English stop
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
	// bridge returns the cross-language bridge hashed for h (see bridge.go).
	bridge func() *bridgeBuckets
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
	h.bridge = sync.OnceValue(func() *bridgeBuckets { return newBridgeBuckets(h, defaultBridge()) })
	return h
}

// ID is "hashed-v2-<dim>"; the version changes whenever features or weights change.
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
	tmp      []feat   // sort buffer
	bins     []int32  // binSort's counters
	idx      []uint32 // EmbedSparse's merged vector, before it is copied out
	val      []float32
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
func (h *Hashed) EmbedSparse(s string) SparseVector { return h.embedSparse(SparseVector{}, s, true) }

// EmbedSparseInto returns EmbedSparse(s) in the buffers of dst (an earlier vector the
// caller no longer needs) when they are large enough, else in new ones.
func (h *Hashed) EmbedSparseInto(dst SparseVector, s string) SparseVector {
	return h.embedSparse(dst, s, false)
}

// embedSparse is EmbedSparse (exact) or EmbedSparseInto (see finish).
func (h *Hashed) embedSparse(dst SparseVector, s string, exact bool) SparseVector {
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
			feats = h.bridge().features(feats, key)
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
	v := st.finish(h.bits, dst, exact)
	st.feats = st.feats[:0]
	if cap(st.feats) > maxPooledFeats || cap(st.tmp) > maxPooledFeats || cap(st.toks) > maxPooledFeats/4 || cap(st.idx) > maxPooledFeats { // a huge text: do not pin its buffers
		st.feats, st.tmp, st.toks, st.idx, st.val = make([]feat, 0, 256), nil, make([]text.Token, 0, 64), nil, nil
	}
	return v
}

// maxPooledFeats bounds the feature buffers a pooled scratch keeps (128 KiB each).
const maxPooledFeats = 1 << 14

// gramFeatures appends the character n-grams of a folded word wrapped as "<word>".
func (h *Hashed) gramFeatures(feats []feat, st *hashedScratch, word []byte) []feat {
	if len(word) > 0 && len(word) <= maxGramRunes && (h.mask != 0 || h.dim == 1) && isASCII(word) {
		return h.asciiGramFeatures(feats, st, word)
	}
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

// isASCII reports whether b is all ASCII, eight bytes at a time.
func isASCII(b []byte) bool {
	var or uint64
	for ; len(b) >= 8; b = b[8:] {
		or |= binary.LittleEndian.Uint64(b)
	}
	for _, c := range b {
		or |= uint64(c)
	}
	return or&0x8080808080808080 == 0
}

// gramNS is the FNV state after the gram namespace.
var gramNS = fnvByte(fnvOffset, nsGram)

// fnvByte is one step of FNV-1a.
func fnvByte(x uint64, c byte) uint64 { return (x ^ uint64(c)) * fnvPrime }

// asciiGramFeatures is gramFeatures for a word of 1 to maxGramRunes ASCII bytes (one
// rune each) and a power-of-two dimension: the same n-grams, 3 to 5 bytes of "<word>",
// hashed once per start as there, without rune offsets, in straight-line code.
func (h *Hashed) asciiGramFeatures(feats []feat, st *hashedScratch, word []byte) []feat {
	m := append(append(append(st.marked[:0], '<'), word...), '>')
	st.marked = m
	// "<word>" has R = len(word)+2 runes, and and R-4 (when positive) 3-, 4- and
	// 5-grams
	R := len(m)
	k := R - 2 + max(R-3, 0) + max(R-4, 0)
	w := uint64(math.Float32bits(float32(weightGrams / math.Sqrt(float64(k)))))
	n0 := len(feats)
	feats = slices.Grow(feats, k)[:n0+k]
	out := feats[n0:]
	mask, ns := h.mask, gramNS
	red := func(x uint64) feat { return feat((mix(x)&mask)<<32 | w) }
	o, a := 0, 0
	for ; a+5 <= R; a++ { // a 3-, 4- and 5-gram start at a
		g, f := m[a:a+5:a+5], out[o:o+3:o+3]
		x := (ns ^ uint64(g[0])) * fnvPrime
		x = (x ^ uint64(g[1])) * fnvPrime
		x = (x ^ uint64(g[2])) * fnvPrime
		f[0] = red(x)
		x = (x ^ uint64(g[3])) * fnvPrime
		f[1] = red(x)
		x = (x ^ uint64(g[4])) * fnvPrime
		f[2] = red(x)
		o += 3
	}
	for ; a+3 <= R; a++ { // the last starts: a 3-gram, and a 4-gram when it fits
		x := (ns ^ uint64(m[a])) * fnvPrime
		x = (x ^ uint64(m[a+1])) * fnvPrime
		x = (x ^ uint64(m[a+2])) * fnvPrime
		out[o] = red(x)
		o++
		if a+4 <= R {
			x = (x ^ uint64(m[a+3])) * fnvPrime
			out[o] = red(x)
			o++
		}
	}
	return feats
}

// cjkFeatures appends the unigrams and bigrams of a CJK run. A bigram's hash goes on from
// its first rune's (the unigram's), and each rune is decoded once.
func (h *Hashed) cjkFeatures(feats []feat, run string) []feat {
	if len(run) == 0 {
		return feats
	}
	ns := fnvByte(fnvOffset, nsCJK)
	_, n := utf8.DecodeRuneInString(run)
	for i := 0; i < len(run); {
		j := i + n
		x := ns
		for k := i; k < j; k++ {
			x = (x ^ uint64(run[k])) * fnvPrime
		}
		feats = append(feats, mkFeat(h.reduce(x), weightUnigram))
		if j < len(run) {
			_, n = utf8.DecodeRuneInString(run[j:])
			for k := j; k < j+n; k++ {
				x = (x ^ uint64(run[k])) * fnvPrime
			}
			feats = append(feats, mkFeat(h.reduce(x), weightBigram))
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
// buffer the sort may swap with st.tmp; idxBits is the width of the largest bucket. The
// vector is written in dst's buffers when they hold len(st.feats) entries, else in new ones
// of that capacity; when exact, in new buffers of its length, dst unused.
func (st *hashedScratch) finish(idxBits int, dst SparseVector, exact bool) SparseVector {
	if len(st.feats) == 0 {
		if exact || dst.Idx == nil {
			return SparseVector{}
		}
		return SparseVector{Idx: dst.Idx[:0], Val: dst.Val[:0]}
	}
	feats := st.feats
	// The merged vector has at most len(feats) entries: EmbedSparseInto writes it in dst
	// (or new buffers of that capacity), EmbedSparse in st's buffers, then copies it out
	// at its length.
	idx, val := dst.Idx, dst.Val
	if !exact {
		if cap(idx) < len(feats) {
			idx = make([]uint32, len(feats))
		}
		if cap(val) < len(feats) {
			val = make([]float32, len(feats))
		}
	} else {
		if cap(st.idx) < len(feats) {
			st.idx, st.val = make([]uint32, len(feats)), make([]float32, len(feats))
		}
		idx, val = st.idx, st.val
	}
	idx, val = idx[:len(feats)], val[:len(feats)]
	sorted := true // whole occurrences in order, not only buckets
	switch n := len(feats); {
	case n < binSortMin:
		slices.Sort(feats)
	case n <= binSortMax && binSort(&st.feats, &st.tmp, &st.bins, idxBits):
	default:
		radixSort(&st.feats, &st.tmp, idxBits)
		sorted = false
	}
	o, ss := mergeRuns(st.feats, idx, val, sorted)
	inv := float32(1 / math.Sqrt(ss))
	if exact {
		out := SparseVector{Idx: make([]uint32, o), Val: make([]float32, o)}
		copy(out.Idx, idx[:o])
		for i, v := range val[:o] {
			out.Val[i] = v * inv
		}
		return out
	}
	idx, val = idx[:o], val[:o]
	for i := range val {
		val[i] *= inv
	}
	return SparseVector{Idx: idx, Val: val}
}

// mergeRuns merges the occurrences feats, ordered by bucket, into idx and val: a bucket
// hit c times by features of weight w gets w·(1+ln c), its weights summed in the order of
// their bits (sorted: feats are so ordered within each bucket, else each bucket's run is
// insertion-sorted first). It returns the entries written and the sum of their squares.
func mergeRuns(feats []feat, idx []uint32, val []float32, sorted bool) (o int, ss float64) {
	for i := 0; i < len(feats); o++ {
		f := feats[i]
		j := i + 1
		for j < len(feats) && feats[j]>>32 == f>>32 {
			j++
		}
		v := f.w()
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
			v = wmax * float32(1+math.Log(float64(sum/wmax)))
		}
		idx[o], val[o] = f.idx(), v
		ss += float64(v) * float64(v)
		i = j
	}
	return o, ss
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
