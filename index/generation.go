package index

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/registry"
)

// HistorySource gives the caller's past uses. Uses returns capability id → decayed weight
// (more recent and more frequent uses weigh more). It is called concurrently by searches.
type HistorySource interface {
	Uses(user, project string) map[string]float64
}

// DefaultHNSWThreshold is the catalogue size above which dense vectors are searched through
// an HNSW graph instead of brute force.
const DefaultHNSWThreshold = 5000

// Options configure Build. The zero value is usable.
type Options struct {
	// Embedder produces the vectors of the semantic retriever; nil means embed.NewHashed()
	// (offline hashed character n-grams plus concept features).
	Embedder embed.Embedder
	// History feeds the history retriever; nil means the history retriever finds nothing.
	History HistorySource
	// Feedback also feeds the history retriever: the votes of past successful sessions like
	// the query; nil means none.
	Feedback FeedbackSource
	// Logger receives build diagnostics; nil discards them.
	Logger *slog.Logger
	// ColumnSnapshot holds bytes written by (*Generation).ColumnSnapshot of an earlier build.
	// When they were taken at the snapshot's registry generation and still match its
	// capabilities, the column view is restored from them instead of being rebuilt; otherwise
	// (nil, other generation, corrupt) it is rebuilt. ColumnRestored reports which happened.
	ColumnSnapshot []byte
	// HNSWThreshold is the number of documents above which a dense embedder's vectors go
	// into an HNSW graph (github.com/coder/hnsw); at or below it, brute-force cosine.
	// 0 means DefaultHNSWThreshold; negative means never use HNSW.
	HNSWThreshold int
	// EmbedBatch is the number of texts per Embed call during Build; 0 means 256.
	EmbedBatch int
	// Reuse is an earlier generation whose per-document analysis (the lexical terms and the
	// sparse semantic vectors) Build takes for every capability the two snapshots share
	// (the same *registry.Capability at the same id) instead of analysing it again: the
	// result is the one a build without Reuse gives. A generation built with Reuse keeps its
	// own analysis for the next one; one built without it keeps none, and a build that
	// reuses it analyses again the documents it needs (reuse_derived.go). The new
	// generation does not refer to Reuse.
	Reuse *Generation
	// Persisted holds bytes written by (*Generation).Persist of an earlier build. When they
	// were written for the snapshot's registry generation and capabilities by this build of
	// capdex, Build loads the structures they hold instead of building them; whatever does
	// not match or fails its checksum is built. BuildStats.Persist reports which. Ignored
	// with Reuse.
	Persisted []byte
}

// Generation is an immutable index over one registry snapshot. All methods are safe for
// concurrent use. Nothing a search reads changes after Build returns; the only mutable state
// is three internal caches (the per-caller filter part, Filter's results and the concept
// expansions), each guarded by its own lock.
type Generation struct {
	snap    *registry.Snapshot
	n       int
	pack    []bool // pack[d]: doc d is a pack
	emb     embed.Embedder
	history HistorySource
	fb      FeedbackSource
	log     *slog.Logger

	cols   *colView
	filter *filterIndex
	tree   treeIndex
	exact  exactIndex
	lex    lexIndex
	meta   metaIndex
	sem    semIndex

	stats BuildStats

	// an is the per-document analysis kept for the next build (Options.Reuse); it keeps
	// no document's when the generation was built without Reuse (keepDerivedAnalysis), and
	// may miss some documents' in a generation patched from such a one. prev and prevDoc are Options.Reuse and
	// reuseOf during Build only.
	an      *analysis
	prev    *analysis
	prevDoc []int32
	// shared is the earlier generation (Options.Reuse) whose tree, exact and metadata
	// indexes the build takes as they are when no input of theirs changed (see sharable);
	// nil otherwise, and after Build.
	shared *Generation
}

// BuildStats reports how long each part of Build took.
type BuildStats struct {
	Columns, Tree, Exact, Lexical, Metadata, Semantic, Total time.Duration
	// ColumnRestored is true when the column view came from Options.ColumnSnapshot.
	ColumnRestored bool
	// Terms is the number of distinct lexical terms; Postings the number of (term, doc) pairs.
	Terms, Postings int
	// LexicalPatched is true when the lexical index was patched from Options.Reuse's (a text
	// change that kept every docID) rather than assembled.
	LexicalPatched bool
	// ColumnsPatched is true when the column view's rows and the pre-filter were patched
	// from Options.Reuse's (or, for WithAvailability, the generation's) for the changed
	// documents rather than computed for every one (columns_patch.go).
	ColumnsPatched bool
	// SemanticPatched is true when the sparse semantic index was patched from
	// Options.Reuse's (a text change that kept every docID) rather than assembled.
	SemanticPatched bool
	// Persist says what was loaded from Options.Persisted, and why anything was not.
	Persist PersistResult
}

// Build indexes snap. The snapshot (and its capabilities) must not change afterwards. Build
// honours ctx between stages and between embedding batches.
func Build(ctx context.Context, snap *registry.Snapshot, opts Options) (*Generation, error) {
	if snap == nil {
		return nil, ErrNilSnapshot
	}
	start := time.Now()
	g := &Generation{snap: snap, n: len(snap.Caps), emb: opts.Embedder, history: opts.History, fb: opts.Feedback, log: opts.Logger,
		cols: &colView{}, filter: &filterIndex{}}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.emb == nil {
		g.emb = embed.NewHashed()
	}
	if opts.Reuse != nil {
		g.an = &analysis{}
		g.prev, g.prevDoc = opts.Reuse.an, reuseOf(opts.Reuse, snap)
		if opts.Reuse.snap.SameIDs(snap) {
			g.shared = opts.Reuse
		}
		defer func() { g.prev, g.prevDoc, g.shared = nil, nil, nil }()
	}
	g.pack = make([]bool, g.n)
	for d, c := range snap.Caps {
		g.pack[d] = c.ResourceType == registry.TypePack
	}
	if opts.Reuse == nil {
		g.loadPersisted(opts.Persisted)
	}
	steps := []struct {
		d  *time.Duration
		fn func() error
	}{
		{&g.stats.Columns, func() error {
			if g.shared != nil && len(opts.ColumnSnapshot) == 0 && g.patchColumns(g.shared) {
				g.stats.ColumnsPatched = true
				return nil
			}
			return g.buildColumns(opts.ColumnSnapshot)
		}},
		{&g.stats.Tree, func() error {
			if g.sharable(sameTree) {
				g.tree = g.shared.tree
			} else {
				g.buildTree()
			}
			return nil
		}},
		{&g.stats.Exact, func() error {
			if g.sharable(sameExact) {
				g.exact = g.shared.exact
			} else if !g.loaded(secExact) {
				g.buildExact()
			}
			return nil
		}},
		{&g.stats.Lexical, func() error {
			if g.loaded(secLexical) {
				return nil
			}
			return g.buildLexical(ctx)
		}},
		{&g.stats.Metadata, func() error {
			if g.sharable(sameMeta) {
				g.meta = g.shared.meta
			} else {
				g.buildMeta()
			}
			return nil
		}},
		{&g.stats.Semantic, func() error { return g.buildSemantic(ctx, opts) }},
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := time.Now()
		if err := s.fn(); err != nil {
			return nil, err
		}
		*s.d = time.Since(t)
	}
	if opts.Reuse == nil {
		g.keepDerivedAnalysis() // see reuse_derived.go
	}
	g.stats.Total = time.Since(start)
	g.log.Debug("index: generation built", "generation", snap.Generation, "docs", g.n,
		"terms", g.stats.Terms, "postings", g.stats.Postings, "column_restored", g.stats.ColumnRestored,
		"took", g.stats.Total)
	return g, nil
}

// Snapshot returns the registry snapshot the generation was built from.
func (g *Generation) Snapshot() *registry.Snapshot { return g.snap }

// Len returns the number of documents.
func (g *Generation) Len() int { return g.n }

// Doc returns the capability with docID d, or nil when d is out of range.
func (g *Generation) Doc(d uint32) *registry.Capability {
	if int(d) >= g.n {
		return nil
	}
	return g.snap.Caps[d]
}

// Embedder returns the embedder the semantic retriever uses.
func (g *Generation) Embedder() embed.Embedder { return g.emb }

// Stats returns build timings and sizes.
func (g *Generation) Stats() BuildStats { return g.stats }

// ColumnRestored reports whether the column view was restored from Options.ColumnSnapshot.
func (g *Generation) ColumnRestored() bool { return g.stats.ColumnRestored }

// String describes the generation for logs.
func (g *Generation) String() string {
	return fmt.Sprintf("index.Generation{registry: %d, docs: %d}", g.snap.Generation, g.n)
}

// Current holds the generation searches should use. Load and Swap are atomic: a search that
// loaded a generation keeps using it even after a Swap. The zero value holds nil.
type Current struct {
	p atomic.Pointer[Generation]
}

// Load returns the current generation (nil before the first Swap).
func (c *Current) Load() *Generation { return c.p.Load() }

// Swap installs g and returns the previous generation.
func (c *Current) Swap(g *Generation) *Generation { return c.p.Swap(g) }

// scratchPool recycles per-search working memory of the retrievers.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

func putScratch(s *scratch) {
	if cap(s.acc) > 1<<20 { // do not keep huge buffers alive
		s.acc = nil
		s.seen = nil
	}
	scratchPool.Put(s)
}
