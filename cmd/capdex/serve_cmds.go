package main

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/server"
)

// daemonFlags are the flags of serve and mcp.
type daemonFlags struct {
	config, home, addr, logLevel, embedder string
}

// loadDaemonConfig reads the configuration (file, environment) and applies the flags.
func loadDaemonConfig(f *daemonFlags) (*server.Config, error) {
	cfg, err := server.LoadConfig(f.config)
	if err != nil {
		if errors.Is(err, server.ErrConfig) {
			return nil, usageError{err}
		}
		return nil, err
	}
	if f.addr != "" {
		cfg.Addr = f.addr
	}
	if f.logLevel != "" {
		cfg.LogLevel = f.logLevel
	}
	if f.home != "" {
		cfg.DataDir = f.home
	} else if cfg.DataDir == "" {
		if cfg.DataDir, err = dataDir(""); err != nil {
			return nil, err
		}
	}
	spec, ok, err := flagSpec(f.embedder)
	if err != nil {
		return nil, err
	}
	if ok {
		cfg.Embedder = server.EmbedderConfig{Kind: spec.Kind, Path: spec.Path, URL: spec.URL, Model: spec.Model, APIKeyEnv: spec.APIKeyEnv}
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

func cmdServe(ctx context.Context, env *cliEnv, args []string) error {
	var f daemonFlags
	fs := newFlags(env, "serve", "[--addr 127.0.0.1:7400] [--config capdex.yaml] [--home DIR]")
	fs.StringVar(&f.addr, "addr", "", "listen address (default: the configuration's addr, $CAPDEX_ADDR, else "+server.DefaultAddr+")")
	fs.StringVar(&f.config, "config", "", "configuration file (default $CAPDEX_CONFIG, else ./capdex.yaml when present)")
	fs.StringVar(&f.home, "home", "", "data directory (default data_dir, $CAPDEX_HOME, else the user's data directory)")
	fs.StringVar(&f.logLevel, "log-level", "", "debug, info, warn or error (default log_level, else info)")
	fs.StringVar(&f.embedder, "embedder", "", embedderUsage+" (default: the configuration's embedder)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("serve takes no arguments, got %q", pos)
	}
	cfg, err := loadDaemonConfig(&f)
	if err != nil {
		return err
	}
	log := cfg.NewLogger(env.stderr)
	srv, err := server.Open(ctx, cfg, server.Options{Logger: log, EngineOptions: daemonProgress(env, cfg)})
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	if p := srv.AdminKeyFile(); p != "" {
		fmt.Fprintf(env.stderr, "capdex: no API key configured; the admin key is in %s (send it as Authorization: Bearer <key>)\n", p)
	}
	fmt.Fprintf(env.stdout, "capdex: serving http://%s (MCP at /mcp, API description at /openapi.json)\n", ln.Addr())
	return srv.Serve(ctx, ln)
}

func cmdMCP(ctx context.Context, env *cliEnv, args []string) error {
	var f daemonFlags
	fs := newFlags(env, "mcp", "[--config capdex.yaml] [--home DIR]")
	fs.StringVar(&f.config, "config", "", "configuration file (default $CAPDEX_CONFIG, else ./capdex.yaml when present)")
	fs.StringVar(&f.home, "home", "", "data directory (default data_dir, $CAPDEX_HOME, else the user's data directory)")
	fs.StringVar(&f.logLevel, "log-level", "", "debug, info, warn or error; logs go to stderr (default log_level, else info)")
	fs.StringVar(&f.embedder, "embedder", "", embedderUsage+" (default: the configuration's embedder)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return badInput("mcp takes no arguments, got %q", pos)
	}
	cfg, err := loadDaemonConfig(&f)
	if err != nil {
		return err
	}
	srv, err := server.Open(ctx, cfg, server.Options{Logger: cfg.NewLogger(env.stderr), StdioOnly: true, EngineOptions: daemonProgress(env, cfg)})
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.ServeStdio(ctx, env.stdin, env.stdout)
}

// daemonProgress draws the first embedding of the catalogue on stderr (when a terminal, or
// at log level debug) for a configured embedder.
func daemonProgress(env *cliEnv, cfg *server.Config) func(*engine.Options) {
	if cfg.Embedder == (server.EmbedderConfig{}) {
		return nil
	}
	p := embedProgress(env.stderr, cfg.LogLevel == "debug")
	if p == nil {
		return nil
	}
	return func(o *engine.Options) { o.EmbedProgress = p }
}
