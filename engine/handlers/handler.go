package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/capdex/capdex/registry"
)

// Network enforcement values of Result.Network.
const (
	// NetworkIsolated: the run had no network at all (exec in a fresh network namespace).
	NetworkIsolated = "isolated"
	// NetworkUnenforced: the policy asked for less network than the run could be held to.
	NetworkUnenforced = "unenforced"
	// NetworkAllowlist: only allow-listed hosts were reachable (http handler).
	NetworkAllowlist = "allowlist"
	// NetworkAnyHost: the policy allows any network and none was restricted.
	NetworkAnyHost = "any"
)

// DefaultMaxOutput caps stdout, stderr and HTTP response bodies when handler.max_output is 0.
const DefaultMaxOutput = 1 << 20

// Handler runs one action. Run is called concurrently for many requests.
type Handler interface {
	// Run executes req under ctx (whose deadline is the action's timeout) and returns its
	// output. The returned error wraps one of the package's sentinel errors; a Result
	// carrying what was captured is returned alongside ErrTimeout and ErrHandlerFailed.
	Run(ctx context.Context, req Request) (Result, error)
}

// Preflighter is implemented by handlers that can tell, before anything runs, that a run of
// c would be refused (network policy). The run pipeline asks before it issues or spends a
// confirmation token, so a token is never spent on a run that cannot start.
type Preflighter interface {
	// Preflight returns nil when c may run, else an error wrapping a sentinel such as
	// ErrNetworkUnenforceable.
	Preflight(c *registry.Capability) error
}

// Request is one run of an action, with arguments already validated against its schema.
type Request struct {
	// Cap is the action's definition; Cap.Handler says how it runs.
	Cap *registry.Capability
	// Args are the arguments decoded with json.Decoder.UseNumber, so numbers are
	// json.Number. When nil they are decoded from ArgsJSON.
	Args map[string]any
	// ArgsJSON are the arguments as JSON (sent on stdin to exec handlers). When nil they are
	// encoded from Args.
	ArgsJSON []byte
	// Config is the run environment.
	Config Config
}

// Result is what a handler produced.
type Result struct {
	// Output is the action's output as JSON: the command's stdout or the HTTP body when it
	// is JSON, else {"stdout": "..."} or {"body": "..."}; a go function's value.
	Output json.RawMessage
	// Stdout and Stderr are the exec handler's captured streams, each capped.
	Stdout, Stderr string
	// Truncated reports that stdout, stderr or an HTTP body was cut at the cap.
	Truncated bool
	// ExitStatus is the exec exit status (128+signal when killed by a signal, -1 when it
	// never started); 0 for other handlers.
	ExitStatus int
	// HTTPStatus is the response status of an http handler.
	HTTPStatus int
	// Network is how the network policy was enforced: isolated, unenforced, allowlist or any.
	Network string
}

// Config is the environment handlers run in. The zero value works: scripts resolve against
// the current directory and nothing else is configured.
type Config struct {
	// ScriptsDir is where relative exec argv[0] paths and relative handler.dir resolve.
	ScriptsDir string
	// ScriptsFS, when set and ScriptsDir is empty, is copied to a temporary directory by
	// Prepare, which then sets ScriptsDir.
	ScriptsFS fs.FS
	// BaseURLs are the values of {{.base_url.NAME}} in http templates.
	BaseURLs map[string]string
	// RunDir is the working directory of exec handlers without handler.dir (default: ScriptsDir,
	// else the process's working directory).
	RunDir string
	// LookupEnv reads the environment for exec allow-lists and http secrets (default os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// HTTPTransport sends http handler requests (default http.DefaultTransport).
	HTTPTransport http.RoundTripper
	// Logger receives debug records; nil discards.
	Logger *slog.Logger
}

// Prepare materialises ScriptsFS into a new temporary directory (under RunDir when set) and
// sets ScriptsDir to it; every regular file is made executable. It does nothing when
// ScriptsFS is nil or ScriptsDir is already set. cleanup removes the directory.
func (c *Config) Prepare() (cleanup func() error, err error) {
	noop := func() error { return nil }
	if c.ScriptsFS == nil || c.ScriptsDir != "" {
		return noop, nil
	}
	dir, err := os.MkdirTemp(c.RunDir, "capdex-scripts-")
	if err != nil {
		return noop, fmt.Errorf("handlers: materialise scripts: %w", err)
	}
	err = fs.WalkDir(c.ScriptsFS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := fs.ReadFile(c.ScriptsFS, p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o755)
	})
	if err != nil {
		os.RemoveAll(dir)
		return noop, fmt.Errorf("handlers: materialise scripts: %w", err)
	}
	c.ScriptsDir = dir
	return func() error { return os.RemoveAll(dir) }, nil
}

func (c *Config) lookupEnv(k string) (string, bool) {
	if c.LookupEnv != nil {
		return c.LookupEnv(k)
	}
	return os.LookupEnv(k)
}

func (c *Config) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Dispatcher is a Handler that picks a handler by Cap.Handler.Kind.
type Dispatcher struct {
	kinds map[string]Handler // read-only after NewDispatcher
}

// NewDispatcher returns a Dispatcher over kind → handler (kinds such as "go", "exec", "http").
func NewDispatcher(kinds map[string]Handler) *Dispatcher {
	m := make(map[string]Handler, len(kinds))
	for k, h := range kinds {
		m[k] = h
	}
	return &Dispatcher{kinds: m}
}

// NewDefault returns a Dispatcher with the go handler over funcs, the exec handler and the
// http handler.
func NewDefault(funcs map[string]GoFunc) *Dispatcher {
	return NewDispatcher(map[string]Handler{"go": NewGo(funcs), "exec": NewExec(), "http": NewHTTP()})
}

// Run implements Handler; an unknown kind is ErrUnknownKind.
func (d *Dispatcher) Run(ctx context.Context, req Request) (Result, error) {
	if req.Cap == nil || req.Cap.Handler == nil {
		return Result{ExitStatus: -1}, fmt.Errorf("%w: no handler", ErrBadHandler)
	}
	h, ok := d.kinds[req.Cap.Handler.Kind]
	if !ok {
		return Result{ExitStatus: -1}, fmt.Errorf("%w: %q", ErrUnknownKind, req.Cap.Handler.Kind)
	}
	return h.Run(ctx, req)
}

// Preflight implements Preflighter by asking the handler of c's kind, when it can answer.
func (d *Dispatcher) Preflight(c *registry.Capability) error {
	if c == nil || c.Handler == nil {
		return fmt.Errorf("%w: no handler", ErrBadHandler)
	}
	h, ok := d.kinds[c.Handler.Kind]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownKind, c.Handler.Kind)
	}
	if p, ok := h.(Preflighter); ok {
		return p.Preflight(c)
	}
	return nil
}

// args returns the request's arguments as a map and as JSON, deriving whichever is missing.
func (r *Request) args() (map[string]any, []byte, error) {
	args, raw := r.Args, r.ArgsJSON
	if args == nil && len(raw) > 0 {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&args); err != nil {
			return nil, nil, fmt.Errorf("%w: arguments: %v", ErrBadHandler, err)
		}
	}
	if args == nil {
		args = map[string]any{}
	}
	if raw == nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: arguments: %v", ErrBadHandler, err)
		}
		raw = b
	}
	return args, raw, nil
}

func maxOutput(h *registry.Handler) int {
	if h != nil && h.MaxOutput > 0 {
		return h.MaxOutput
	}
	return DefaultMaxOutput
}

// capBuffer keeps the first max bytes written and drops the rest, never failing a write
// (a child writing past the cap must not die of EPIPE).
type capBuffer struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (w *capBuffer) Write(p []byte) (int, error) {
	room := w.max - w.buf.Len()
	if room < len(p) {
		w.truncated = true
		if room > 0 {
			w.buf.Write(p[:room])
		}
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

// readCapped reads at most max bytes of r and reports whether more were there.
func readCapped(r io.Reader, max int) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if len(b) > max {
		return b[:max], true, err
	}
	return b, false, err
}

// jsonOrWrapped returns b when it is one JSON value, else {key: string(b)}.
func jsonOrWrapped(b []byte, key string) json.RawMessage {
	t := bytes.TrimSpace(b)
	if len(t) > 0 && json.Valid(t) {
		return json.RawMessage(bytes.Clone(t))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]string{key: string(b)}) // a string map always encodes
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// templateFuncs are available in every handler template.
var templateFuncs = template.FuncMap{
	// json renders a value as JSON.
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	// join renders a list joined by sep.
	"join": func(v any, sep string) string {
		l, ok := v.([]any)
		if !ok {
			return fmt.Sprint(v)
		}
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, sep)
	},
	// shquote quotes a value for /bin/sh.
	"shquote": func(v any) string {
		return "'" + strings.ReplaceAll(fmt.Sprint(v), "'", `'\''`) + "'"
	},
}

// render executes one template over data; a missing key is an error.
func render(name, text string, data any) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := template.New(name).Funcs(templateFuncs).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", fmt.Errorf("%w: template %s: %v", ErrBadHandler, name, err)
	}
	var sb strings.Builder
	if err := t.Execute(&sb, data); err != nil {
		return "", fmt.Errorf("%w: template %s: %v", ErrBadHandler, name, err)
	}
	return sb.String(), nil
}

// templateData copies args with JSON nulls as empty strings (text/template would print
// "<no value>").
func templateData(args map[string]any) map[string]any {
	out := make(map[string]any, len(args)+2)
	for k, v := range args {
		out[k] = nullsToEmpty(v)
	}
	return out
}

func nullsToEmpty(v any) any {
	switch x := v.(type) {
	case nil:
		return ""
	case map[string]any:
		return templateData(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = nullsToEmpty(e)
		}
		return out
	}
	return v
}

func policyOf(c *registry.Capability) registry.NetworkPolicy {
	if c.NetworkPolicy == "" {
		return registry.NetworkNone // default deny
	}
	return c.NetworkPolicy
}
