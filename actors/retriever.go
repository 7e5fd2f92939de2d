package actors

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/asynkron/protoactor-go/actor"

	"github.com/capdex/capdex/index"
)

// retrieval is one step of one search: sent by the submitting goroutine to a
// retriever actor, filled in with its Evidence there, and sent on to the gather
// actor. It belongs to its search, which is recycled only once every retrieval is
// back (search.refs); its ctx is allocated anew for every search, so a RetrieveFunc
// that leaks its ctx cannot see another search.
type retrieval struct {
	se     *search
	step   int // index into the plan
	kind   index.Kind
	limit  int
	query  *index.Query
	allow  *roaring.Bitmap
	fn     RetrieveFunc
	gather *gatherer // reply target
	ctx    *stepCtx
	ev     Evidence // the answer, written by the retriever
	at     instant  // when the answer was made
}

// IgnoreDeadLetterLogging marks the message as not worth a dead-letter log line.
func (*retrieval) IgnoreDeadLetterLogging() {}

// closedChan is returned by Done of a stepCtx used after its RetrieveFunc returned.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// stepCtx is the context a RetrieveFunc runs under: the job's context bounded by the
// step's deadline and by the System's lifetime. The timer behind Done is created only
// when Done is called, so a retriever that only polls Err costs no timer.
type stepCtx struct {
	parent   context.Context // the caller's context
	sys      *System         // its ctx is cancelled by Close
	deadline instant

	mu       sync.Mutex // protects the fields below
	done     *stepDone  // made by the first Done call
	released bool
}

// stepDone is what a stepCtx's Done needs.
type stepDone struct {
	ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool // stops cancelling ctx when the System closes
}

func (c *stepCtx) Deadline() (time.Time, bool) {
	own := c.sys.wall(c.deadline)
	if d, ok := c.parent.Deadline(); ok && d.Before(own) {
		return d, true
	}
	return own, true
}

func (c *stepCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		if c.released {
			return closedChan
		}
		ctx, cancel := context.WithDeadline(c.parent, c.sys.wall(c.deadline))
		c.done = &stepDone{ctx: ctx, cancel: cancel, stop: context.AfterFunc(c.sys.ctx, cancel)}
	}
	return c.done.ctx.Done()
}

func (c *stepCtx) Err() error {
	c.mu.Lock()
	done, released := c.done, c.released
	c.mu.Unlock()
	if done != nil {
		return done.ctx.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.sys.now() >= c.deadline {
		return context.DeadlineExceeded
	}
	if c.sys.ctx.Err() != nil || released {
		return context.Canceled
	}
	return nil
}

func (c *stepCtx) Value(key any) any { return c.parent.Value(key) }

// release ends the context once its RetrieveFunc returned.
func (c *stepCtx) release() {
	c.mu.Lock()
	c.released = true
	if c.done != nil {
		c.done.stop()
		c.done.cancel()
	}
	c.mu.Unlock()
}

// retriever is one retriever actor. It is its own producer's only product, so a
// restart by protoactor's supervisor (which RetrieveFunc panics never cause: they are
// recovered) would keep its state.
type retriever struct {
	kind    index.Kind
	sys     *System
	pid     *actor.PID
	mb      *mailbox
	queued  atomic.Int32 // requests admitted to the mailbox and not yet received
	stopped *sync.WaitGroup
	log     *slog.Logger
}

// Receive implements actor.Actor.
func (w *retriever) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *retrieval:
		w.queued.Add(-1)
		w.run(m)
		if m.ev.Took > 0 {
			w.learn(m.ev.Took)
		}
		// Straight to the gather actor's mailbox, naming this worker: when this was the
		// last request queued here, the same goroutine runs the gather actor next;
		// unless the search's caller waits for runs to take (a helped search).
		if r := w.mb.runner; r != nil && !r.caller && m.se.waiting.Load() {
			m.gather.mb.postWaited(m, &m.se.waiting)
		} else {
			m.gather.mb.post(m, w.mb.runner)
		}
	case *actor.Stopped:
		w.stopped.Done()
	}
}

// learn folds one run time into the kind's expected run time (System.expect): a moving
// average over about the last eight runs.
func (w *retriever) learn(took time.Duration) {
	e := &w.sys.expect[w.kind]
	p := e.Load()
	e.Store(p + (int64(took)-p)/8)
}

// run fills r.ev.
func (w *retriever) run(r *retrieval) {
	sys := r.ctx.sys
	start := sys.now()
	r.at = start
	if start >= r.ctx.deadline {
		r.ev = Evidence{Kind: r.kind, Outcome: TimedOut, Err: context.DeadlineExceeded}
		return
	}
	if err := r.ctx.parent.Err(); err != nil { // the caller gave up
		r.ev = Evidence{Kind: r.kind, Outcome: TimedOut, Err: err}
		return
	}
	if sys.ctx.Err() != nil {
		r.ev = Evidence{Kind: r.kind, Outcome: TimedOut, Err: ErrClosed}
		return
	}
	hits, err, crashed := w.call(r)
	r.at = sys.now()
	r.ev = Evidence{Kind: r.kind, Took: time.Duration(r.at - start)}
	switch {
	case crashed:
		r.ev.Outcome, r.ev.Err = Crashed, err
	case err != nil:
		r.ev.Outcome, r.ev.Err = Failed, err
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) && r.ctx.Err() != nil {
			r.ev.Outcome = TimedOut // cut short, not broken
		}
	default:
		r.ev.Hits = hits
	}
	r.ctx.release()
}

// call runs the RetrieveFunc, turning a panic into a *PanicError.
func (w *retriever) call(r *retrieval) (hits []index.Hit, err error, crashed bool) {
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Where: r.kind.String(), Value: v, Stack: debug.Stack()}
			w.log.Warn("retriever panicked", slog.String("kind", pe.Where), slog.Any("panic", v))
			hits, err, crashed = nil, pe, true
		}
	}()
	hits, err = r.fn(r.ctx, r.kind, r.query, r.allow, r.limit)
	return hits, err, false
}
