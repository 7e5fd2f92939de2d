package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/server"
	"github.com/capdex/capdex/registry"
)

// cliEnv is what every command shares: the streams and, once opened, the engine.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	eng            *engine.Engine
}

func (env *cliEnv) close() {
	if env.eng != nil {
		env.eng.Close()
		env.eng = nil
	}
}

// common are the flags most commands take.
type common struct {
	home       string
	json       bool
	as         string
	verbose    bool
	noExamples bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.home, "home", "", "data directory (default $CAPDEX_HOME, else the user's data directory)")
	fs.BoolVar(&c.json, "json", false, "print JSON")
	fs.StringVar(&c.as, "as", "", "caller identity TENANT:USER:SCOPE,... (default default:$USER:dev)")
	fs.BoolVar(&c.verbose, "v", false, "log to stderr")
	fs.BoolVar(&c.noExamples, "no-examples", false, "a new data directory starts empty, without the demo registry (also $CAPDEX_EXAMPLES=false)")
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(env *cliEnv, name, args string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stderr, "usage: capdex %s %s\n", name, args)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags allowing them after positional arguments too ("search QUERY --json").
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, badInput("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// dataDir returns the data directory: the flag, $CAPDEX_HOME, else <user data dir>/capdex.
func dataDir(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if h := os.Getenv("CAPDEX_HOME"); h != "" {
		return h, nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "capdex"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no data directory: set CAPDEX_HOME (%v)", err)
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "capdex"), nil
	}
	return filepath.Join(home, ".local", "share", "capdex"), nil
}

func (c *common) logger(env *cliEnv) *slog.Logger {
	if !c.verbose {
		return nil
	}
	return slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// open opens the engine on the data directory, seeding it on first use.
func (env *cliEnv) open(ctx context.Context, c *common, opts engine.Options) (*engine.Engine, error) {
	dir, err := dataDir(c.home)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if opts.Seed == nil && (c.noExamples || isFalse(os.Getenv(server.EnvExamples))) {
		opts.Seed = []*registry.Capability{} // an empty store stays empty
	}
	if opts.AuditKeyFile == "" {
		opts.AuditKeyFile = os.Getenv("CAPDEX_AUDIT_KEY_FILE")
	}
	if opts.Logger == nil {
		opts.Logger = c.logger(env)
	}
	entries, _ := os.ReadDir(dir)
	fresh := len(entries) == 0
	e, err := engine.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	env.eng = e
	if fresh && opts.Seed == nil {
		// the choice is made once: say so while it can still be undone by starting afresh
		fmt.Fprintf(env.stderr, "capdex: new data directory %s seeded with the demo registry (for your own tools only, start a new one with --no-examples or $%s=false)\n", dir, server.EnvExamples)
	}
	return e, nil
}

// identity parses --as TENANT:USER:SCOPE,SCOPE into a runtime context of this machine.
func (c *common) identity() (registry.RuntimeContext, error) {
	rc := registry.RuntimeContext{Tenant: "default", User: localUser(), Scopes: []string{"dev"}, OS: localOS(), Session: "cli"}
	if c.as == "" {
		return rc, nil
	}
	parts := strings.SplitN(c.as, ":", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return rc, badInput("--as %q: want TENANT:USER:SCOPE,... (scopes may be empty)", c.as)
	}
	rc.Tenant, rc.User, rc.Scopes = parts[0], parts[1], splitList(parts[2])
	return rc, nil
}

func localUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "local"
}

func localOS() string {
	if runtime.GOOS == "darwin" {
		return "macos"
	}
	return runtime.GOOS
}

// isFalse reads a boolean setting's false spellings.
func isFalse(v string) bool {
	switch strings.ToLower(v) {
	case "false", "0", "no", "off":
		return true
	}
	return false
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func isEngineBadInput(err error) bool {
	return errors.Is(err, engine.ErrInvalidRequest) || errors.Is(err, registry.ErrLint)
}

// isEngineNotFound reports an id (or pack) that names nothing the caller may see: bad input.
func isEngineNotFound(err error) bool { return errors.Is(err, engine.ErrNotFound) }

// noSuchCapability is the bad input (exit 2) of an id that names no capability, or none
// the caller may see: the message names the id (ID or ID@VERSION as typed) and nothing else,
// so that an id that does not exist and one that is hidden read the same.
func noSuchCapability(id string) error {
	return usageError{fmt.Errorf("no capability %q", id)}
}
