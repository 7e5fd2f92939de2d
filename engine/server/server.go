package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// Options configure Open beyond the configuration file. The zero value is sensible.
type Options struct {
	// Logger receives the daemon's structured logs. Nil discards them.
	Logger *slog.Logger
	// StdioOnly opens the daemon for `capdex mcp`: no HTTP API, so no API key is loaded or
	// generated. Default false.
	StdioOnly bool
	// EngineOptions, when set, adjusts the engine options derived from the configuration
	// before the engine opens (tests: NoSync, a slow retriever).
	EngineOptions func(*engine.Options)
	// ReloadDebounce is how long the watcher waits for a registry directory to settle
	// before reloading it. Default 300ms.
	ReloadDebounce time.Duration
	// Version is reported as the MCP server version. Default "dev".
	Version string
	// Quarantine, when set, serves GET /v1/quarantine and POST /v1/quarantine/approve and
	// /reject from it (the console's quarantine page).
	Quarantine QuarantineSource
}

// Server is the capdex daemon: the HTTP JSON API, MCP over streamable HTTP and stdio,
// metrics and hot reload around one engine. It is safe for concurrent use.
type Server struct {
	// mcpStop is cancelled by endMCP when shutdown has drained the tool calls: MCP
	// requests (whose event streams never go idle) end with it.
	mcpStop context.Context
	endMCP  context.CancelFunc

	cfg  Config
	opts Options
	// opened is when Open started: /readyz waits for the upstreams' first listing at most
	// FirstSyncWait from then.
	opened time.Time
	log    *slog.Logger
	eng    *engine.Engine
	m      *metrics
	// quality keeps the latest searches for the console's quality page.
	quality *qualityRecorder

	keys         *keyring
	adminKeyFile string
	adminKey     string // only when generated in memory (no data directory)

	searchSlots chan struct{}
	runSlots    chan struct{}

	handler http.Handler
	mux     *http.ServeMux
	mcpHTTP http.Handler
	// sessions are the live MCP sessions over HTTP, by session id.
	sessions sessionTable

	watch *watcher
	// reloadMu serialises reloads of the registry directories (start and watcher).
	reloadMu sync.Mutex

	// draining is set when shutdown starts: readiness fails and new MCP sessions are refused.
	draining atomic.Bool
	// toolCalls counts MCP tool calls in flight; shutdown waits for them before it closes
	// the MCP sessions.
	toolCalls atomic.Int64
	closeOnce sync.Once
}

// Open opens the engine the configuration describes (seeding an empty store with the
// built-in registry), imports and starts watching the registry directories, loads or
// generates the API keys and builds the HTTP handler. Close releases it all.
func Open(ctx context.Context, cfg *Config, opts Options) (*Server, error) {
	c := *cfg
	c.ApplyDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if opts.ReloadDebounce <= 0 {
		opts.ReloadDebounce = 300 * time.Millisecond
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		cfg: c, opts: opts, opened: time.Now(), log: log, m: newMetrics(), quality: newQualityRecorder(),
		searchSlots: make(chan struct{}, c.Limits.MaxInflightSearches),
		runSlots:    make(chan struct{}, c.Limits.MaxInflightRuns),
	}
	s.sessions.m = map[string]*mcpSession{}

	eo := c.EngineOptions()
	eo.Logger = log
	if c.Embedder != (EmbedderConfig{}) {
		emb, err := engine.OpenEmbedder(c.Embedder.Spec())
		if err != nil {
			return nil, fmt.Errorf("embedder: %w", err)
		}
		eo.Embedder = emb
		log.Info("semantic retriever embedder", "id", emb.ID())
	}
	if opts.EngineOptions != nil {
		opts.EngineOptions(&eo)
	}
	// Per-retriever metrics come from the searches' own timings, not a wrapper, so that
	// searches run on their caller as they do in the library.
	inner := eo.RetrieverTimes
	eo.RetrieverTimes = func(retriever string, took time.Duration) {
		if inner != nil {
			inner(retriever, took)
		}
		s.m.observeRetriever(retriever, took)
	}
	eng, err := engine.Open(ctx, eo)
	if err != nil {
		return nil, err
	}
	s.eng = eng
	s.m.registerFunnel(eng.FunnelTotals)
	if err := s.init(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) init(ctx context.Context) error {
	if !s.opts.StdioOnly {
		keys := s.cfg.Keys
		if len(keys) == 0 {
			key, path, created, err := ensureAdminKey(s.cfg.DataDir)
			if err != nil {
				return err
			}
			s.adminKeyFile = path
			if path == "" {
				s.adminKey = key
				s.log.Warn("no API key configured: generated an admin key for this in-memory daemon only (not kept)")
			} else if created {
				s.log.Info("no API key configured: generated an admin key", "path", path)
			} else {
				s.log.Info("no API key configured: using the admin key", "path", path)
			}
			keys = []KeyConfig{{Key: key, Tenant: "default", User: "admin", Scopes: []string{"admin"}}}
		}
		kr, err := newKeyring(keys)
		if err != nil {
			return err
		}
		s.keys = kr
	}
	s.m.generation.Set(float64(s.eng.Generation()))
	if len(s.cfg.RegistryDirs) > 0 {
		w, err := newWatcher(s, s.cfg.RegistryDirs, s.opts.ReloadDebounce)
		if err != nil {
			return err
		}
		s.reload(ctx, "start")
		w.start()
		s.watch = w
	}
	if s.opts.Quarantine == nil && s.eng.HasUpstreams() {
		s.opts.Quarantine = gatewayQuarantine{s}
	}
	s.mcpStop, s.endMCP = context.WithCancel(context.Background())
	s.mcpHTTP = s.endOnShutdown(s.newMCPHandler())
	s.handler = s.newHandler()
	return nil
}

// Engine returns the engine the daemon serves.
func (s *Server) Engine() *engine.Engine { return s.eng }

// Config returns the effective configuration (defaults applied).
func (s *Server) Config() Config { return s.cfg }

// AdminKeyFile returns where the generated admin key is kept: "" when API keys are
// configured, or when the daemon is in memory (see AdminKey).
func (s *Server) AdminKeyFile() string { return s.adminKeyFile }

// AdminKey returns the admin key generated for an in-memory daemon (no data directory);
// "" otherwise.
func (s *Server) AdminKey() string { return s.adminKey }

// Handler returns the HTTP handler: the JSON API, SSE, /mcp, health, metrics and
// /openapi.json. It is nil for a StdioOnly server.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves HTTP on ln until ctx is done, then shuts down gracefully: readiness fails,
// the listener closes, in-flight requests and MCP tool calls drain (at most
// limits.shutdown_timeout), then MCP sessions close. It does not close the engine (Close
// does). It returns nil after a graceful shutdown.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.handler == nil {
		return errors.New("server: Serve on a StdioOnly server")
	}
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.Limits.ReadHeaderTimeout.D(),
		IdleTimeout:       s.cfg.Limits.IdleTimeout.D(),
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// Connections accepted but still without a request: http.Server.Shutdown counts them
	// as busy for 5 s, so one a client opened just before shutdown (an MCP client
	// re-opening its event stream, say) would hold the drain that long.
	var fresh sync.Map // net.Conn → struct{}
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			fresh.Store(c, struct{}{})
		} else {
			fresh.Delete(c)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.draining.Store(true)
	timeout := s.cfg.Limits.ShutdownTimeout.D()
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	s.log.Info("shutting down: draining in-flight requests", "timeout", timeout.String())
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(sctx) }()
	// The MCP sessions' event streams never go idle on their own: end them once no tool
	// call is in flight, so that Shutdown can finish.
	for s.toolCalls.Load() > 0 && sctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	s.closeSessions()
	s.endMCP()
	// A connection that has sent no request carries no work to drain: close those until
	// Shutdown returns (the listener may still take one while Shutdown starts).
	var err error
	for waiting := true; waiting; {
		fresh.Range(func(c, _ any) bool {
			c.(net.Conn).Close()
			return true
		})
		select {
		case err = <-shut:
			waiting = false
		case <-time.After(20 * time.Millisecond):
		}
	}
	<-errc // Serve returned ErrServerClosed
	if err != nil {
		s.log.Warn("shutdown timed out: closing the remaining connections", "err", err)
		hs.Close()
		return nil
	}
	s.log.Info("shut down")
	return nil
}

// Close stops the watcher, closes the MCP sessions and the engine. It is safe to call more
// than once.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.draining.Store(true)
		if s.endMCP != nil {
			s.endMCP()
		}
		if s.watch != nil {
			s.watch.stop()
		}
		s.closeSessions()
		if s.eng != nil {
			err = s.eng.Close()
		}
	})
	return err
}

// acquire takes a slot of sem without waiting: a full semaphore is ErrOverloaded.
func (s *Server) acquire(sem chan struct{}, kind string) (func(), error) {
	select {
	case sem <- struct{}{}:
	default:
		s.m.rejected.WithLabelValues(kind).Inc()
		return nil, ErrOverloaded
	}
	g := s.m.inflight.WithLabelValues(kind)
	g.Inc()
	return func() {
		g.Dec()
		<-sem
	}, nil
}

// search runs one search under the search limit and records its metrics.
func (s *Server) search(ctx context.Context, req registry.SearchRequest, rc registry.RuntimeContext) (*registry.SearchResponse, error) {
	if err := engine.ValidateSearch(&req); err != nil {
		s.m.searches.WithLabelValues("invalid").Inc()
		return nil, err
	}
	release, err := s.acquire(s.searchSlots, "search")
	if err != nil {
		s.m.searches.WithLabelValues("rejected").Inc()
		return nil, err
	}
	defer release()
	start := time.Now()
	resp, err := s.eng.Search(ctx, req, rc)
	if err != nil {
		s.m.searches.WithLabelValues(outcomeOf(err)).Inc()
		return nil, err
	}
	s.m.observeSearch(time.Since(start), resp)
	s.quality.add(start, time.Since(start), resp)
	return resp, nil
}

// searchStream runs a streamed search under the search limit; fn sees every update and
// the slot is held until the final one. The updates are always drained.
func (s *Server) searchStream(ctx context.Context, req registry.SearchRequest, rc registry.RuntimeContext, fn func(engine.Update) error) error {
	if err := engine.ValidateSearch(&req); err != nil {
		s.m.searches.WithLabelValues("invalid").Inc()
		return err
	}
	release, err := s.acquire(s.searchSlots, "search")
	if err != nil {
		s.m.searches.WithLabelValues("rejected").Inc()
		return err
	}
	defer release()
	start := time.Now()
	ch, err := s.eng.SearchStream(ctx, req, rc)
	if err != nil {
		s.m.searches.WithLabelValues(outcomeOf(err)).Inc()
		return err
	}
	var ferr error
	var final *registry.SearchResponse
	for u := range ch {
		if u.Final {
			final = u.Response
		}
		if ferr == nil {
			ferr = fn(u)
		}
	}
	s.m.observeSearch(time.Since(start), final)
	s.quality.add(start, time.Since(start), final)
	return ferr
}

// run runs one action under the run limit and records its outcome.
func (s *Server) run(ctx context.Context, req engine.RunRequest, rc registry.RuntimeContext) (*engine.RunResult, error) {
	release, err := s.acquire(s.runSlots, "run")
	if err != nil {
		s.m.runs.WithLabelValues("rejected", "").Inc()
		return nil, err
	}
	defer release()
	res, err := s.eng.Run(ctx, req, rc)
	if err != nil {
		s.m.runs.WithLabelValues("error", "").Inc()
		return nil, err
	}
	s.m.runs.WithLabelValues(res.Status, res.Reason).Inc()
	return res, nil
}

// DescribeResult is the answer of describe: the capability's contract and, when a format
// was asked for, the action rendered as a tool in that format.
type DescribeResult struct {
	*engine.Description
	// Tool is the action rendered as a leaf tool (format openai, anthropic or mcp).
	Tool json.RawMessage `json:"tool,omitempty"`
}

func (s *Server) describe(ctx context.Context, id, format string, rc registry.RuntimeContext) (*DescribeResult, error) {
	switch format {
	case "", engine.FormatOpenAI, engine.FormatAnthropic, engine.FormatMCP:
	default:
		return nil, fmt.Errorf("%w: format %q (want openai, anthropic or mcp)", engine.ErrInvalidRequest, format)
	}
	d, err := s.eng.Describe(ctx, id, rc)
	if err != nil {
		return nil, err
	}
	out := &DescribeResult{Description: d}
	if format != "" {
		if out.Tool, err = engine.RenderTool(d, format); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PutResult answers an admin PUT.
type PutResult struct {
	ID         string `json:"id"`
	Version    int    `json:"version"`
	Generation uint64 `json:"generation"`
}

// put stores one definition given as JSON for id.
func (s *Server) put(ctx context.Context, id string, body []byte, c *caller) (*PutResult, error) {
	if !registry.ValidID(id) {
		return nil, fmt.Errorf("%w: %q is not a capability id", engine.ErrInvalidRequest, id)
	}
	caps, err := registry.ParseFile(id+".json", body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", engine.ErrInvalidRequest, err)
	}
	if len(caps) != 1 {
		return nil, fmt.Errorf("%w: want one definition, got %d", engine.ErrInvalidRequest, len(caps))
	}
	def := caps[0]
	if def.ID != id {
		return nil, fmt.Errorf("%w: the definition's id %q does not match the path's %q", engine.ErrInvalidRequest, def.ID, id)
	}
	if err := s.eng.Put(ctx, def, c.actor()); err != nil {
		return nil, err
	}
	gen := s.newGeneration(ctx)
	return &PutResult{ID: def.ID, Version: def.Version, Generation: gen}, nil
}

func (s *Server) remove(ctx context.Context, id string, c *caller) (uint64, error) {
	if !registry.ValidID(id) {
		return 0, fmt.Errorf("%w: %q is not a capability id", engine.ErrInvalidRequest, id)
	}
	if err := s.eng.Delete(ctx, id, c.actor()); err != nil {
		return 0, err
	}
	return s.newGeneration(ctx), nil
}

// newGeneration follows a registry change: the generation gauge, and the MCP sessions'
// leaf tools checked against the new generation's gates. It returns the generation.
func (s *Server) newGeneration(ctx context.Context) uint64 {
	gen := s.eng.Generation()
	s.m.generation.Set(float64(gen))
	s.recheckSessions(context.WithoutCancel(ctx))
	return gen
}

func (c *caller) actor() string { return "api:" + c.User + "@" + c.Tenant }

// outcomeOf names an engine error for the searches counter.
func outcomeOf(err error) string {
	if errors.Is(err, engine.ErrInvalidRequest) {
		return "invalid"
	}
	return "error"
}

func localOS() string {
	if runtime.GOOS == "darwin" {
		return "macos"
	}
	return runtime.GOOS
}

// endOnShutdown ends a request of h when shutdown cancels s.mcpStop, so that a long-lived
// MCP event stream does not hold http.Server.Shutdown until its timeout.
func (s *Server) endOnShutdown(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(s.mcpStop, cancel)
		defer stop()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
