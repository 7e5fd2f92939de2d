package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/capdex/capdex/registry"
)

// GoFunc is an action implemented by the embedding program. args hold the validated
// arguments (numbers as json.Number). The returned value is encoded as the output with
// encoding/json; a json.RawMessage is used as is. GoFunc is called concurrently and should
// honour ctx: its deadline is the action's timeout.
type GoFunc func(ctx context.Context, args map[string]any) (any, error)

// Go runs registered Go functions, chosen by handler.name.
type Go struct {
	funcs map[string]GoFunc // read-only after NewGo
}

// NewGo returns a go handler over name → function. The map is copied.
func NewGo(funcs map[string]GoFunc) *Go {
	m := make(map[string]GoFunc, len(funcs))
	for k, f := range funcs {
		m[k] = f
	}
	return &Go{funcs: m}
}

// Run implements Handler. A panic of the function is recovered as ErrHandlerFailed; a
// function still running at the deadline is left behind and Run returns ErrTimeout.
// Network is "any" for policy any and "unenforced" otherwise (in-process code shares the
// process's network).
func (g *Go) Run(ctx context.Context, req Request) (Result, error) {
	res := Result{Network: NetworkUnenforced}
	if req.Cap == nil || req.Cap.Handler == nil {
		return res, fmt.Errorf("%w: no handler", ErrBadHandler)
	}
	if policyOf(req.Cap) == registry.NetworkAny {
		res.Network = NetworkAnyHost
	}
	f, ok := g.funcs[req.Cap.Handler.Name]
	if !ok {
		return res, fmt.Errorf("%w: %q", ErrUnknownFunc, req.Cap.Handler.Name)
	}
	args, _, err := req.args()
	if err != nil {
		return res, err
	}
	type outcome struct {
		v   any
		err error
	}
	done := make(chan outcome, 1) // buffered: an abandoned function must not block forever
	go func() {
		defer func() {
			if p := recover(); p != nil {
				req.Config.logger().Debug("go handler panicked", "name", req.Cap.Handler.Name, "panic", p, "stack", string(debug.Stack()))
				done <- outcome{err: fmt.Errorf("panic: %v", p)}
			}
		}()
		v, err := f(ctx, args)
		done <- outcome{v, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		return res, ctxErr(ctx)
	}
	if o.err != nil {
		if errors.Is(o.err, context.DeadlineExceeded) && ctx.Err() != nil {
			return res, ctxErr(ctx)
		}
		return res, fmt.Errorf("%w: %w", ErrHandlerFailed, o.err)
	}
	switch v := o.v.(type) {
	case json.RawMessage:
		if !json.Valid(v) {
			return res, fmt.Errorf("%w: function returned invalid JSON", ErrHandlerFailed)
		}
		res.Output = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return res, fmt.Errorf("%w: encode output: %v", ErrHandlerFailed, err)
		}
		res.Output = b
	}
	return res, nil
}

// ctxErr maps a done context to ErrTimeout (deadline) or the cancellation error.
func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrTimeout, context.Cause(ctx))
	}
	return ctx.Err()
}
