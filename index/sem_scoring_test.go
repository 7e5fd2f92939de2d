package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/testcat"
)

// refQueryTerms is queryTerms as it was before the per-list marks (still its path for
// indexes with too many lists): merged through mergeTerms' hash table.
func refQueryTerms(x *semIndex, v embed.SparseVector) ([]semTerm, float64) {
	st := &semScratch{}
	return x.finishTerms(st, x.hashMergedTerms(st, v))
}

// TestQueryTermsMatchReference checks queryTerms (marks per list) against the hash-table
// merge, bit for bit, on the generated catalogue's texts and on the evaluation queries, with
// a scratch reused across queries (its marks must be left clear).
func TestQueryTermsMatchReference(t *testing.T) {
	g := buildCaps(t, 1, testcat.GenerateCatalog(1500, 7), Options{})
	var texts []string
	for i, c := range g.Snapshot().Caps {
		if i%5 == 0 {
			texts = append(texts, c.Title, c.Summary, embedText(c))
		}
	}
	for _, set := range []string{"seal_tools", "hammerbench_zh"} {
		if s := loadEvalSet(t, evalDir(), set); s != nil {
			for i, q := range s.queries {
				if i%3 == 0 {
					texts = append(texts, q.Query)
				}
			}
		}
	}
	x := &g.sem
	st := semScratchPool.Get().(*semScratch)
	defer semScratchPool.Put(st)
	for _, s := range texts {
		v := x.sparse.EmbedSparse(s)
		got, gsum := x.queryTerms(st, v)
		want, wsum := refQueryTerms(x, v)
		if !slices.Equal(got, want) || math.Float64bits(gsum) != math.Float64bits(wsum) {
			t.Fatalf("%.80q: terms %v (sum %v), want %v (sum %v)", s, got, gsum, want, wsum)
		}
		for l, m := range st.marks {
			if m != 0 {
				t.Fatalf("%.80q: list %d left marked", s, l)
			}
		}
	}
}

// refDotForward decodes a document's forward records one by one (see appendForward).
func refDotForward(fwd []uint16, lw *[maxCommonLists]int32) int32 {
	var sum int32
	c := 0
	for _, r := range fwd {
		c += int(r & 0xff)
		sum += lw[c] * int32(int8(r>>8))
	}
	return sum
}

// TestDotForward checks dotForward2 (the interleaved loop and the tails) and dotForward
// against a plain decoding, on random documents of 0 to 300 postings with gaps that take
// filler records.
func TestDotForward(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lw := new([maxCommonLists]int32)
	for i := range lw {
		lw[i] = r.Int32N(1<<16) - 1<<15
	}
	doc := func() []uint16 {
		var common []uint32
		c := uint32(0)
		for range r.IntN(300) {
			c += 1 + uint32(r.IntN(600)*r.IntN(2)+r.IntN(4))
			if c >= maxCommonLists {
				break
			}
			common = append(common, c<<8|uint32(uint8(r.IntN(256))))
		}
		return appendForward(nil, common)
	}
	for range 3000 {
		a, b := doc(), doc()
		sa, sb := dotForward2(a, b, lw)
		if wa, wb := refDotForward(a, lw), refDotForward(b, lw); sa != wa || sb != wb {
			t.Fatalf("dotForward2: %d, %d, want %d, %d (%d and %d records)", sa, sb, wa, wb, len(a), len(b))
		}
		if got, want := dotForward(a, 0, 5, lw), refDotForward(a, lw)+5; got != want {
			t.Fatalf("dotForward: %d, want %d", got, want)
		}
	}
}

// TestAccumulate checks accumulate, with and without an allow bitset, against a plain
// loop: scores, the documents touched (each once, in order of first posting) and seen.
func TestAccumulate(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const n = 700
	x := &semIndex{}
	var terms []semTerm
	for range 40 {
		df := r.IntN(200)
		docs := make([]uint32, 0, df)
		for range df {
			docs = append(docs, uint32(r.IntN(n)))
		}
		slices.Sort(docs)
		docs = slices.Compact(docs)
		start := len(x.post)
		for _, d := range docs {
			x.post = append(x.post, d<<8|uint32(uint8(r.IntN(256))))
		}
		terms = append(terms, semTerm{start: uint32(start), df: uint32(len(docs)), wi: r.Int32N(2000) - 1000})
	}
	allow := make([]uint64, (n+63)/64)
	for d := range n {
		if r.IntN(3) > 0 {
			allow[d/64] |= 1 << (d % 64)
		}
	}
	for _, bits := range [][]uint64{nil, allow} {
		st := &semScratch{acc: make([]int32, n), seen: make([]uint64, (n+63)/64)}
		want := make([]int32, n)
		var wantTouched []uint32
		seen := map[uint32]bool{}
		for i := range terms {
			tm := &terms[i]
			x.accumulate(st, tm, bits)
			for _, p := range x.span(tm.start, tm.df) {
				d := p >> 8
				if bits != nil && bits[d/64]&(1<<(d%64)) == 0 {
					continue
				}
				if !seen[d] {
					seen[d] = true
					wantTouched = append(wantTouched, d)
				}
				want[d] += tm.wi * int32(int8(p))
			}
		}
		if !slices.Equal(st.acc, want) || !slices.Equal(st.touched, wantTouched) {
			t.Fatalf("bits %v: scores or touched documents differ", bits != nil)
		}
		st.reset()
		if slices.ContainsFunc(st.acc, func(v int32) bool { return v != 0 }) || slices.ContainsFunc(st.seen, func(v uint64) bool { return v != 0 }) {
			t.Fatal("reset left scores or seen bits")
		}
	}
}

// TestKthLargestSpan checks the radix select given the span and a separate buffer: the
// k-th largest as sorting finds it, and v left as it was.
func TestKthLargestSpan(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 2000 {
		n := 1 + r.IntN(1500)
		span := int64(1) << r.IntN(33)
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(r.Int64N(span) - span/2)
		}
		orig := slices.Clone(v)
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		k := r.IntN(n)
		buf := make([]int32, 0, n)
		if got, want := kthLargestSpan(v, k, sorted[0], sorted[n-1], buf), sorted[n-1-k]; got != want {
			t.Fatalf("n=%d span=%d k=%d: got %d, want %d", n, span, k, got, want)
		}
		if !slices.Equal(v, orig) {
			t.Fatalf("n=%d: v was reordered", n)
		}
	}
}

// TestSemanticQueryBuffers runs queries of very different sizes through one scratch in
// turn (a huge one, whose buffers are not kept, among them) and checks each answer against
// a fresh run.
func TestSemanticQueryBuffers(t *testing.T) {
	g := buildCaps(t, 1, testcat.GenerateCatalog(800, 3), Options{})
	caps := g.Snapshot().Caps
	queries := []string{caps[0].Title, strings.Repeat(caps[1].Summary+" ", 400), "删除日程", caps[2].Summary, "x", caps[3].Title}
	want := make([][]Hit, len(queries))
	for i, q := range queries {
		want[i] = g.semanticSparse(&Query{Text: q}, nil, 20)
	}
	for range 3 {
		for i, q := range queries {
			got := g.semanticSparse(&Query{Text: q}, nil, 20)
			if len(got) != len(want[i]) {
				t.Fatalf("%.40q: %d hits, want %d", q, len(got), len(want[i]))
			}
			for j := range got {
				if got[j].Doc != want[i][j].Doc || got[j].Score != want[i][j].Score {
					t.Fatalf("%.40q: hit %d is %v, want %v", q, j, got[j], want[i][j])
				}
			}
		}
	}
}
