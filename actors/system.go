package actors

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// throughput is how many messages a mailbox handles per wake-up before yielding.
const throughput = 300

// closedBit marks System.state once Close has begun; the low bits count submissions
// in progress.
const closedBit = int64(1) << 62

// System is one actor runtime: retriever pools, gather actors and their dispatcher.
// Its methods are safe for concurrent use.
type System struct {
	actors  *actor.ActorSystem
	root    *actor.RootContext
	workers *workerPool

	kinds       [index.NumKinds][]*retriever
	next        [index.NumKinds]atomic.Uint32 // round-robin position per kind
	mailboxSize int32
	gathers     []*gatherer

	nextID atomic.Uint64
	state  atomic.Int64 // closedBit | submissions in progress

	ctx    context.Context // cancelled by Close; bounds every RetrieveFunc
	cancel context.CancelFunc

	retrieversStopped sync.WaitGroup
	gathersStopped    sync.WaitGroup
	closeOnce         sync.Once
}

// New starts a System. Close it to stop its goroutines.
func New(opts Options) *System {
	procs := runtime.GOMAXPROCS(0)
	if opts.MailboxSize <= 0 {
		opts.MailboxSize = 64 * procs
	}
	if opts.PerKind <= 0 {
		opts.PerKind = 1
	}
	if opts.Gatherers <= 0 {
		opts.Gatherers = procs
	}
	if opts.Workers <= 0 {
		opts.Workers = 2 * (int(index.NumKinds)*opts.PerKind + opts.Gatherers)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &System{
		mailboxSize: int32(min(opts.MailboxSize, 1<<30)),
		workers:     newWorkerPool(opts.Workers, throughput),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	protoLog := log.With("lib", "protoactor")
	s.actors = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return protoLog }))
	s.root = s.actors.Root

	for k := range index.NumKinds {
		for range opts.PerKind {
			w := &retriever{kind: k, stopped: &s.retrieversStopped, log: log}
			s.retrieversStopped.Add(1)
			w.pid = s.root.Spawn(actor.PropsFromProducer(func() actor.Actor { return w },
				actor.WithDispatcher(s.workers),
				actor.WithMailbox(newMailbox)))
			s.kinds[k] = append(s.kinds[k], w)
		}
	}
	for range opts.Gatherers {
		g := &gatherer{sys: s, searches: make(map[uint64]*search), stopped: &s.gathersStopped}
		s.gathersStopped.Add(1)
		g.self = s.root.Spawn(actor.PropsFromProducer(func() actor.Actor { return g },
			actor.WithDispatcher(s.workers),
			actor.WithMailbox(newMailbox)))
		s.gathers = append(s.gathers, g)
	}
	return s
}

// Search runs job and returns its final response: the final Rank call's result once
// every step answered, every unanswered step is past its deadline, ctx is done, or
// the System closes. It waits no longer than the largest step deadline plus
// scheduling slack. The error is ErrClosed, a wrapped ErrBadJob, or a *PanicError
// when the final Rank call panicked.
func (s *System) Search(ctx context.Context, job *Job) (*registry.SearchResponse, error) {
	se, pid, err := s.submit(ctx, job, nil)
	if err != nil {
		return nil, err
	}
	if cancelled := ctx.Done(); cancelled == nil {
		<-se.done
	} else {
		select {
		case <-se.done:
		case <-cancelled:
			s.root.Send(pid, &cancelSearch{id: se.id, cause: ctx.Err()})
			<-se.done
		}
	}
	resp, err := se.resp, se.err
	se.reset()
	searchPool.Put(se)
	return resp, err
}

// SearchStream runs job like Search but returns a channel of updates: when
// job.Stream is set, a partial one after each arrival that adds hits, then always
// the final one, after which the channel is closed. The channel is buffered for
// every update, so a slow reader never delays the search. The error is ErrClosed or
// a wrapped ErrBadJob.
func (s *System) SearchStream(ctx context.Context, job *Job) (<-chan Update, error) {
	if err := validate(job); err != nil {
		return nil, err
	}
	ch := make(chan Update, len(job.Plan)+1)
	if _, _, err := s.submit(ctx, job, ch); err != nil {
		return nil, err
	}
	return ch, nil
}

// Close ends every search in flight (each gets its final answer, unanswered steps
// TimedOut with ErrClosed), cancels running RetrieveFuncs' contexts, waits for them
// to return, and stops every actor and worker. Later searches fail with ErrClosed.
// Close is idempotent.
func (s *System) Close() {
	s.closeOnce.Do(func() {
		s.state.Or(closedBit)
		for s.state.Load() != closedBit { // submissions in progress never block
			runtime.Gosched()
		}
		var ended sync.WaitGroup
		ended.Add(len(s.gathers))
		for _, g := range s.gathers {
			s.root.Send(g.self, &closeGather{wg: &ended})
		}
		ended.Wait()
		s.cancel() // only now, so that every search ends with ErrClosed
		for _, ws := range s.kinds {
			for _, w := range ws {
				s.root.Stop(w.pid)
			}
		}
		s.retrieversStopped.Wait()
		for _, g := range s.gathers {
			s.root.Stop(g.self)
		}
		s.gathersStopped.Wait()
		s.workers.close()
		s.actors.Shutdown()
	})
}

func validate(job *Job) error {
	switch {
	case job == nil:
		return fmt.Errorf("%w: nil job", ErrBadJob)
	case job.Retrieve == nil:
		return fmt.Errorf("%w: nil Retrieve", ErrBadJob)
	case job.Rank == nil:
		return fmt.Errorf("%w: nil Rank", ErrBadJob)
	}
	for i, st := range job.Plan {
		if st.Kind >= index.NumKinds {
			return fmt.Errorf("%w: step %d: unknown kind %d", ErrBadJob, i, st.Kind)
		}
		if st.Deadline < 0 {
			return fmt.Errorf("%w: step %d: negative deadline", ErrBadJob, i)
		}
	}
	return nil
}

// submit registers a search with a gather actor and sends its steps to the
// retrievers. It never blocks: a step whose retrievers' mailboxes are all full is
// answered at once as overloaded.
func (s *System) submit(ctx context.Context, job *Job, updates chan<- Update) (*search, *actor.PID, error) {
	if err := validate(job); err != nil {
		return nil, nil, err
	}
	if s.state.Add(1)&closedBit != 0 {
		s.state.Add(-1)
		return nil, nil, ErrClosed
	}
	defer s.state.Add(-1)

	id := s.nextID.Add(1)
	g := s.gathers[id%uint64(len(s.gathers))]
	se := searchPool.Get().(*search)
	n := len(job.Plan)
	se.id, se.job, se.updates = id, job, updates
	se.steps = growTo(se.steps, n)
	se.planned = growTo(se.planned, n)
	se.evidence = se.evidence[:0]
	if cap(se.evidence) < n {
		se.evidence = make([]Evidence, 0, n)
	}
	block := make([]retrieval, n)
	se.start = time.Now()
	se.due = se.start
	for i, st := range job.Plan {
		if st.Deadline == 0 {
			st.Deadline = DefaultDeadline(st.Kind)
		}
		deadline := se.start.Add(st.Deadline)
		se.planned[i] = st
		se.steps[i] = stepState{deadline: deadline}
		if deadline.After(se.due) {
			se.due = deadline
		}
		r := &block[i]
		r.ctx.parent, r.ctx.system, r.ctx.deadline = ctx, s.ctx, deadline
		r.search, r.step, r.kind, r.limit = id, i, st.Kind, st.Limit
		r.query, r.allow, r.fn, r.gather = job.Query, job.Allow, job.Retrieve, g.self
	}
	if updates != nil && ctx.Done() != nil {
		root, pid := s.root, g.self
		se.stopWatch = context.AfterFunc(ctx, func() {
			root.Send(pid, &cancelSearch{id: id, cause: ctx.Err()})
		})
	}
	s.root.Send(g.self, se) // from here on the gather actor owns se
	for i := range block {
		s.dispatch(&block[i], g.self)
	}
	return se, g.self, nil
}

// dispatch sends r to a retriever of its kind with room in its mailbox, or answers
// it as overloaded straight to the gather actor.
func (s *System) dispatch(r *retrieval, gather *actor.PID) {
	ws := s.kinds[r.kind]
	first := 0
	if len(ws) > 1 {
		first = int(s.next[r.kind].Add(1) % uint32(len(ws)))
	}
	for i := range ws {
		w := ws[(first+i)%len(ws)]
		if w.queued.Add(1) <= s.mailboxSize {
			s.root.Send(w.pid, r)
			return
		}
		w.queued.Add(-1)
	}
	r.ev = Evidence{Kind: r.kind, Outcome: TimedOut, Err: ErrOverloaded}
	s.root.Send(gather, r)
}

// growTo returns b with length n, reusing its storage when large enough.
func growTo[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}
