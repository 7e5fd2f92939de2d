package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
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
	// SemanticRetry is how long after a build whose embedder failed (its searches answer
	// partial) the engine builds the same registry again, the wait doubling up to 10
	// minutes until the semantic retriever has its vectors. 0 means 30 s; negative turns
	// retries off.
	SemanticRetry time.Duration
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
	// RetrieverTimes, when set, is called once per retriever that ran for a search, when
	// its final ranking is made, with the retriever's name and how long it ran
	// (actors.Evidence.Took): per-retriever metrics without a wrapper, so the searches
	// still run on their caller (a wrapper turns that off). A retriever that answers after
	// the search was ranked is not reported. It is called concurrently by searches.
	RetrieverTimes func(retriever string, took time.Duration)
	// Logger receives the engine's, Badger's and protoactor's messages. Nil discards them.
	Logger *slog.Logger
	// NoSync turns off fsync of store commits (tests and throwaway stores only).
	NoSync bool
	// Upstreams are MCP servers whose tools become actions under their packs (the
	// gateway, see docs/gateway.md): connected at Open, kept, re-listed, and quarantined
	// when they change.
	Upstreams []UpstreamConfig
	// AuditKeyFile names the file holding the audit key (store.ReadAuditKey: at least 32
	// bytes, owner-only, outside Dir). With it every audit record is sealed with an HMAC
	// and VerifyAudit checks them; see docs/audit.md.
	AuditKeyFile string
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
	semRetry  semRetry // rebuilds after an embedder failed (semretry.go)

	// gw is the upstream gateway (nil without Options.Upstreams).
	gw *gateway
	// health is the health of upstream packs and everything under them, by pack id, laid
	// over the stored definitions at each Reload; healthVer counts its changes and
	// builtHealthVer (under reloadMu) is the count the generation searched was built with.
	healthMu       sync.Mutex
	health         map[string]registry.Health
	healthVer      atomic.Uint64
	builtHealthVer uint64
	// persistedGen is the registry generation whose index state the store holds
	// (persist.go), 0 when unknown.
	persistedGen atomic.Uint64
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
	// match caches the documents of structured-match filters (see matchAllow)
	match *matchCache
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
	var auditKey []byte
	if opts.AuditKeyFile != "" {
		k, err := store.ReadAuditKey(opts.AuditKeyFile, opts.Dir)
		if err != nil {
			return nil, fmt.Errorf("engine: %w", err)
		}
		auditKey = k
	}
	st, err := store.Open(store.Options{Dir: opts.Dir, InMemory: opts.Dir == "", Logger: log, NoSync: opts.NoSync, AuditKey: auditKey})
	if err != nil {
		return nil, err
	}
	e := &Engine{opts: opts, log: log, store: st}
	e.semRetry.quit = make(chan struct{})
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
	if e.store.Generation() == 0 && !e.seededEmpty() {
		seed, err := e.seed()
		if err != nil {
			return err
		}
		if err := e.store.PutAll(ctx, seed, "seed"); err != nil {
			return fmt.Errorf("engine: seeding the registry: %w", err)
		}
		if len(seed) == 0 {
			// an empty seed writes no generation: remember that the store was seeded, so
			// that a later Open with the default seed does not fill it with the examples
			if err := e.store.PutBlob(seededBlob, []byte("empty")); err != nil {
				return fmt.Errorf("engine: seeding the registry: %w", err)
			}
		}
	}
	if len(o.Upstreams) > 0 {
		if err := e.newGateway(); err != nil {
			return err
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
	if e.gw != nil {
		e.gw.mgr.Start(ctx)
	}
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
	return e.reloadLocked(ctx)
}

// reloadLocked is Reload with reloadMu held.
func (e *Engine) reloadLocked(ctx context.Context) error {
	caps, gen, err := e.store.Active()
	if err != nil {
		return err
	}
	hv := e.healthVer.Load()
	if cur := e.state.Load(); cur != nil && cur.gen.Snapshot().Generation == gen && e.builtHealthVer == hv {
		return nil
	}
	caps, overlaid := e.overlayHealth(caps)
	snap, err := registry.NewSnapshot(gen, caps)
	if err != nil {
		return err
	}
	// the stored columns are those of the stored health: not used, not kept, when overlaid
	if err := e.build(ctx, snap, !overlaid, nil); err != nil {
		return err
	}
	e.builtHealthVer = hv
	e.log.Info("registry generation loaded", "generation", gen, "capabilities", len(caps))
	return nil
}

// build indexes snap in full and swaps it in; restore uses (and, absent, keeps) the column
// snapshot stored for its generation. With prev (the generation snap was derived from),
// the per-capability analysis of the index and the term cache is taken from prev for every
// capability the two share (index.Options.Reuse, rank.TermCache.Next), which gives the
// structures a build without it gives. Without prev (a full build) the index structures
// persisted for snap's generation are loaded instead of built when they match, and stored
// when there were none (persist.go).
func (e *Engine) build(ctx context.Context, snap *registry.Snapshot, restore bool, prev *state) error {
	gen := snap.Generation
	colKey := fmt.Sprintf("columns/%d", gen)
	var colSnap []byte
	if restore {
		switch b, err := e.store.GetBlob(colKey); {
		case err == nil:
			colSnap = b
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	// The query side and the ranking's facts read only the snapshot: they are built while
	// the index is.
	var (
		wg    sync.WaitGroup
		lex   *query.Lexicon
		terms *rank.TermCache
		facts *rankFacts
	)
	var reuse *index.Generation
	var packs map[uint32][2]uint32
	var persisted []byte
	if prev == nil {
		persisted = e.persisted(gen)
	}
	// The sections of the persisted state, checked once for the term cache and the
	// lexicon (persist_terms.go, persist_lexicon.go).
	var sections func() (map[string][]byte, error)
	if persisted != nil {
		sections = sync.OnceValues(func() (map[string][]byte, error) { return index.PersistedSections(persisted, snap) })
	}
	termsLoaded, lexLoaded := false, false
	sameDocs := prev != nil && prev.gen.Snapshot().SameIDs(snap)
	if sameDocs { // the same ids at the same docIDs: the same pack ranges
		packs = prev.packs
	}
	wg.Go(func() {
		if sameDocs && changedAllSame(prev.gen.Snapshot(), snap, query.SameLexiconInputs) {
			lex = prev.lex
		} else if prev == nil {
			lex, lexLoaded = e.openLexicon(snap, sections)
		} else {
			lex = query.NewLexicon(snap)
		}
		if prev != nil {
			facts = prev.facts.next(prev.gen.Snapshot().Caps, snap.Caps)
		} else {
			facts = newRankFacts(snap.Caps)
		}
	})
	if prev != nil {
		reuse = prev.gen
		wg.Go(func() { terms = prev.terms.Next(snap.Caps, query.FieldTerms) })
	} else {
		wg.Go(func() { terms, termsLoaded = e.openTerms(snap, sections) })
	}
	if p := e.progress; p != nil {
		p.watch.Store(&buildProgress{total: len(snap.Caps), fn: e.opts.EmbedProgress})
		defer p.watch.Store(nil)
	}
	g, err := index.Build(ctx, snap, index.Options{
		Embedder:       e.embedder,
		History:        e.store.HistorySource(),
		Feedback:       e.fb,
		Logger:         e.log,
		ColumnSnapshot: colSnap,
		Reuse:          reuse,
		Persisted:      persisted,
	})
	wg.Wait()
	if err != nil {
		return err
	}
	if prev == nil {
		e.logPersisted(g, persisted != nil)
		if !termsLoaded || !lexLoaded {
			e.persistedGen.Store(0) // the state lacks the term cache or lexicon: written again with them
		}
		e.keepPersisted(g, terms, lex)
	}
	if restore && colSnap == nil {
		var b bytes.Buffer
		if err := g.ColumnSnapshot(&b); err == nil {
			if err := e.store.PutBlob(colKey, b.Bytes()); err != nil {
				e.log.Warn("keeping the column snapshot failed", "err", err)
			}
		}
	}
	if packs == nil {
		packs = packRanges(g)
	}
	e.state.Store(&state{gen: g, lex: lex, terms: terms, facts: facts, packs: packs, match: new(matchCache)})
	e.watchSemantic()
	return nil
}

// changedAllSame reports whether every capability of b that is not a's at its docID (b
// holding a's ids, Snapshot.SameIDs) is the same as a's for same.
func changedAllSame(a, b *registry.Snapshot, same func(x, y *registry.Capability) bool) bool {
	for d, c := range b.Caps {
		if o := a.Caps[d]; o != c && !same(o, c) {
			return false
		}
	}
	return true
}

// applyChange swaps in the generation after a registry change the engine just stored: the
// definitions of put (stored or given a new status) and the deleted ids. It reads only those
// definitions back, derives the next snapshot from the current one (registry.Snapshot.Apply)
// and, when the change touches only availability (status, health, enabled), shares every
// text index and the query side with the current generation and rebuilds only the
// availability parts (index.Generation.WithAvailability, the ranking's availability table).
// Anything else it cannot follow (the store moved on by more than this change) is a full
// Reload.
func (e *Engine) applyChange(ctx context.Context, put, deleted []string) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	if e.healthOverlaid() { // the upstreams' health is laid over in full rebuilds only
		return e.reloadLocked(ctx)
	}
	cur := e.state.Load()
	gen := e.store.Generation()
	if cur == nil {
		return e.reloadLocked(ctx)
	}
	old := cur.gen.Snapshot()
	switch {
	case gen == old.Generation:
		return nil // nothing was stored (identical definitions)
	case gen != old.Generation+1:
		return e.reloadLocked(ctx)
	}
	caps, err := e.store.GetActive(put)
	if err != nil {
		return err
	}
	avail := len(deleted) == 0
	for _, c := range caps {
		if prev, ok := old.Get(c.ID); !ok || !availabilityOnly(prev, c) {
			avail = false
		}
	}
	snap, err := old.Apply(gen, caps, deleted)
	if err != nil {
		return err
	}
	if avail {
		g, err := cur.gen.WithAvailability(snap)
		var terms *rank.TermCache
		if err == nil {
			terms, err = cur.terms.WithCaps(snap.Caps)
		}
		if err == nil {
			e.state.Store(&state{gen: g, lex: cur.lex, terms: terms, facts: cur.facts.next(old.Caps, snap.Caps), packs: cur.packs, match: new(matchCache)})
			e.log.Debug("registry generation loaded (availability only)", "generation", gen, "changed", len(put))
			return nil
		}
		e.log.Warn("availability change rebuilt in full", "err", err)
	}
	if err := e.build(ctx, snap, false, cur); err != nil {
		return err
	}
	e.log.Debug("registry generation loaded", "generation", gen, "changed", len(put), "deleted", len(deleted),
		"lexical_patched", e.state.Load().gen.Stats().LexicalPatched, "terms_patched", e.state.Load().terms.Patched())
	return nil
}

// availabilityOnly reports whether b differs from a only in fields that decide availability
// and that no text index, lexicon or term cache reads: status, health, enabled, version and
// provenance.
func availabilityOnly(a, b *registry.Capability) bool {
	x, y := *a, *b
	for _, c := range []*registry.Capability{&x, &y} {
		c.Status, c.Health, c.Enabled, c.Version, c.Provenance, c.Eff = "", registry.Health{}, nil, 0, registry.Provenance{}, nil
	}
	return reflect.DeepEqual(&x, &y)
}

// RetrieverNames returns the names of the retrievers a search may plan, in retriever order.
func RetrieverNames() []string {
	out := make([]string, 0, index.NumKinds)
	for k := index.Kind(0); k < index.NumKinds; k++ {
		out = append(out, k.String())
	}
	return out
}

// Generation returns the registry generation being searched.
func (e *Engine) Generation() uint64 { return e.state.Load().gen.Snapshot().Generation }

// Snapshot returns the registry snapshot being searched. It must not be modified.
func (e *Engine) Snapshot() *registry.Snapshot { return e.state.Load().gen.Snapshot() }

// Close stops the actor system and closes the store. It is safe to call more than once.
func (e *Engine) Close() error {
	var err error
	e.closeOnce.Do(func() {
		e.stopSemantic()
		if e.gw != nil {
			e.gw.mgr.Close()
		}
		e.runMu.Lock()
		e.closed = true
		e.runMu.Unlock()
		if e.sys != nil {
			e.sys.Close()
		}
		for _, f := range e.cleanup {
			f()
		}
		e.keepColumns()
		e.reloadMu.Lock() // keepPersisted's writes and deletes do not interleave with a build's
		if st := e.state.Load(); st != nil {
			e.keepPersisted(st.gen, st.terms, st.lex)
		}
		e.reloadMu.Unlock()
		err = e.store.Close()
	})
	return err
}

// keepColumns stores the column snapshot of the generation being searched, unless the store
// holds it already, so that the next Open restores the column view instead of building it.
// A registry change does not write it (that would cost every change a snapshot of the whole
// view); Close does, once.
func (e *Engine) keepColumns() {
	st := e.state.Load()
	if st == nil || e.opts.Dir == "" || e.healthOverlaid() {
		return
	}
	key := fmt.Sprintf("columns/%d", st.gen.Snapshot().Generation)
	if _, err := e.store.GetBlob(key); !errors.Is(err, store.ErrNotFound) {
		return
	}
	var b bytes.Buffer
	if err := st.gen.ColumnSnapshot(&b); err != nil {
		e.log.Warn("taking the column snapshot failed", "err", err)
		return
	}
	if err := e.store.PutBlob(key, b.Bytes()); err != nil {
		e.log.Warn("keeping the column snapshot failed", "err", err)
	}
}

const (
	thresholdsBlob = "calibration/thresholds"
	// seededBlob marks a store seeded with nothing (Options.Seed empty, --no-examples).
	seededBlob = "meta/seeded"
)

func (e *Engine) seededEmpty() bool {
	_, err := e.store.GetBlob(seededBlob)
	return err == nil
}

// healthOverlaid reports whether upstream health is laid over the stored definitions.
func (e *Engine) healthOverlaid() bool {
	e.healthMu.Lock()
	defer e.healthMu.Unlock()
	return len(e.health) > 0
}

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
