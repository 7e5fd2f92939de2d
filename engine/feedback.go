package engine

import (
	"context"
	"fmt"

	"github.com/capdex/capdex/engine/feedback"
	"github.com/capdex/capdex/engine/govern"
	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/registry"
)

// FeedbackOptions tune learning from use (Options.Feedback); see package engine/feedback.
type FeedbackOptions = feedback.Options

// Funnel is a tenant's funnel as one caller may see it (Stats, GET /v1/stats).
type Funnel = feedback.Funnel

// CapabilityFunnel is one capability's row of a Funnel.
type CapabilityFunnel = feedback.CapabilityFunnel

// FunnelTotals are funnel counts summed over every tenant (FunnelTotals).
type FunnelTotals = feedback.Totals

// openFeedback starts the recorder of the engine's sessions over its store.
func (e *Engine) openFeedback() error {
	o := feedback.Options{Logger: e.log}
	if e.opts.Feedback != nil {
		o = *e.opts.Feedback
		if o.Logger == nil {
			o.Logger = e.log
		}
	}
	fb, err := feedback.New(e.store, o)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	e.fb = fb
	e.cleanup = append(e.cleanup, func() {
		if err := fb.Close(); err != nil {
			e.log.Warn("writing the last feedback records failed", "err", err)
		}
	})
	return nil
}

// recordSearch counts a search of the caller's session (rc.Session): the capabilities it
// showed become what later describes and runs of the session are counted against.
func (e *Engine) recordSearch(sc *searchCtx, resp *registry.SearchResponse) {
	rc := sc.rc
	if rc.Session == "" || rc.Tenant == "" {
		return
	}
	shown := make([]string, len(resp.Matches))
	for i := range resp.Matches {
		shown[i] = resp.Matches[i].ResourceID
	}
	e.fb.Searched(rc.Tenant, rc.Session, rc.User, sc.parsed.Text, shown, resp.Resolution != registry.Confident)
}

// recordRun counts a run of the caller's session that reached an outcome (succeeded or
// failed; a refusal or a confirmation request is not one).
func (e *Engine) recordRun(rc *registry.RuntimeContext, res *govern.RunResult) {
	if rc.Session == "" || res == nil {
		return
	}
	switch res.Status {
	case govern.StatusSucceeded:
		e.fb.Ran(rc.Tenant, rc.Session, res.ID, true)
	case govern.StatusFailed:
		e.fb.Ran(rc.Tenant, rc.Session, res.ID, false)
	}
}

// ReportOutcome records the outcome of a capability that the caller's harness ran itself
// (outside Run) after a search and a describe of its session (rc.Session), through the same
// path as Run's outcomes: a success teaches the tenant that searches like the session's
// lead to id. An id the caller may not discover is ErrNotFound, as in Describe; a caller
// without a session is ErrInvalidRequest. It reports whether the session had a search to
// count the outcome to.
func (e *Engine) ReportOutcome(ctx context.Context, id string, succeeded bool, rc registry.RuntimeContext) (bool, error) {
	st := e.state.Load()
	if st == nil {
		return false, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if rc.Session == "" || rc.Tenant == "" {
		return false, fmt.Errorf("%w: an outcome needs the caller's tenant and session", ErrInvalidRequest)
	}
	c, ok := st.gen.Snapshot().Get(id)
	if !ok || !policy.Check(c, &rc, registry.GateDiscover).Allowed {
		return false, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return e.fb.Ran(rc.Tenant, rc.Session, c.ID, succeeded), nil
}

// Stats returns the funnel of the caller's tenant, listing only the capabilities the caller
// may discover in the registry being searched (the rates are the tenant's).
func (e *Engine) Stats(rc registry.RuntimeContext) (*Funnel, error) {
	st := e.state.Load()
	if st == nil {
		return nil, ErrClosed
	}
	snap := st.gen.Snapshot()
	f := e.fb.Funnel(rc.Tenant, func(id string) bool {
		c, ok := snap.Get(id)
		return ok && policy.Check(c, &rc, registry.GateDiscover).Allowed
	})
	return &f, nil
}

// FunnelTotals returns the funnel counts of every tenant together, naming no tenant and no
// capability (for metrics).
func (e *Engine) FunnelTotals() FunnelTotals { return e.fb.Totals() }

// FlushFeedback writes the sessions recorded so far to the store (they are written in the
// background otherwise, and on Close).
func (e *Engine) FlushFeedback(ctx context.Context) error { return e.fb.Flush(ctx) }
