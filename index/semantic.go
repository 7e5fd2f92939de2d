package index

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/registry"
	"github.com/coder/hnsw"
)

// semIndex holds the vectors of the semantic retriever: an inverted index over the features
// of a sparse embedder, or dense vectors (brute force, or an HNSW graph above the threshold).
type semIndex struct {
	sparse embed.SparseEmbedder

	// sparse: feature → posting list of (doc, value)
	// feature → list id: when the dimension is small enough, lists are numbered in feature
	// order and a feature's list id is its rank among the present features (a bitset with
	// per-word ranks, 1/16 of an int32 table, so query lookups stay in cache); else a map
	ftab  []rankWord
	fmap  map[uint32]uint32
	off   []uint32
	docs  []uint32
	q8    []int8    // values quantised per list: value ≈ q8 × scale[list]
	scale []float32 // per list
	maxV  []float32 // per list, of the quantised values
	minV  []float32

	// forward postings of the common lists (more than commonDF documents), per document:
	// a query's common features only complete candidates found through its rarer ones
	commonDF uint32
	fwdOff   []uint32 // doc → range in fwdList and fwdQ
	fwdList  []uint32
	fwdQ     []int8

	// dense
	dim   int
	vecs  []float32 // n × dim, L2-normalised
	graph *hnsw.Graph[uint32]
}

// HNSW parameters. coder/hnsw v0.6.1 ends a layer-0 search after the first expansion round
// that does not improve the best distance once it holds k results, so recall comes from a
// wide search: the graph is searched for at least hnswMinK neighbours with a candidate
// queue of hnswEfSearch, and the hits re-scored exactly. Measured on dense test vectors
// (props_test.go) this keeps about 0.8 of brute force's top 10.
const (
	hnswM        = 32
	hnswEfBuild  = 128
	hnswEfSearch = 256
	hnswMinK     = 256
)

// maxDenseFeatureTable bounds the feature → list table of the sparse index; larger
// dimensions use a map.
const maxDenseFeatureTable = 1 << 22

// rankWord is 64 features of the sparse index: which are present, and how many present
// features precede them.
type rankWord struct {
	bits uint64
	rank uint32
}

// embedText is what the semantic retriever embeds for a capability: its title, aliases,
// summary, when_to_use and when_not_to_use (each marked as such), entities, intents, tags and,
// for a pack, its guidance.
func embedText(c *registry.Capability) string {
	var b strings.Builder
	line := func(prefix string, parts ...string) {
		n := 0
		for _, p := range parts {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if n == 0 {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(prefix)
			} else {
				b.WriteString("; ")
			}
			b.WriteString(p)
			n++
		}
	}
	line("", c.Title)
	line("", c.Aliases...)
	line("", c.Summary)
	line("when to use: ", c.WhenToUse...)
	line("when not to use: ", c.WhenNotToUse...)
	line("entities: ", c.Entities...)
	line("intents: ", c.Intents...)
	line("tags: ", c.Tags...)
	line("", c.Guidance)
	return b.String()
}

func (g *Generation) buildSemantic(ctx context.Context, opts Options) error {
	x := &g.sem
	if sp, ok := g.emb.(embed.SparseEmbedder); ok {
		x.sparse = sp
		return g.buildSparse(ctx)
	}
	batch := opts.EmbedBatch
	if batch <= 0 {
		batch = 256
	}
	x.dim = g.emb.Dim()
	texts := make([]string, 0, batch)
	for start := 0; start < g.n; start += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		texts = texts[:0]
		for _, c := range g.snap.Caps[start:min(start+batch, g.n)] {
			texts = append(texts, embedText(c))
		}
		vs, err := g.emb.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrEmbed, g.emb.ID(), err)
		}
		if len(vs) != len(texts) {
			return fmt.Errorf("%w: %s returned %d vectors for %d texts", ErrEmbed, g.emb.ID(), len(vs), len(texts))
		}
		for _, v := range vs {
			if x.dim <= 0 {
				x.dim = len(v)
			}
			if len(v) != x.dim {
				return fmt.Errorf("%w: %s returned dimension %d, want %d", ErrEmbed, g.emb.ID(), len(v), x.dim)
			}
			if x.vecs == nil {
				x.vecs = make([]float32, 0, g.n*x.dim)
			}
			x.vecs = append(x.vecs, normalize(v)...)
		}
	}
	threshold := opts.HNSWThreshold
	if threshold == 0 {
		threshold = DefaultHNSWThreshold
	}
	if threshold > 0 && g.n > threshold {
		gr := hnsw.NewGraph[uint32]()
		gr.Distance = dotDistance
		gr.Rng = rand.New(rand.NewSource(int64(g.snap.Generation) + 1))
		gr.M = hnswM
		gr.EfSearch = hnswEfBuild
		for d := range g.n {
			if d&255 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			gr.Add(hnsw.MakeNode(uint32(d), x.vecs[d*x.dim:(d+1)*x.dim:(d+1)*x.dim]))
		}
		gr.EfSearch = hnswEfSearch // read-only from here on
		x.graph = gr
	}
	return nil
}

// dotDistance is the cosine distance of two L2-normalised vectors.
func dotDistance(a, b []float32) float32 { return 1 - dot(a, b) }

func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	n := min(len(a), len(b))
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// normalize returns v scaled to unit length (a copy; v is not modified). A zero vector stays
// zero.
func normalize(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(ss))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

func (g *Generation) buildSparse(ctx context.Context) error {
	x := &g.sem
	dim := g.emb.Dim()
	useTable := dim > 0 && dim <= maxDenseFeatureTable
	if !useTable {
		x.fmap = map[uint32]uint32{}
	}
	vecs := make([]embed.SparseVector, g.n)
	err := parallelFor(ctx, 0, g.n, func(d int) { vecs[d] = x.sparse.EmbedSparse(embedText(g.snap.Caps[d])) })
	if err != nil {
		return err
	}
	var df []uint32
	var absMax []float32
	if useTable {
		x.ftab = make([]rankWord, (dim+63)/64)
		for _, v := range vecs {
			for _, f := range v.Idx {
				if int(f/64) < len(x.ftab) {
					x.ftab[f/64].bits |= 1 << (f % 64)
				}
			}
		}
		var r uint32
		for i := range x.ftab {
			x.ftab[i].rank = r
			r += uint32(bits.OnesCount64(x.ftab[i].bits))
		}
		df, absMax = make([]uint32, r), make([]float32, r)
	}
	listOf := func(f uint32) uint32 {
		if useTable {
			if l, ok := x.sparseList(f); ok {
				return l
			}
		} else if l, ok := x.fmap[f]; ok {
			return l
		}
		// a feature beyond the table (an embedder returning indices >= Dim)
		if x.fmap == nil {
			x.fmap = map[uint32]uint32{}
		}
		x.fmap[f] = uint32(len(df))
		df = append(df, 0)
		absMax = append(absMax, 0)
		return uint32(len(df) - 1)
	}
	for _, v := range vecs {
		for i, f := range v.Idx {
			l := listOf(f)
			df[l]++
			absMax[l] = max(absMax[l], float32(math.Abs(float64(v.Val[i]))))
		}
	}
	nl := len(df)
	x.off = make([]uint32, nl+1)
	for l := range nl {
		x.off[l+1] = x.off[l] + df[l]
	}
	total := x.off[nl]
	x.docs = make([]uint32, total)
	x.q8 = make([]int8, total)
	x.scale = make([]float32, nl)
	x.maxV = make([]float32, nl)
	x.minV = make([]float32, nl)
	for l, m := range absMax {
		x.scale[l] = m / 127
	}
	fill := make([]uint32, nl)
	copy(fill, x.off[:nl])
	x.commonDF = uint32(max(g.n/semCommonFrac, semCommonMin))
	var nfwd int
	for _, c := range df {
		if c > x.commonDF {
			nfwd += int(c)
		}
	}
	x.fwdOff = make([]uint32, g.n+1)
	x.fwdList = make([]uint32, 0, nfwd)
	x.fwdQ = make([]int8, 0, nfwd)
	for d, v := range vecs {
		for i, f := range v.Idx {
			l := listOf(f)
			p := fill[l]
			fill[l]++
			var q int8
			if sc := x.scale[l]; sc > 0 {
				q = int8(max(-127, min(127, math.Round(float64(v.Val[i]/sc)))))
			}
			x.docs[p], x.q8[p] = uint32(d), q
			if df[l] > x.commonDF {
				x.fwdList = append(x.fwdList, l)
				x.fwdQ = append(x.fwdQ, q)
			}
			qv := float32(q) * x.scale[l]
			x.maxV[l] = max(x.maxV[l], qv)
			x.minV[l] = min(x.minV[l], qv)
		}
		x.fwdOff[d+1] = uint32(len(x.fwdList))
		vecs[d] = embed.SparseVector{}
	}
	return nil
}

// sparseList returns the list id of feature f.
func (x *semIndex) sparseList(f uint32) (uint32, bool) {
	if w := f / 64; int(w) < len(x.ftab) {
		rw := &x.ftab[w]
		bit := uint64(1) << (f % 64)
		if rw.bits&bit == 0 {
			return 0, false
		}
		return rw.rank + uint32(bits.OnesCount64(rw.bits&(bit-1))), true
	}
	if x.fmap == nil {
		return 0, false
	}
	l, ok := x.fmap[f]
	return l, ok
}

// semComplete is how many of the best partial scores the sparse semantic retriever
// completes: the hashed embedder spreads a text over hundreds of weak n-gram features, so
// exact completion of every candidate that could still qualify costs several times the rest
// of the search. Measured on the ../shared/eval sets, completing the best 64 changes
// recall@5 by less than 0.005 (see BenchmarkEvalSets).
const semComplete = 64

// A feature of the sparse semantic index is common when more than max(n/semCommonFrac,
// semCommonMin) of the n documents have it. The hashed embedder has no idf: the n-grams of
// common words ("<ge", "the", "ion>") weigh as much as rare ones and their posting lists
// hold most of a long query's postings (86% on seal_tools), so a query's common features
// are not walked: its rarer features (and concepts) select the semCommonCands best
// candidates, and the common ones complete those candidates' scores exactly through
// per-document forward postings (when the common lists of a query hold more postings than
// there are documents; short queries are scored as before). On the ../shared/eval sets this
// keeps recall@5 and nDCG@5 of the fused search within 0.005 (see BenchmarkEvalSets).
const (
	semCommonFrac  = 20
	semCommonMin   = 64
	semCommonCands = 256
)

var semanticMatched = []string{"embedding"}

func semNames(uint32) []string { return semanticMatched }

// retrieveSemantic ranks documents by cosine similarity between the query's embedding and
// theirs; only positive similarities are hits.
func (g *Generation) retrieveSemantic(ctx context.Context, q *Query, allow *roaring.Bitmap, limit int) ([]Hit, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, nil
	}
	x := &g.sem
	if x.sparse != nil {
		return g.semanticSparse(q, allow, limit), nil
	}
	vs, err := g.emb.Embed(ctx, []string{q.Text})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrEmbed, g.emb.ID(), err)
	}
	if len(vs) != 1 || len(vs[0]) != x.dim {
		return nil, fmt.Errorf("%w: %s: query vector has the wrong shape", ErrEmbed, g.emb.ID())
	}
	qv := normalize(vs[0])
	if x.graph != nil && (allow == nil || allow.GetCardinality()*4 >= uint64(g.n)) {
		return g.semanticHNSW(qv, allow, limit), nil
	}
	return g.semanticBrute(qv, allow, limit), nil
}

func (g *Generation) semanticSparse(q *Query, allow *roaring.Bitmap, limit int) []Hit {
	x := &g.sem
	v := x.sparse.EmbedSparse(q.Text)
	if len(v.Idx) == 0 {
		return nil
	}
	s := getScratch()
	defer putScratch(s)
	s.terms = s.terms[:0]
	s.common = s.common[:0]
	s.tids = s.tids[:0]
	commonPostings := 0
	for i, f := range v.Idx {
		l, ok := x.sparseList(f)
		if !ok {
			continue
		}
		w := v.Val[i]
		a, b := x.off[l], x.off[l+1]
		ub := max(w*x.maxV[l], w*x.minV[l], 0)
		neg := min(w*x.maxV[l], w*x.minV[l]) < 0
		t := qterm{docs: x.docs[a:b:b], q8: x.q8[a:b:b], w: w * x.scale[l], ub: ub, neg: neg}
		if b-a > x.commonDF {
			commonPostings += int(b - a)
			s.common = append(s.common, t)
			s.tids = append(s.tids, l)
		} else {
			s.terms = append(s.terms, t)
		}
	}
	if len(s.terms)+len(s.common) == 0 {
		return nil
	}
	bits := s.allowBits(allow, g.n)
	approx := max(4*limit, semComplete)
	// when the common lists hold more postings than there are documents, walking them
	// costs more than completing the candidates of the rarer features
	if commonPostings > g.n && len(s.terms) > 0 {
		if hits := g.semanticCommon(s, bits, limit); hits != nil {
			return hits
		}
	}
	s.terms = append(s.terms, s.common...)
	return hitsOf(scoreTerms(s, bits, g.n, limit, approx), semNames)
}

// semanticCommon scores s.terms (the query's rarer features) for the best candidates and
// completes them with the common features s.common (list ids s.tids) through the forward
// postings; nil when the rarer features find fewer than limit documents.
func (g *Generation) semanticCommon(s *scratch, bits []uint64, limit int) []Hit {
	x := &g.sem
	c := max(4*limit, semCommonCands)
	cs := scoreTerms(s, bits, g.n, c, c)
	if len(cs) < limit {
		return nil
	}
	s.cands = append(s.cands[:0], cs...)
	nl := len(x.off) - 1
	if cap(s.lw) < nl {
		s.lw = make([]float32, nl)
	}
	lw := s.lw[:nl]
	for i, l := range s.tids {
		lw[l] = s.common[i].w
	}
	s.top.reset(limit)
	for _, cd := range s.cands {
		a, b := x.fwdOff[cd.doc], x.fwdOff[cd.doc+1]
		q := x.fwdQ[a:b:b]
		sc := cd.score
		for p, l := range x.fwdList[a:b:b] {
			sc += lw[l] * float32(q[p])
		}
		if sc > 0 {
			s.top.push(cand{doc: cd.doc, score: sc})
		}
	}
	for _, l := range s.tids {
		lw[l] = 0
	}
	return hitsOf(s.top.best(), semNames)
}

// semanticBrute is the exact reference: a dot product with every allowed vector.
func (g *Generation) semanticBrute(qv []float32, allow *roaring.Bitmap, limit int) []Hit {
	x := &g.sem
	s := getScratch()
	defer putScratch(s)
	s.top.reset(limit)
	score := func(d uint32) {
		sim := dot(qv, x.vecs[int(d)*x.dim:int(d+1)*x.dim])
		if sim > s.top.floor() {
			s.top.push(cand{doc: d, score: sim})
		}
	}
	if allow == nil {
		for d := range g.n {
			score(uint32(d))
		}
	} else {
		it := allow.Iterator()
		for it.HasNext() {
			if d := it.Next(); int(d) < g.n {
				score(d)
			}
		}
	}
	return hitsOf(s.top.best(), semNames)
}

// semanticHNSW searches the graph, widening the search until limit allowed hits are found
// or the whole graph was asked.
func (g *Generation) semanticHNSW(qv []float32, allow *roaring.Bitmap, limit int) []Hit {
	x := &g.sem
	s := getScratch()
	defer putScratch(s)
	for k := max(limit*4, hnswMinK); ; k *= 4 {
		k = min(k, g.n)
		s.top.reset(limit)
		for _, nd := range x.graph.Search(qv, k) {
			if allow != nil && !allow.Contains(nd.Key) {
				continue
			}
			if sim := dot(qv, nd.Value); sim > 0 {
				s.top.push(cand{doc: nd.Key, score: sim})
			}
		}
		if s.top.full() || k >= g.n {
			break
		}
	}
	return hitsOf(s.top.best(), semNames)
}
