package index

import (
	"context"
	"fmt"
	"math"
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

	// sparse (semantic_sparse.go): feature → feature id through ftab (a rank bitset, when
	// the dimension is small enough) or fmap; feature id → its list and scale (feats); list →
	// postings post[start:start+df], each doc<<8 | uint8(q) for a value q × the feature's
	// scale. Features with identical postings share a list. The lists of more than commonDF
	// documents are also held per document: forward postings fwd[fwdOff[doc]:fwdOff[doc+1]],
	// two-byte records of common id (semList.cid - 1) and q (see appendForward).
	ftab     []rankWord
	fmap     map[uint32]uint32
	feats    []semFeat
	absMax   []float32 // by feature id: the largest absolute value of the feature
	lists    []semList
	post     []uint32
	xpost    []uint32     // the postings of lists a patch made (see semList), since post was laid out
	xbuf     *semPatchBuf // xpost's backing array
	commonDF uint32
	ncommon  int // the largest common id given (a patched index may leave ids unused)
	// commonPost is the number of postings in common lists; fwdExcess the records of fwd
	// beyond them when the common ids were last numbered (fillers, see appendForward). A
	// patched index (semantic_patch.go) may hold stale records of common ids no list has.
	commonPost int
	fwdExcess  int
	fwdOff     []uint32
	fwd        []uint16

	// err is why the dense vectors could not be built (the embedder failed or answered
	// vectors of the wrong shape): the semantic retriever then fails every search with it,
	// which makes those searches partial, and the other retrievers answer as usual.
	err error

	// params are the parameters the index was built with
	params SemanticParams

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
	if g.loaded(secSemantic) {
		return nil
	}
	x := &g.sem
	x.params = currentSemanticParams()
	if sp, ok := g.emb.(embed.SparseEmbedder); ok {
		x.sparse = sp
		return g.buildSparse(ctx)
	}
	err := g.buildDense(ctx, opts)
	if err != nil && ctx.Err() == nil {
		// A failing or misbehaving embedder (an endpoint down at start) costs the semantic
		// retriever, not the generation: searches answer partial until the next build.
		g.log.Warn("index: semantic retriever unavailable in this generation", "embedder", g.emb.ID(), "err", err)
		*x = semIndex{err: err, params: x.params}
		return nil
	}
	return err
}

// SemanticErr is why the semantic retriever of this generation has no vectors (its
// embedder failed during Build), nil when it has them.
func (g *Generation) SemanticErr() error { return g.sem.err }

// buildDense embeds every capability with a dense embedder, in batches, and builds the
// HNSW graph above the threshold.
func (g *Generation) buildDense(ctx context.Context, opts Options) error {
	x := &g.sem
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

// retrieveSemantic ranks documents by the similarity of their embeddings to the query's:
// cosine similarity for a dense embedder, an idf-weighted dot product for a sparse one (see
// semanticSparse); only positive similarities are hits. With a sparse embedder and
// SemanticParams.Clauses, each clause of a query of several also brings its best document
// (clauseBest).
func (g *Generation) retrieveSemantic(ctx context.Context, q *Query, allow *roaring.Bitmap, limit int) ([]Hit, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, nil
	}
	x := &g.sem
	if x.sparse != nil {
		hits := g.semanticSparse(q, allow, limit)
		if x.params.Clauses {
			hits = g.clauseBest(q, allow, hits, limit)
		}
		return hits, nil
	}
	if x.err != nil {
		return nil, x.err
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
