package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdex/capdex/engine/handlers"
)

// State is a server's connection state.
type State string

// Connection states.
const (
	StateConnecting State = "connecting"
	StateConnected  State = "connected"
	StateDown       State = "down"
)

// Status is what the Manager knows of one server.
type Status struct {
	Name      string
	Transport string
	State     State
	// LastSync is when the tools were last listed (zero: never, in this process).
	LastSync time.Time
	// Tools is how many tools the last listing returned.
	Tools int
	// Error says why the server is down, or what the last sync failed at.
	Error string
}

// Sink receives what the Manager learns. Its methods are called from the servers'
// goroutines, one at a time per server.
type Sink interface {
	// Synced receives the complete tool list of server after each listing (at connection,
	// on notifications/tools/list_changed and every ResyncEvery).
	Synced(ctx context.Context, server string, tools []*mcp.Tool) error
	// Health receives a server's state changes; msg says why it is not connected.
	Health(ctx context.Context, server string, st State, msg string)
}

// Manager keeps one MCP client session per upstream server: it connects at Start,
// reconnects with exponential backoff, lists tools (every page) and hands them to the
// Sink, and calls tools. It is safe for concurrent use.
type Manager struct {
	log   *slog.Logger
	sink  Sink
	conns map[string]*conn
	order []string

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type conn struct {
	cfg  Config
	m    *Manager
	kick chan struct{} // resync now (list_changed, or a failed call)

	mu   sync.Mutex
	sess *mcp.ClientSession
	st   Status
}

// New checks cfgs and returns a Manager over them; Start connects.
func New(cfgs []Config, sink Sink, log *slog.Logger) (*Manager, error) {
	if err := Validate(cfgs); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{log: log, sink: sink, conns: map[string]*conn{}}
	for _, c := range cfgs {
		c = c.withDefaults()
		m.conns[c.Name] = &conn{cfg: c, m: m, kick: make(chan struct{}, 1),
			st: Status{Name: c.Name, Transport: c.Transport(), State: StateConnecting}}
		m.order = append(m.order, c.Name)
	}
	return m, nil
}

// Start connects every server in the background; it returns at once.
func (m *Manager) Start(ctx context.Context) {
	ctx, m.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for _, name := range m.order {
		c := m.conns[name]
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			c.loop(ctx)
		}()
	}
}

// Close ends every session (stopping stdio servers) and waits for the goroutines.
func (m *Manager) Close() {
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
}

// Statuses returns every server's status in configuration order.
func (m *Manager) Statuses() []Status {
	out := make([]Status, 0, len(m.order))
	for _, name := range m.order {
		c := m.conns[name]
		c.mu.Lock()
		out = append(out, c.st)
		c.mu.Unlock()
	}
	return out
}

// Configs returns the servers' configurations (defaults applied), in order.
func (m *Manager) Configs() []Config {
	out := make([]Config, 0, len(m.order))
	for _, name := range m.order {
		out = append(out, m.conns[name].cfg)
	}
	return out
}

// Resync asks server to be listed again now.
func (m *Manager) Resync(server string) {
	if c := m.conns[server]; c != nil {
		c.poke()
	}
}

// CallTool implements handlers.ToolCaller: tools/call on server's session.
func (m *Manager) CallTool(ctx context.Context, server, tool string, args map[string]any) (handlers.ToolResult, error) {
	c := m.conns[server]
	if c == nil {
		return handlers.ToolResult{}, fmt.Errorf("%w: no upstream named %q", handlers.ErrUpstreamUnavailable, server)
	}
	c.mu.Lock()
	sess, st := c.sess, c.st
	c.mu.Unlock()
	if sess == nil || st.State != StateConnected {
		msg := string(st.State)
		if st.Error != "" {
			msg += ": " + st.Error
		}
		return handlers.ToolResult{}, fmt.Errorf("%w: %s is %s", handlers.ErrUpstreamUnavailable, server, msg)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if errors.Is(err, mcp.ErrConnectionClosed) {
			c.poke()
		}
		return handlers.ToolResult{}, err
	}
	var out handlers.ToolResult
	out.IsError = res.IsError
	content := res.Content
	if content == nil {
		content = []mcp.Content{}
	}
	if out.Content, err = json.Marshal(content); err != nil {
		return handlers.ToolResult{}, fmt.Errorf("encoding the content: %w", err)
	}
	if res.StructuredContent != nil {
		if out.StructuredContent, err = json.Marshal(res.StructuredContent); err != nil {
			return handlers.ToolResult{}, fmt.Errorf("encoding the structured content: %w", err)
		}
	}
	return out, nil
}

func (c *conn) poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *conn) set(f func(*Status)) Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.st)
	return c.st
}

// loop connects, serves and reconnects until ctx ends.
func (c *conn) loop(ctx context.Context) {
	const minBackoff = 250 * time.Millisecond
	backoff := minBackoff
	log := c.m.log.With("upstream", c.cfg.Name)
	for ctx.Err() == nil {
		c.set(func(s *Status) { s.State = StateConnecting })
		sess, err := c.connect(ctx)
		if err == nil {
			backoff = minBackoff
			err = c.serve(ctx, sess)
			c.mu.Lock()
			c.sess = nil
			c.mu.Unlock()
			sess.Close()
		}
		if ctx.Err() != nil {
			return
		}
		msg := err.Error()
		c.m.sink.Health(ctx, c.cfg.Name, StateDown, msg)
		c.set(func(s *Status) { s.State, s.Error = StateDown, msg })
		log.Warn("upstream MCP server down", "err", msg, "retry_in", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, c.cfg.MaxBackoff)
	}
}

// connect opens a session over the configured transport.
func (c *conn) connect(ctx context.Context) (*mcp.ClientSession, error) {
	t, err := c.transport()
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "capdex-gateway", Version: "1"}, &mcp.ClientOptions{
		Logger:                 c.m.log.With("upstream", c.cfg.Name, "component", "mcp-client"),
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.poke() },
	})
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sess, err := client.Connect(cctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	return sess, nil
}

func (c *conn) transport() (mcp.Transport, error) {
	cfg := c.cfg
	if cfg.URL != "" {
		h := http.Header{}
		for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
			v, err := ExpandValue(cfg.Headers[k], cfg.BaseDir, os.LookupEnv)
			if err != nil {
				return nil, fmt.Errorf("header %s: %w", k, err)
			}
			h.Set(k, v)
		}
		return &mcp.StreamableClientTransport{Endpoint: cfg.URL, MaxRetries: 2,
			HTTPClient: &http.Client{Transport: headerTransport{h: h, next: http.DefaultTransport}}}, nil
	}
	env := []string{}
	for _, k := range []string{"PATH", "HOME", "LANG", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		v, err := ExpandValue(cfg.Env[k], cfg.BaseDir, os.LookupEnv)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", k, err)
		}
		env = append(env, k+"="+v)
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = env
	cmd.Dir = cfg.Dir
	cmd.Stderr = &logWriter{log: c.m.log.With("upstream", cfg.Name, "stream", "stderr")}
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
}

// serve lists the tools, then keeps the session: resync on list_changed and every
// ResyncEvery, ping every PingEvery. It returns why the session ended.
func (c *conn) serve(ctx context.Context, sess *mcp.ClientSession) error {
	c.mu.Lock()
	c.sess = sess
	c.mu.Unlock()
	if err := c.sync(ctx, sess); err != nil {
		return err
	}
	c.m.sink.Health(ctx, c.cfg.Name, StateConnected, "")
	c.set(func(s *Status) { s.State, s.Error = StateConnected, "" })
	c.m.log.Info("upstream MCP server connected", "upstream", c.cfg.Name, "transport", c.cfg.Transport())

	closed := make(chan error, 1)
	go func() { closed <- sess.Wait() }()
	ping := time.NewTicker(c.cfg.PingEvery)
	defer ping.Stop()
	resync := time.NewTicker(c.cfg.ResyncEvery)
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-closed:
			if err == nil {
				return errors.New("the server closed the connection")
			}
			return fmt.Errorf("the connection closed: %w", err)
		case <-c.kick:
			if err := c.sync(ctx, sess); err != nil {
				return err
			}
		case <-resync.C:
			if err := c.sync(ctx, sess); err != nil {
				return err
			}
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, max(c.cfg.PingEvery, 5*time.Second))
			err := sess.Ping(pctx, nil)
			cancel()
			if err != nil {
				return fmt.Errorf("ping: %w", err)
			}
		}
	}
}

// sync lists every page of tools and hands them to the sink. A listing failure ends the
// session; a sink failure is kept in the status and logged.
func (c *conn) sync(ctx context.Context, sess *mcp.ClientSession) error {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var tools []*mcp.Tool
	for t, err := range sess.Tools(lctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, t)
	}
	err := c.m.sink.Synced(ctx, c.cfg.Name, tools)
	c.set(func(s *Status) {
		s.LastSync, s.Tools, s.Error = time.Now().UTC(), len(tools), ""
		if err != nil {
			s.Error = "sync: " + err.Error()
		}
	})
	if err != nil {
		c.m.log.Error("upstream sync failed", "upstream", c.cfg.Name, "err", err)
	}
	return nil
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	h    http.Header
	next http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}

// logWriter logs each write of a stdio server's stderr at debug level.
type logWriter struct{ log *slog.Logger }

var _ io.Writer = (*logWriter)(nil)

func (w *logWriter) Write(p []byte) (int, error) {
	w.log.Debug(string(p))
	return len(p), nil
}
