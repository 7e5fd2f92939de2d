package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/engine/feedback"
	"github.com/capdex/capdex/engine/govern"
	"github.com/capdex/capdex/engine/handlers"
	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// Options configure Open. The zero value opens an in-memory engine over the built-in
// registry.
type Options struct {
	// Dir is the data directory (Badger store). Empty keeps everything in memory.
	Dir string
	// Seed fills an empty store on first open. Nil seeds it from SeedDirs, or from the
	// built-in example registry when SeedDirs is empty too.
	Seed []*registry.Capability
	// SeedDirs are registry directories loaded (and linted) to seed an empty store.
	SeedDirs []string
	// Embedder for the semantic retriever. Default: the offline hashed n-gram embedder.
	// Its vectors are cached in the store by embedder id and text hash.
	Embedder embed.Embedder
	// EmbedProgress, when set, is called during a build after each batch of capability
	// texts a dense embedder computed (texts found in the vector cache are not computed):
	// done so far, out of at most total. For a progress bar on first import.
	EmbedProgress func(done, total int)
	// Normalizer turns a query into a parsed query. Default: the rules normalizer.
	Normalizer query.Normalizer
	// Deadlines per retriever name ("exact", "lexical", ...: index.Kind.String). Missing
	// entries take the kind's default (DefaultDeadlines); an unknown name fails Open.
	Deadlines map[string]time.Duration
	// Weights for fusion. Zero value: rank.DefaultWeights().
	Weights *rank.Weights
	// Rerank and Diversify constants. Nil: the package defaults.
	Rerank    *rank.RerankOptions
	Diversify *rank.DiversifyOptions
	// Thresholds decide resolution. Nil: the calibrated thresholds kept in the store
	// (capdex calibrate), else rank.DefaultThresholds().
	Thresholds *rank.Thresholds
	// MaxCandidates caps the candidates gathered per search. Default 200.
	MaxCandidates int
	// GoFuncs are the functions of go handlers, by name.
	GoFuncs map[string]handlers.GoFunc
	// BaseURLs maps {{.base_url.NAME}} of http handlers to URLs.
	BaseURLs map[string]string
	// ScriptsDir holds the scripts of exec handlers with a relative argv[0]. Default: the
	// built-in scripts, written once under the data directory (or a temporary directory).
	ScriptsDir string
	// TokenKey signs confirmation tokens. Default: a key generated once and kept in the store.
	TokenKey []byte
	// TokenTTL is how long a confirmation token stays valid. Default 10 minutes.
	TokenTTL time.Duration
	// WrapRetriever, when set, wraps every retriever call of a search: for instrumentation
	// (per-retriever latency metrics) and for tests that make a retriever slow or panic. It is
	// called once per search and the function it returns concurrently for each retriever.
	WrapRetriever func(next actors.RetrieveFunc) actors.RetrieveFunc
	// Logger receives the engine's, Badger's and protoactor's messages. Nil discards them.
	Logger *slog.Logger
	// NoSync turns off fsync of store commits (tests and throwaway stores only).
	NoSync bool
	// Feedback tunes learning from use (sessions' searches, describes and runs; see
	// docs/feedback.md). Nil takes the defaults.
	Feedback *FeedbackOptions
}

// Engine is a capability registry with search, describe and run. All methods are safe for
// concurrent use.
type Engine struct {
	opts  Options
	log   *slog.Logger
	store *store.Store
	sys   *actors.System
	norm  query.Normalizer
	run   *govern.Governor

	weights   rank.Weights
	rerank    rank.RerankOptions
	diversify rank.DiversifyOptions
	deadlines [index.NumKinds]time.Duration
	thresh    atomic.Pointer[rank.Thresholds]
	embedder  embed.Embedder
	progress  *progressEmbedder  // set with Options.EmbedProgress and a dense embedder
	fb        *feedback.Recorder // sessions' searches, describes, runs; feeds history
	inline    uint16             // actors.Job.Inline of every search (inlineKinds)
	// busy counts the searches in progress, from preparation to answer: a search alone
	// may be helped by its caller (actors.Job.Alone).
	busy atomic.Int32

	// state is the generation searched now; a search keeps the one it loaded.
	state atomic.Pointer[state]
	// reloadMu serialises rebuilds so generations are swapped in order.
	reloadMu sync.Mutex
	// adminMu makes each registry change (read, lint, write, reload) one step, so two
	// concurrent changes cannot together leave a registry that fails lint.
	adminMu sync.Mutex
	// runMu guards closed: each run holds it for reading while it runs, and Close takes it
	// for writing, so Close waits for runs in flight before it removes the scripts
	// directory and closes the store, and later runs get ErrClosed.
	runMu  sync.RWMutex
	closed bool

	closeOnce sync.Once
	cleanup   []func()
}

// state is one searchable generation: the index and what the query side derives from it.
type state struct {
	gen   *index.Generation
	lex   *query.Lexicon
	terms *rank.TermCache
	// facts is what the ranking reads of every candidate (see rankFacts)
	facts *rankFacts
	// packs maps a pack's docID to the docIDs [lo, hi) of its descendants (the snapshot is
	// sorted by id, so they are contiguous)
	packs map[uint32][2]uint32
}

// packRanges returns the descendants' range of every pack of g.
func packRanges(g *index.Generation) map[uint32][2]uint32 {
	out := make(map[uint32][2]uint32)
	for d, c := range g.Snapshot().Caps {
		if c.ResourceType == registry.TypePack {
			lo, hi := g.Descendants(c.ID)
			out[uint32(d)] = [2]uint32{uint32(lo), uint32(hi)}
		}
	}
	return out
}

// Open opens (creating when needed) the store, seeds it on first use, builds the index
// generation and starts the actor system.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := store.Open(store.Options{Dir: opts.Dir, InMemory: opts.Dir == "", Logger: log, NoSync: opts.NoSync})
	if err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, log: log, store: st}
	if err := e.init(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// DefaultDeadlines returns each retriever's deadline by name (index.Kind.DefaultDeadline),
// the names and values Options.Deadlines overrides. A new map each call.
func DefaultDeadlines() map[string]time.Duration {
	m := make(map[string]time.Duration, index.NumKinds)
	for k := range index.NumKinds {
		m[k.String()] = k.DefaultDeadline()
	}
	return m
}

func (e *Engine) init(ctx context.Context) error {
	o := &e.opts
	e.weights = rank.DefaultWeights()
	if o.Weights != nil {
		e.weights = *o.Weights
	}

	e.rerank = rank.DefaultRerankOptions()
	if o.Rerank != nil {
		e.rerank = *o.Rerank
	}
	e.diversify = rank.DefaultDiversifyOptions()
	if o.Diversify != nil {
		e.diversify = *o.Diversify
	}
	for k := range index.NumKinds {
		e.deadlines[k] = k.DefaultDeadline()
	}
	for n, v := range o.Deadlines {
		k, err := index.ParseKind(n)
		if err != nil {
			return fmt.Errorf("%w: Options.Deadlines: %w", ErrInvalidOptions, err)
		}
		e.deadlines[k] = v
	}
	if o.MaxCandidates <= 0 {
		o.MaxCandidates = 200
	}
	e.norm = o.Normalizer
	if e.norm == nil {
		e.norm = query.Rules{}
	}
	t := rank.DefaultThresholds()
	if o.Thresholds != nil {
		t = *o.Thresholds
	} else if b, err := e.store.GetBlob(thresholdsBlob); err == nil {
		if t2, err := rank.DecodeThresholds(b); err == nil {
			t = t2
		} else {
			e.log.Warn("stored thresholds unreadable; using defaults", "err", err)
		}
	}
	e.thresh.Store(&t)

	emb := o.Embedder
	if emb == nil {
		emb = embed.NewHashed()
	}
	if _, sparse := emb.(embed.SparseEmbedder); !sparse {
		if o.EmbedProgress != nil {
			e.progress = &progressEmbedder{Embedder: emb}
			emb = e.progress
		}
		emb = embed.WithCache(emb, vectorCache{e.store})
	}
	e.embedder = emb
	e.inline = inlineKinds(*o, emb)

	if err := e.openFeedback(); err != nil {
		return err
	}
	if e.store.Generation() == 0 {
		seed, err := e.seed()
		if err != nil {
			return err
		}
		if err := e.store.PutAll(ctx, seed, "seed"); err != nil {
			return fmt.Errorf("engine: seeding the registry: %w", err)
		}
	}
	if err := e.Reload(ctx); err != nil {
		return err
	}
	run, cleanup, err := e.newRunner()
	if err != nil {
		return err
	}
	e.run = run
	e.cleanup = append(e.cleanup, cleanup)
	// One retriever actor per kind and processor: an actor runs one request at a time, so
	// with one per kind two concurrent searches wait for each other's step of each kind.
	e.sys = actors.New(actors.Options{Logger: e.log, PerKind: runtime.GOMAXPROCS(0)})
	return nil
}

func (e *Engine) seed() ([]*registry.Capability, error) {
	switch {
	case e.opts.Seed != nil:
		return e.opts.Seed, nil
	case len(e.opts.SeedDirs) > 0:
		var all []*registry.Capability
		for _, d := range e.opts.SeedDirs {
			caps, err := registry.LoadDir(d)
			if err != nil {
				return nil, err
			}
			all = append(all, caps...)
		}
		if errs := registry.Lint(all); len(errs) > 0 {
			return nil, errs
		}
		return all, nil
	}
	return registry.Builtin()
}

// Reload rebuilds the searchable generation from the store's active definitions and swaps
// it in. Searches in flight keep the generation they started with.
func (e *Engine) Reload(ctx context.Context) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	caps, gen, err := e.store.Active()
	if err != nil {
		return err
	}
	if cur := e.state.Load(); cur != nil && cur.gen.Snapshot().Generation == gen {
		return nil
	}
	snap, err := registry.NewSnapshot(gen, caps)
	if err != nil {
		return err
	}
	colKey := fmt.Sprintf("columns/%d", gen)
	var colSnap []byte
	switch b, err := e.store.GetBlob(colKey); {
	case err == nil:
		colSnap = b
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if p := e.progress; p != nil {
		p.watch.Store(&buildProgress{total: len(caps), fn: e.opts.EmbedProgress})
		defer p.watch.Store(nil)
	}
	g, err := index.Build(ctx, snap, index.Options{
		Embedder:       e.embedder,
		History:        e.store.HistorySource(),
		Feedback:       e.fb,
		Logger:         e.log,
		ColumnSnapshot: colSnap,
	})
	if err != nil {
		return err
	}
	if colSnap == nil {
		var b bytes.Buffer
		if err := g.ColumnSnapshot(&b); err == nil {
			if err := e.store.PutBlob(colKey, b.Bytes()); err != nil {
				e.log.Warn("keeping the column snapshot failed", "err", err)
			}
		}
	}
	e.state.Store(&state{
		gen:   g,
		lex:   query.NewLexicon(snap),
		terms: rank.NewTermCache(snap.Caps, query.FieldTerms),
		facts: newRankFacts(snap.Caps),
		packs: packRanges(g),
	})
	e.log.Info("registry generation loaded", "generation", gen, "capabilities", len(caps))
	return nil
}

// Generation returns the registry generation being searched.
func (e *Engine) Generation() uint64 { return e.state.Load().gen.Snapshot().Generation }

// Snapshot returns the registry snapshot being searched. It must not be modified.
func (e *Engine) Snapshot() *registry.Snapshot { return e.state.Load().gen.Snapshot() }

// Close stops the actor system and closes the store. It is safe to call more than once.
func (e *Engine) Close() error {
	var err error
	e.closeOnce.Do(func() {
		e.runMu.Lock()
		e.closed = true
		e.runMu.Unlock()
		if e.sys != nil {
			e.sys.Close()
		}
		for _, f := range e.cleanup {
			f()
		}
		err = e.store.Close()
	})
	return err
}

const thresholdsBlob = "calibration/thresholds"

// vectorCache keeps embedder vectors in the store's cache keyspace.
type vectorCache struct{ s *store.Store }

func (c vectorCache) Get(key string) ([]float32, bool) {
	b, ok := c.s.CacheGet(key)
	if !ok || len(b)%4 != 0 {
		return nil, false
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}

func (c vectorCache) Put(key string, v []float32) error {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return c.s.CachePut(key, b)
}
