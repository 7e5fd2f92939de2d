package server

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// Defaults of the configuration (see README "## Daemon").
const (
	DefaultAddr                = "127.0.0.1:7400"
	DefaultMaxInflightSearches = 64
	DefaultMaxInflightRuns     = 8
	DefaultMaxBodyBytes        = 1 << 20
	DefaultMaxLeafTools        = 16
	DefaultReadHeaderTimeout   = 5 * time.Second
	DefaultReadTimeout         = 30 * time.Second
	DefaultIdleTimeout         = 2 * time.Minute
	DefaultMaxMCPLineBytes     = 4 << 20
	DefaultShutdownTimeout     = 15 * time.Second
	DefaultSessionIdleTimeout  = 30 * time.Minute
	// DefaultConfigFile is the file looked for in the working directory when neither
	// --config nor $CAPDEX_CONFIG names one.
	DefaultConfigFile = "capdex.yaml"
)

// Environment variables that override the configuration file (flags override them).
const (
	EnvConfig       = "CAPDEX_CONFIG"
	EnvHome         = "CAPDEX_HOME"
	EnvAddr         = "CAPDEX_ADDR"
	EnvRegistryDirs = "CAPDEX_REGISTRY_DIRS"
	EnvLogLevel     = "CAPDEX_LOG_LEVEL"
	EnvLogFormat    = "CAPDEX_LOG_FORMAT"
	// EnvExamples set to false (0, no, off) starts an empty store without the demo
	// registry; true seeds it even with registry_dirs or upstreams.
	EnvExamples     = "CAPDEX_EXAMPLES"
	EnvAuditKeyFile = "CAPDEX_AUDIT_KEY_FILE"
)

// Config is the daemon's configuration, read from capdex.yaml. The zero value, after
// ApplyDefaults, is a valid configuration of an in-memory daemon on DefaultAddr that
// generates its admin key.
type Config struct {
	// DataDir is the data directory (Badger store, admin.key). Empty means an in-memory
	// store (tests and throwaway daemons); the command line fills in the user's data
	// directory. Overridden by $CAPDEX_HOME and --home.
	DataDir string `yaml:"data_dir"`
	// RegistryDirs are registry directories imported at start and watched: a valid change
	// becomes a new registry generation, an invalid one is logged and refused. Overridden
	// by $CAPDEX_REGISTRY_DIRS (a path list).
	RegistryDirs []string `yaml:"registry_dirs"`
	// Addr is the HTTP listen address (default DefaultAddr). Overridden by $CAPDEX_ADDR
	// and --addr.
	Addr string `yaml:"addr"`
	// Keys are the API keys and the identities they stand for. With none, serve generates
	// an admin key and keeps it in <data_dir>/admin.key.
	Keys []KeyConfig `yaml:"keys"`
	// LocalIdentity is who the stdio MCP server (capdex mcp) runs as. Default tenant
	// "default", user $USER, scopes [dev].
	LocalIdentity Identity `yaml:"local_identity"`
	// Deadlines per retriever (exact, metadata, hierarchy, lexical, history, semantic).
	// Missing entries keep the engine's defaults.
	Deadlines map[string]Duration `yaml:"deadlines"`
	// Fusion chooses the fusion method and overrides its weights.
	Fusion FusionConfig `yaml:"fusion"`
	// Embedder chooses the semantic retriever's embedder (default: the offline one).
	Embedder EmbedderConfig `yaml:"embedder"`
	// Limits bound what the daemon accepts.
	Limits Limits `yaml:"limits"`
	// BaseURLs maps the {{.base_url.NAME}} of http handlers to URLs.
	BaseURLs map[string]string `yaml:"base_urls"`
	// TokenTTL is how long a confirmation token stays valid (engine default 10m).
	TokenTTL Duration `yaml:"token_ttl"`
	// LogLevel is debug, info (default), warn or error. Overridden by $CAPDEX_LOG_LEVEL.
	LogLevel string `yaml:"log_level"`
	// LogFormat is json (default) or text. Overridden by $CAPDEX_LOG_FORMAT.
	LogFormat string `yaml:"log_format"`

	// Upstreams are MCP servers whose tools capdex serves as actions (the gateway, see
	// docs/gateway.md).
	Upstreams []UpstreamConfig `yaml:"upstreams"`
	// UpstreamACL is the ACL of an upstream without acl (default: discover, describe and
	// execute "*": the administrator chose to connect the server; its side effect I tools still
	// need a confirmation).
	UpstreamACL *ACLConfig `yaml:"upstream_acl"`
	// Examples seeds an empty store with the built-in demo registry. Default true, except
	// when registry_dirs or upstreams are set. Overridden by $CAPDEX_EXAMPLES and
	// --no-examples. A store already seeded keeps what it holds.
	Examples *bool `yaml:"examples"`
	// AuditKeyFile names the file of the audit key that seals every audit record with an
	// HMAC (at least 32 bytes, mode 0600, outside data_dir; see docs/audit.md). Overridden
	// by $CAPDEX_AUDIT_KEY_FILE.
	AuditKeyFile string `yaml:"audit_key_file"`

	// File is the configuration file read ("" when none); not a YAML field.
	File string `yaml:"-"`
}

// UpstreamConfig is one upstream MCP server: name, then command, args and env (stdio) or
// url and headers (streamable HTTP). Env and header values may name environment variables
// (${NAME}) or secret files (file:PATH).
type UpstreamConfig struct {
	Name    string            `yaml:"name"`
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	Dir     string            `yaml:"dir"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// ACL of the server's pack (default upstream_acl).
	ACL *ACLConfig `yaml:"acl"`
	// Prefix is the pack of the server's tools (default mcp.<name>).
	Prefix string `yaml:"prefix"`
	// TrustChanges accepts changed and new tools without quarantine (default false).
	TrustChanges bool `yaml:"trust_changes"`
	// NetworkPolicy of its actions (default any).
	NetworkPolicy string `yaml:"network_policy"`
	// Timeout of a tools/call (default 30s); ResyncEvery (default 5m) and PingEvery
	// (default 10s) pace the re-listing and the liveness check.
	Timeout     Duration `yaml:"timeout"`
	ResyncEvery Duration `yaml:"resync_every"`
	PingEvery   Duration `yaml:"ping_every"`
}

// ACLConfig lists who may pass each gate (scopes, user:NAME, tenant:NAME, *).
type ACLConfig struct {
	Discover []string `yaml:"discover"`
	Describe []string `yaml:"describe"`
	Execute  []string `yaml:"execute"`
	Deny     []string `yaml:"deny"`
}

func (a *ACLConfig) acl() *registry.ACL {
	if a == nil {
		return nil
	}
	return &registry.ACL{Discover: a.Discover, Describe: a.Describe, Execute: a.Execute, Deny: a.Deny}
}

// SeedExamples reports whether an empty store is seeded with the demo registry.
func (c *Config) SeedExamples() bool {
	if c.Examples != nil {
		return *c.Examples
	}
	return len(c.RegistryDirs) == 0 && len(c.Upstreams) == 0
}

// upstreams returns the gateway's configurations.
func (c *Config) upstreams() []engine.UpstreamConfig {
	out := make([]engine.UpstreamConfig, 0, len(c.Upstreams))
	base := ""
	if c.File != "" {
		base = filepath.Dir(c.File)
	}
	for _, u := range c.Upstreams {
		acl := u.ACL.acl()
		if acl == nil {
			acl = c.UpstreamACL.acl()
		}
		out = append(out, engine.UpstreamConfig{
			Name: u.Name, Command: u.Command, Args: u.Args, Env: u.Env, Dir: u.Dir, BaseDir: base,
			URL: u.URL, Headers: u.Headers, ACL: acl, Prefix: u.Prefix, TrustChanges: u.TrustChanges,
			NetworkPolicy: registry.NetworkPolicy(u.NetworkPolicy), Timeout: u.Timeout.D(),
			ResyncEvery: u.ResyncEvery.D(), PingEvery: u.PingEvery.D(),
		})
	}
	return out
}

// KeyConfig is one API key. Exactly one of Key and KeySHA256 is set.
type KeyConfig struct {
	// Key is the key itself (prefer KeySHA256 in files others can read).
	Key string `yaml:"key"`
	// KeySHA256 is the hex SHA-256 of the key.
	KeySHA256 string `yaml:"key_sha256"`
	// Tenant the key acts for (default "default").
	Tenant string `yaml:"tenant"`
	// User the key acts as (required).
	User string `yaml:"user"`
	// Scopes of the key, matched against capability ACLs; "admin" passes every gate and
	// may PUT and DELETE capabilities.
	Scopes []string `yaml:"scopes"`
}

// Identity is a tenant, a user and scopes.
type Identity struct {
	Tenant string   `yaml:"tenant"`
	User   string   `yaml:"user"`
	Scopes []string `yaml:"scopes"`
}

// FusionConfig is the fusion section: method and weights. The weights may also be
// written directly under fusion (the older form); weights: wins where both are set.
type FusionConfig struct {
	// Method is "score" (score-aware fusion, the default) or "rrf" (weighted reciprocal
	// rank fusion with the weights of seed 000 §15). It chooses the default weights the
	// overrides apply to.
	Method string `yaml:"method"`
	// Weights override the method's weights.
	Weights FusionWeights `yaml:"weights"`
	// FusionWeights are the older form of Weights.
	FusionWeights `yaml:",inline"`
}

// EmbedderConfig is the embedder section (see docs/embedders.md).
type EmbedderConfig struct {
	// Kind is hashed (the default: offline, no model), model2vec, openai or ollama.
	Kind string `yaml:"kind"`
	// Path is a model2vec model directory (tokenizer.json, model.safetensors), relative to
	// the configuration file.
	Path string `yaml:"path"`
	// URL is the endpoint's server root (openai, ollama).
	URL string `yaml:"url"`
	// Model is the endpoint's model name.
	Model string `yaml:"model"`
	// APIKeyEnv names the environment variable that holds the endpoint's API key.
	APIKeyEnv string `yaml:"api_key_env"`
	// Dim is the expected vector dimension (0: learned from the first answer).
	Dim int `yaml:"dim"`
	// BatchSize is the most texts per endpoint request (default 64).
	BatchSize int `yaml:"batch_size"`
	// Timeout bounds one endpoint request (default 30s).
	Timeout Duration `yaml:"timeout"`
}

// Spec is the engine's form of the section.
func (e EmbedderConfig) Spec() engine.EmbedderSpec {
	return engine.EmbedderSpec{Kind: e.Kind, Path: e.Path, URL: e.URL, Model: e.Model, APIKeyEnv: e.APIKeyEnv,
		Dim: e.Dim, BatchSize: e.BatchSize, Timeout: e.Timeout.D()}
}

// FusionWeights override the fusion method's weights; nil fields keep the default.
type FusionWeights struct {
	Exact     *float64 `yaml:"exact"`
	Metadata  *float64 `yaml:"metadata"`
	Lexical   *float64 `yaml:"lexical"`
	Semantic  *float64 `yaml:"semantic"`
	Hierarchy *float64 `yaml:"hierarchy"`
	History   *float64 `yaml:"history"`
	// K dampens the advantage of the first ranks (default 60).
	K *float64 `yaml:"k"`
}

// Limits bound the daemon's work. Zero fields take the defaults.
type Limits struct {
	// MaxInflightSearches bounds concurrent searches (HTTP, SSE and MCP together); past it
	// a search is refused at once with 429 (default 64).
	MaxInflightSearches int `yaml:"max_inflight_searches"`
	// MaxInflightRuns bounds concurrent runs; past it a run is refused with 429 (default 8).
	MaxInflightRuns int `yaml:"max_inflight_runs"`
	// MaxBodyBytes bounds a request body; a larger one is refused with 413 (default 1 MiB).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxRegistryFileBytes bounds one file of a registry directory; a larger file is
	// refused, naming it (default registry.DefaultMaxFileBytes, 4 MiB).
	MaxRegistryFileBytes int64 `yaml:"max_registry_file_bytes"`
	// MaxLeafTools bounds the leaf tools one MCP session holds; the least recently used
	// one is dropped (default 16).
	MaxLeafTools int `yaml:"max_leaf_tools"`
	// ReadHeaderTimeout bounds reading a request's headers (default 5s).
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"`
	// ReadTimeout bounds reading a request's body, from the end of its headers; a body
	// slower than that is answered 408 and its connection closed (default 30s). The answer
	// itself (a run, an event stream) is not bounded by it.
	ReadTimeout Duration `yaml:"read_timeout"`
	// IdleTimeout closes a keep-alive connection with no request for this long (default 2m).
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxMCPLineBytes bounds one JSON-RPC message of capdex mcp (stdio, one message a line);
	// a longer line is answered with a JSON-RPC error and skipped (default 4 MiB).
	MaxMCPLineBytes int `yaml:"max_mcp_line_bytes"`
	// ShutdownTimeout bounds the drain of in-flight requests on shutdown (default 15s).
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`
	// SessionIdleTimeout closes an MCP HTTP session idle this long (default 30m).
	SessionIdleTimeout Duration `yaml:"session_idle_timeout"`
}

// Duration is a time.Duration written as a Go duration string ("50ms", "10m").
type Duration time.Duration

// UnmarshalYAML reads a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: want a duration such as \"50ms\"", n.Line)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration (want e.g. \"50ms\", \"10m\")", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// D returns the duration as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// LoadConfig reads the configuration: the file path (when empty, $CAPDEX_CONFIG, else
// capdex.yaml in the working directory when it exists, else none), then the environment
// overrides, then the defaults; it validates the result. Unknown YAML fields are errors
// (ErrConfig). Relative paths in the file are relative to the file's directory.
func LoadConfig(path string) (*Config, error) {
	explicit := path != ""
	if path == "" {
		if p := os.Getenv(EnvConfig); p != "" {
			path, explicit = p, true
		} else if _, err := os.Stat(DefaultConfigFile); err == nil {
			path = DefaultConfigFile
		}
	}
	cfg := &Config{}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			if explicit || !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%w: %w", ErrConfig, err)
			}
		} else {
			cfg, err = ParseConfig(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			cfg.File = path
			cfg.resolvePaths(filepath.Dir(path))
		}
	}
	cfg.ApplyEnv(os.Getenv)
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// ParseConfig decodes one YAML configuration strictly (unknown fields are errors). It
// neither applies the environment nor the defaults.
func ParseConfig(b []byte) (*Config, error) {
	cfg := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: more than one YAML document", ErrConfig)
	}
	return cfg, nil
}

func (c *Config) resolvePaths(base string) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	c.DataDir = abs(c.DataDir)
	c.AuditKeyFile = abs(c.AuditKeyFile)
	c.Embedder.Path = abs(c.Embedder.Path)
	for i, d := range c.RegistryDirs {
		c.RegistryDirs[i] = abs(d)
	}
	for i := range c.Upstreams {
		c.Upstreams[i].Dir = abs(c.Upstreams[i].Dir)
	}
}

// ApplyEnv applies the environment overrides read through getenv.
func (c *Config) ApplyEnv(getenv func(string) string) {
	if v := getenv(EnvHome); v != "" {
		c.DataDir = v
	}
	if v := getenv(EnvAddr); v != "" {
		c.Addr = v
	}
	if v := getenv(EnvRegistryDirs); v != "" {
		c.RegistryDirs = nil
		for _, d := range filepath.SplitList(v) {
			if d != "" {
				c.RegistryDirs = append(c.RegistryDirs, d)
			}
		}
	}
	if v := getenv(EnvLogLevel); v != "" {
		c.LogLevel = v
	}
	if v := getenv(EnvLogFormat); v != "" {
		c.LogFormat = v
	}
	switch strings.ToLower(getenv(EnvExamples)) {
	case "false", "0", "no", "off":
		f := false
		c.Examples = &f
	case "true", "1", "yes", "on":
		t := true
		c.Examples = &t
	}
	if v := getenv(EnvAuditKeyFile); v != "" {
		c.AuditKeyFile = v
	}
}

// ApplyDefaults fills every unset field with its default.
func (c *Config) ApplyDefaults() {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	l := &c.Limits
	if l.MaxInflightSearches == 0 {
		l.MaxInflightSearches = DefaultMaxInflightSearches
	}
	if l.MaxInflightRuns == 0 {
		l.MaxInflightRuns = DefaultMaxInflightRuns
	}
	if l.MaxBodyBytes == 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxLeafTools == 0 {
		l.MaxLeafTools = DefaultMaxLeafTools
	}
	if l.MaxRegistryFileBytes == 0 {
		l.MaxRegistryFileBytes = registry.DefaultMaxFileBytes
	}
	if l.ReadHeaderTimeout == 0 {
		l.ReadHeaderTimeout = Duration(DefaultReadHeaderTimeout)
	}
	if l.ReadTimeout == 0 {
		l.ReadTimeout = Duration(DefaultReadTimeout)
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = Duration(DefaultIdleTimeout)
	}
	if l.MaxMCPLineBytes == 0 {
		l.MaxMCPLineBytes = DefaultMaxMCPLineBytes
	}
	if l.ShutdownTimeout == 0 {
		l.ShutdownTimeout = Duration(DefaultShutdownTimeout)
	}
	if l.SessionIdleTimeout == 0 {
		l.SessionIdleTimeout = Duration(DefaultSessionIdleTimeout)
	}
	id := &c.LocalIdentity
	if id.Tenant == "" {
		id.Tenant = "default"
	}
	if id.User == "" {
		id.User = localUser()
	}
	if id.Scopes == nil {
		id.Scopes = []string{"dev"}
	}
	for i := range c.Keys {
		if c.Keys[i].Tenant == "" {
			c.Keys[i].Tenant = "default"
		}
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.LogFormat == "" {
		c.LogFormat = "json"
	}
}

// Validate reports every problem of the configuration in one ErrConfig error.
func (c *Config) Validate() error {
	var probs []string
	add := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		add("addr %q: want host:port (%v)", c.Addr, err)
	}
	for i, k := range c.Keys {
		switch {
		case k.Key == "" && k.KeySHA256 == "":
			add("keys[%d]: set key or key_sha256", i)
		case k.Key != "" && k.KeySHA256 != "":
			add("keys[%d]: set key or key_sha256, not both", i)
		case k.KeySHA256 != "":
			if b, err := hex.DecodeString(k.KeySHA256); err != nil || len(b) != 32 {
				add("keys[%d]: key_sha256 is not 64 hex digits", i)
			}
		case len(k.Key) < 16:
			add("keys[%d]: key shorter than 16 characters", i)
		}
		if k.User == "" {
			add("keys[%d]: user is required", i)
		}
	}
	known := engine.DefaultDeadlines()
	names := make([]string, 0, len(c.Deadlines))
	for n := range c.Deadlines {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, ok := known[n]; !ok {
			add("deadlines: unknown retriever %q (want one of %s)", n, strings.Join(sortedKeys(known), ", "))
		} else if c.Deadlines[n] <= 0 {
			add("deadlines.%s must be positive", n)
		}
	}
	for prefix, f := range map[string]FusionWeights{"fusion.": c.Fusion.FusionWeights, "fusion.weights.": c.Fusion.Weights} {
		for _, w := range []struct {
			name string
			v    *float64
		}{{"exact", f.Exact}, {"metadata", f.Metadata}, {"lexical", f.Lexical},
			{"semantic", f.Semantic}, {"hierarchy", f.Hierarchy}, {"history", f.History}, {"k", f.K}} {
			if w.v != nil && *w.v < 0 {
				add("%s%s is negative", prefix, w.name)
			}
		}
	}
	if c.Fusion.Method != "" {
		if _, err := engine.FusionMethodWeights(c.Fusion.Method); err != nil {
			add("fusion.method: %v", err)
		}
	}
	if err := c.Embedder.Spec().Validate(); err != nil {
		add("embedder: %v", err)
	}
	l := c.Limits
	if l.MaxInflightSearches < 0 || l.MaxInflightRuns < 0 || l.MaxBodyBytes < 0 || l.MaxLeafTools < 0 ||
		l.ReadTimeout < 0 || l.IdleTimeout < 0 || l.MaxMCPLineBytes < 0 || l.MaxRegistryFileBytes < 0 {
		add("limits must not be negative")
	}
	if _, err := ParseLevel(c.LogLevel); err != nil {
		add("%v", err)
	}
	if c.LogFormat != "" && c.LogFormat != "json" && c.LogFormat != "text" {
		add("log_format %q (want json or text)", c.LogFormat)
	}
	if err := engine.ValidateUpstreams(c.upstreams()); err != nil {
		add("%s", strings.TrimPrefix(err.Error(), engine.ErrUpstreamConfig.Error()+": "))
	}
	if len(probs) > 0 {
		return fmt.Errorf("%w: %s", ErrConfig, strings.Join(probs, "; "))
	}
	return nil
}

// EngineOptions returns the engine options this configuration asks for: data directory,
// deadlines, fusion weights, base URLs and token lifetime.
func (c *Config) EngineOptions() engine.Options {
	o := engine.Options{Dir: c.DataDir, BaseURLs: c.BaseURLs, TokenTTL: c.TokenTTL.D(), AuditKeyFile: c.AuditKeyFile}
	if len(c.Upstreams) > 0 {
		o.Upstreams = c.upstreams()
	}
	if !c.SeedExamples() {
		o.Seed = []*registry.Capability{} // an empty store stays empty
	}
	if len(c.Deadlines) > 0 {
		o.Deadlines = make(map[string]time.Duration, len(c.Deadlines))
		for k, v := range c.Deadlines {
			o.Deadlines[k] = v.D()
		}
	}
	if c.Fusion != (FusionConfig{}) {
		w, _ := engine.FusionMethodWeights(c.Fusion.Method) // Validate checked the method
		set := func(dst *float64, v *float64) {
			if v != nil {
				*dst = *v
			}
		}
		for _, f := range []FusionWeights{c.Fusion.FusionWeights, c.Fusion.Weights} {
			set(&w.Exact, f.Exact)
			set(&w.Metadata, f.Metadata)
			set(&w.Lexical, f.Lexical)
			set(&w.Semantic, f.Semantic)
			set(&w.Hierarchy, f.Hierarchy)
			set(&w.History, f.History)
			set(&w.K, f.K)
		}
		o.Weights = &w
	}
	return o
}

// ParseLevel parses a log level name.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log_level %q (want debug, info, warn or error)", s)
}

// NewLogger returns the daemon's structured logger writing to w in the configured level
// and format.
func (c *Config) NewLogger(w io.Writer) *slog.Logger {
	lvl, _ := ParseLevel(c.LogLevel) // Validate reported a bad level already
	o := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, o))
	}
	return slog.New(slog.NewJSONHandler(w, o))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func localUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "local"
}
