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
// actor. Each search allocates its retrievals in one block that is never reused, so
// a RetrieveFunc that leaks its ctx (which lives here) cannot see another search.
type retrieval struct {
	ctx    stepCtx
	search uint64 // search id
	step   int    // index into the plan
	kind   index.Kind
	limit  int
	query  *index.Query
	allow  *roaring.Bitmap
	fn     RetrieveFunc
	gather *actor.PID // reply target
	ev     Evidence   // the answer, written by the retriever
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
	system   context.Context // cancelled by System.Close
	deadline time.Time

	mu       sync.Mutex // protects the fields below
	inner    context.Context
	cancel   context.CancelFunc
	stop     func() bool
	released bool
}

func (c *stepCtx) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *stepCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inner == nil {
		if c.released {
			return closedChan
		}
		c.inner, c.cancel = context.WithDeadline(c.parent, c.deadline)
		c.stop = context.AfterFunc(c.system, c.cancel)
	}
	return c.inner.Done()
}

func (c *stepCtx) Err() error {
	c.mu.Lock()
	inner, released := c.inner, c.released
	c.mu.Unlock()
	if inner != nil {
		return inner.Err()
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	if c.system.Err() != nil || released {
		return context.Canceled
	}
	return nil
}

func (c *stepCtx) Value(key any) any { return c.parent.Value(key) }

// release ends the context once its RetrieveFunc returned.
func (c *stepCtx) release() {
	c.mu.Lock()
	c.released = true
	if c.cancel != nil {
		c.stop()
		c.cancel()
	}
	c.mu.Unlock()
}

// retriever is one retriever actor. It is its own producer's only product, so a
// restart by protoactor's supervisor (which RetrieveFunc panics never cause: they are
// recovered) would keep its state.
type retriever struct {
	kind    index.Kind
	pid     *actor.PID
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
		c.Send(m.gather, m)
	case *actor.Stopped:
		w.stopped.Done()
	}
}

// run fills r.ev.
func (w *retriever) run(r *retrieval) {
	start := time.Now()
	if !start.Before(r.ctx.deadline) {
		r.ev = Evidence{Kind: r.kind, Outcome: TimedOut, Err: context.DeadlineExceeded}
		return
	}
	if err := r.ctx.parent.Err(); err != nil { // the caller gave up
		r.ev = Evidence{Kind: r.kind, Outcome: TimedOut, Err: err}
		return
	}
	if r.ctx.system.Err() != nil {
		r.ev = Evidence{Kind: r.kind, Outcome: TimedOut, Err: ErrClosed}
		return
	}
	hits, err, crashed := w.call(r)
	r.ev = Evidence{Kind: r.kind, Took: time.Since(start)}
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
	hits, err = r.fn(&r.ctx, r.kind, r.query, r.allow, r.limit)
	return hits, err, false
}
