package engine

import (
	"context"

	"github.com/capdex/capdex/engine/govern"
	"github.com/capdex/capdex/engine/handlers"
	"github.com/capdex/capdex/registry"
)

// RunRequest is the input of capability_run; see govern.RunRequest.
type RunRequest = govern.RunRequest

// RunResult is the answer of capability_run; see govern.RunResult for every status and
// reason code.
type RunResult = govern.RunResult

// Run executes an action through the governed pipeline of docs/ARCHITECTURE.md "Run": resolve, version,
// argument validation, execute gate, risk and confirmation, execution under timeout and
// network policy, output validation, audit. A refusal is a RunResult with a reason code,
// not an error; the error is for a broken backend (store) or a closed engine.
func (e *Engine) Run(ctx context.Context, req RunRequest, rc registry.RuntimeContext) (*RunResult, error) {
	e.runMu.RLock()
	defer e.runMu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	res, err := e.run.Run(ctx, &rc, req)
	if err == nil {
		e.recordRun(&rc, res)
	}
	return res, err
}

// newRunner wires the governor to the store and the current snapshot.
func (e *Engine) newRunner() (*govern.Governor, func(), error) {
	cfg := handlers.Config{BaseURLs: e.opts.BaseURLs, ScriptsDir: e.opts.ScriptsDir, Logger: e.log}
	if cfg.ScriptsDir == "" {
		cfg.ScriptsFS = registry.BuiltinScripts()
	}
	g, err := govern.New(govern.Options{
		Definitions: govern.FromSnapshot(e.Snapshot),
		Audit:       e.store,
		Tokens:      e.store,
		Secrets:     e.store,
		History:     e.store,
		GoFuncs:     goFuncs(e.opts.GoFuncs),
		Config:      cfg,
		TokenKey:    e.opts.TokenKey,
		TokenTTL:    e.opts.TokenTTL,
		Logger:      e.log,
	})
	if err != nil {
		return nil, nil, err
	}
	return g, func() { g.Close() }, nil
}

// goFuncs returns the built-in go handler functions (those the built-in registry names)
// overlaid with the embedding program's own.
func goFuncs(own map[string]handlers.GoFunc) map[string]handlers.GoFunc {
	m := map[string]handlers.GoFunc{
		// echo returns its arguments: demo.echo, a harmless action for tests and demos.
		"echo": func(ctx context.Context, args map[string]any) (any, error) { return args, nil },
	}
	for k, f := range own {
		m[k] = f
	}
	return m
}
