package server

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var fullConfig = `
data_dir: data
registry_dirs: [reg, /abs/reg]
addr: 127.0.0.1:9999
keys:
  - key: "0123456789abcdef0123"
    tenant: acme
    user: alice
    scopes: [dev, ops]
  - key_sha256: "` + strings.Repeat("ab", 32) + `"
    user: bot
local_identity: {tenant: home, user: me, scopes: [dev, admin]}
deadlines: {exact: 20ms, semantic: 1s}
fusion: {exact: 3, history: 0.1, k: 30}
limits:
  max_inflight_searches: 7
  max_inflight_runs: 3
  max_body_bytes: 4096
  max_leaf_tools: 4
  read_header_timeout: 2s
  read_timeout: 7s
  idle_timeout: 8s
  max_mcp_line_bytes: 65536
  shutdown_timeout: 3s
  session_idle_timeout: 1m
base_urls: {billing: "https://billing.example"}
token_ttl: 2m
log_level: debug
log_format: text
`

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string // substring; "" means valid
		check   func(t *testing.T, c *Config)
	}{
		{name: "every field", yaml: fullConfig, check: func(t *testing.T, c *Config) {
			if c.Addr != "127.0.0.1:9999" || len(c.Keys) != 2 || c.Keys[0].Tenant != "acme" || c.Keys[1].KeySHA256 == "" {
				t.Errorf("addr/keys: %+v", c)
			}
			if c.Deadlines["exact"].D() != 20*time.Millisecond || c.Deadlines["semantic"].D() != time.Second {
				t.Errorf("deadlines: %v", c.Deadlines)
			}
			if c.Limits.MaxInflightSearches != 7 || c.Limits.MaxBodyBytes != 4096 || c.Limits.ReadHeaderTimeout.D() != 2*time.Second ||
				c.Limits.SessionIdleTimeout.D() != time.Minute || c.Limits.MaxLeafTools != 4 {
				t.Errorf("limits: %+v", c.Limits)
			}
			if c.Limits.ReadTimeout.D() != 7*time.Second || c.Limits.IdleTimeout.D() != 8*time.Second || c.Limits.MaxMCPLineBytes != 65536 {
				t.Errorf("read_timeout/idle_timeout/max_mcp_line_bytes: %+v", c.Limits)
			}
			if c.TokenTTL.D() != 2*time.Minute || c.BaseURLs["billing"] == "" || c.LocalIdentity.Tenant != "home" {
				t.Errorf("token_ttl/base_urls/local_identity: %+v", c)
			}
			eo := c.EngineOptions()
			if eo.Weights == nil || eo.Weights.Exact != 3 || eo.Weights.History != 0.1 || eo.Weights.K != 30 || eo.Weights.Lexical != 1.2 {
				t.Errorf("weights: %+v", eo.Weights)
			}
			if eo.Deadlines["exact"] != 20*time.Millisecond || eo.TokenTTL != 2*time.Minute {
				t.Errorf("engine options: %+v", eo)
			}
		}},
		{name: "empty file is valid", yaml: "", check: func(t *testing.T, c *Config) {
			c.ApplyDefaults()
			if c.Addr != DefaultAddr || c.Limits.MaxInflightSearches != DefaultMaxInflightSearches || c.LocalIdentity.Scopes[0] != "dev" {
				t.Errorf("defaults: %+v", c)
			}
			if eo := c.EngineOptions(); eo.Weights != nil || eo.Deadlines != nil {
				t.Errorf("no overrides expected: %+v", eo)
			}
		}},
		{name: "unknown top-level field", yaml: "adress: x\n", wantErr: "field adress not found"},
		{name: "unknown nested field", yaml: "limits: {max_inflight: 3}\n", wantErr: "field max_inflight not found"},
		{name: "unknown fusion weight", yaml: "fusion: {bm25: 1}\n", wantErr: "field bm25 not found"},
		{name: "bad duration", yaml: "token_ttl: soon\n", wantErr: "not a duration"},
		{name: "unknown retriever deadline", yaml: "deadlines: {vector: 10ms}\n", wantErr: `unknown retriever "vector"`},
		{name: "key and key_sha256", yaml: "keys: [{key: 0123456789abcdef0, key_sha256: " + strings.Repeat("a", 64) + ", user: u}]\n", wantErr: "not both"},
		{name: "short key", yaml: "keys: [{key: short, user: u}]\n", wantErr: "shorter than 16"},
		{name: "bad hash", yaml: "keys: [{key_sha256: xyz, user: u}]\n", wantErr: "64 hex digits"},
		{name: "key without user", yaml: "keys: [{key: 0123456789abcdef0}]\n", wantErr: "user is required"},
		{name: "negative weight", yaml: "fusion: {exact: -1}\n", wantErr: "fusion.exact is negative"},
		{name: "bad log level", yaml: "log_level: loud\n", wantErr: "log_level"},
		{name: "fusion method rrf", yaml: "fusion: {method: rrf, weights: {semantic: 0.5}}\n", check: func(t *testing.T, c *Config) {
			w := c.EngineOptions().Weights
			if w == nil || w.ScoreShare != 0 || w.Metadata != 1.4 || w.Semantic != 0.5 || w.Lexical != 1.2 {
				t.Errorf("rrf weights: %+v", w)
			}
		}},
		{name: "fusion method score", yaml: "fusion: {method: score}\n", check: func(t *testing.T, c *Config) {
			if w := c.EngineOptions().Weights; w == nil || w.ScoreShare != 1 {
				t.Errorf("score weights: %+v", w)
			}
		}},
		{name: "unknown fusion method", yaml: "fusion: {method: borda}\n", wantErr: `fusion method "borda"`},
		{name: "negative nested weight", yaml: "fusion: {weights: {lexical: -2}}\n", wantErr: "fusion.weights.lexical is negative"},
		{name: "embedder model2vec", yaml: "embedder: {kind: model2vec, path: models/potion}\n", check: func(t *testing.T, c *Config) {
			if s := c.Embedder.Spec(); s.Kind != "model2vec" || s.Path != "models/potion" {
				t.Errorf("spec %+v", s)
			}
		}},
		{name: "embedder openai", yaml: "embedder: {kind: openai, url: 'http://127.0.0.1:8080', model: m, api_key_env: K, timeout: 2s, batch_size: 16}\n", check: func(t *testing.T, c *Config) {
			if s := c.Embedder.Spec(); s.Kind != "openai" || s.URL != "http://127.0.0.1:8080" || s.Model != "m" || s.APIKeyEnv != "K" || s.Timeout != 2*time.Second || s.BatchSize != 16 {
				t.Errorf("spec %+v", s)
			}
		}},
		{name: "embedder without model", yaml: "embedder: {kind: ollama, url: 'http://localhost:11434'}\n", wantErr: "needs url and model"},
		{name: "embedder unknown kind", yaml: "embedder: {kind: word2vec}\n", wantErr: `embedder kind "word2vec"`},
		{name: "embedder model2vec without path", yaml: "embedder: {kind: model2vec}\n", wantErr: "needs path"},
		{name: "bad addr", yaml: "addr: localhost\n", wantErr: "want host:port"},
		{name: "two documents", yaml: "addr: a\n---\naddr: b\n", wantErr: "more than one YAML document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.yaml))
			if err == nil {
				c.ApplyDefaults()
				err = c.Validate()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrConfig) {
					t.Fatalf("want ErrConfig containing %q, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestLoadConfigFileAndEnvironment(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "capdex.yaml")
	if err := os.WriteFile(path, []byte(fullConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("relative paths are relative to the file", func(t *testing.T) {
		t.Setenv(EnvHome, "")
		t.Setenv(EnvAddr, "")
		t.Setenv(EnvRegistryDirs, "")
		c, err := LoadConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.DataDir != filepath.Join(dir, "data") || c.RegistryDirs[0] != filepath.Join(dir, "reg") || c.RegistryDirs[1] != "/abs/reg" {
			t.Errorf("paths: %q %q", c.DataDir, c.RegistryDirs)
		}
		if c.File != path {
			t.Errorf("File = %q", c.File)
		}
	})
	t.Run("environment overrides the file", func(t *testing.T) {
		t.Setenv(EnvHome, "/env/home")
		t.Setenv(EnvAddr, "127.0.0.1:1")
		t.Setenv(EnvRegistryDirs, "/r1"+string(os.PathListSeparator)+"/r2")
		t.Setenv(EnvLogLevel, "warn")
		t.Setenv(EnvLogFormat, "json")
		c, err := LoadConfig(path)
		if err != nil {
			t.Fatal(err)
		}
		if c.DataDir != "/env/home" || c.Addr != "127.0.0.1:1" || len(c.RegistryDirs) != 2 || c.RegistryDirs[1] != "/r2" || c.LogLevel != "warn" || c.LogFormat != "json" {
			t.Errorf("env not applied: %+v", c)
		}
	})
	t.Run("CAPDEX_CONFIG names the file", func(t *testing.T) {
		t.Setenv(EnvConfig, path)
		t.Setenv(EnvHome, "")
		t.Setenv(EnvAddr, "")
		c, err := LoadConfig("")
		if err != nil {
			t.Fatal(err)
		}
		if c.Addr != "127.0.0.1:9999" {
			t.Errorf("file from CAPDEX_CONFIG not read: %+v", c)
		}
	})
	t.Run("a missing named file is an error", func(t *testing.T) {
		t.Setenv(EnvConfig, "")
		if _, err := LoadConfig(filepath.Join(dir, "nope.yaml")); !errors.Is(err, ErrConfig) {
			t.Fatalf("want ErrConfig, got %v", err)
		}
	})
	t.Run("no file at all gives the defaults", func(t *testing.T) {
		t.Setenv(EnvConfig, "")
		t.Setenv(EnvHome, "")
		t.Setenv(EnvAddr, "")
		t.Chdir(t.TempDir())
		c, err := LoadConfig("")
		if err != nil {
			t.Fatal(err)
		}
		if c.File != "" || c.Addr != DefaultAddr || c.Limits.MaxBodyBytes != DefaultMaxBodyBytes {
			t.Errorf("defaults: %+v", c)
		}
	})
}
