package actors

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
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
	expect      [index.NumKinds]atomic.Int64  // recent mean run time per kind, ns
	mailboxSize int32
	inlineBelow int64 // Options.InlineBelow in ns; 0: never inline
	gathers     []*gatherer

	nextID   atomic.Uint64
	blocking atomic.Int32 // Search calls in progress (see System.mode)
	state    atomic.Int64 // closedBit | submissions in progress

	ctx    context.Context // cancelled by Close; bounds every RetrieveFunc
	cancel context.CancelFunc
	epoch  time.Time // instants count from here

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
	switch {
	case opts.InlineBelow == 0:
		opts.InlineBelow = 40 * time.Microsecond
	case opts.InlineBelow < 0:
		opts.InlineBelow = 0
	}
	s := &System{
		inlineBelow: int64(opts.InlineBelow),
		mailboxSize: int32(min(opts.MailboxSize, 1<<30)),
		workers:     newWorkerPool(procs, opts.Workers),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.epoch = time.Now()
	protoLog := log.With("lib", "protoactor")
	s.actors = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return protoLog }))
	s.root = s.actors.Root

	for k := range index.NumKinds {
		for range opts.PerKind {
			w := &retriever{kind: k, sys: s, mb: newMailbox(s.workers, throughput), stopped: &s.retrieversStopped, log: log}
			s.retrieversStopped.Add(1)
			w.pid = s.spawn(w, w.mb)
			s.kinds[k] = append(s.kinds[k], w)
		}
	}
	for range opts.Gatherers {
		g := &gatherer{sys: s, mb: newMailbox(s.workers, throughput), searches: make(map[uint64]*search), stopped: &s.gathersStopped}
		s.gathersStopped.Add(1)
		g.self = s.spawn(g, g.mb)
		s.gathers = append(s.gathers, g)
	}
	return s
}

// spawn starts an actor that is its producer's only product, on mailbox mb.
func (s *System) spawn(a actor.Actor, mb *mailbox) *actor.PID {
	return s.root.Spawn(actor.PropsFromProducer(func() actor.Actor { return a },
		actor.WithMailbox(func() actor.Mailbox { return mb })))
}

// Search runs job and returns its final response: the final Rank call's result once
// every step answered, every unanswered step is past its deadline, ctx is done, or
// the System closes. It waits no longer than the largest step deadline plus
// scheduling slack (for an inline search, plus however long a step it runs itself takes
// past its deadline: see Job.Inline). The error is ErrClosed, a wrapped ErrBadJob, or a
// *PanicError when the final Rank call panicked.
func (s *System) Search(ctx context.Context, job *Job) (*registry.SearchResponse, error) {
	s.blocking.Add(1)
	defer s.blocking.Add(-1)
	se, pid, err := s.submit(ctx, job, nil)
	if err != nil {
		return nil, err
	}
	if se.mode != handOff { // lend this goroutine to the actors until the answer is ready
		wait := time.Duration(0)
		if se.mode == helped {
			s.workers.wake(s.workers.procs)
			wait = helpedWait
		}
		w := callerPool.Get().(*worker)
		w.pool = s.workers
		s.workers.help(w, se.done, wait, &se.waiting)
		callerPool.Put(w)
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
	se.release()
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
	se.mode = handOff
	if updates == nil {
		se.mode = s.mode(job)
	}
	se.refs.Store(int32(n) + 1)
	se.steps = growTo(se.steps, n)
	se.planned = growTo(se.planned, n)
	se.reqs = growTo(se.reqs, n)
	se.evidence = se.evidence[:0]
	if cap(se.evidence) < n {
		se.evidence = make([]Evidence, 0, n)
	}
	ctxs := make([]stepCtx, n)
	se.start = s.now()
	se.due = se.start
	for i, st := range job.Plan {
		if st.Deadline == 0 {
			st.Deadline = DefaultDeadline(st.Kind)
		}
		deadline := se.start + instant(st.Deadline)
		se.planned[i] = st
		se.steps[i] = stepState{deadline: deadline}
		se.due = max(se.due, deadline)
		c := &ctxs[i]
		c.parent, c.sys, c.deadline = ctx, s, deadline
		se.reqs[i] = retrieval{se: se, step: i, kind: st.Kind, limit: st.Limit,
			query: job.Query, allow: job.Allow, fn: job.Retrieve, gather: g, ctx: c}
	}
	if updates != nil && ctx.Done() != nil {
		root, pid := s.root, g.self
		se.stopWatch = context.AfterFunc(ctx, func() {
			root.Send(pid, &cancelSearch{id: id, cause: ctx.Err()})
		})
	}
	// From the Send on, the gather actor owns se; reqs and order are still ours to
	// read, since nothing changes them before every retrieval is back.
	reqs, order, inline := se.reqs, s.longestFirst(se), se.mode != handOff
	if inline {
		g.mb.postHelped(se)
	} else {
		s.root.Send(g.self, se)
	}
	for _, i := range order {
		s.dispatch(&reqs[i], inline)
	}
	return se, g.self, nil
}

// runMode is how a blocking search runs.
type runMode uint8

const (
	// handOff: the caller queues the search's runs, wakes workers for them and waits.
	handOff runMode = iota
	// inline: the caller queues the runs without waking anyone and runs them itself.
	inline
	// helped: the caller queues the runs, wakes workers for the other processors and
	// runs runs itself meanwhile; then it waits for its answer a moment before parking.
	helped
)

// helpedWait is how long the caller of a helped search keeps watching for runs to take
// (its gather actor's, when a worker's retriever answers) once none is queued, before it
// parks: about a retriever's run on a catalogue of 10,000. Taking the gather actor's run
// lets the caller rank its search itself, where waking it for the answer costs about 9
// µs on the benchmarks' VM. In interleaved runs against 100 µs, 40 µs gave seal_tools
// p50 ×0.81-0.84 of handing off (×0.89 at 100 µs) and 10-17% less CPU, and the 10k
// catalogue ×1.00-1.01 (×0.98-1.00) with 3% more CPU (6%).
const helpedWait = 40 * time.Microsecond

// mode says how a blocking search of job runs (see Job.Inline). Every planned kind must
// be marked to run anywhere but on workers. The search then runs inline when the
// expected run times of its kinds (System.expect) beside the longest one sum to less than
// Options.InlineBelow: a second processor would take over less work than waking it
// costs. Otherwise it is helped when the job says it is alone (Job.Alone), it is the
// only Search in progress, and there is more than one processor: its caller starts on
// the runs at once, where handing them off would cost two goroutine wake-ups (about 12
// µs to the first retriever call and 9 µs back to the caller on the benchmarks' VM),
// while the woken workers take the rest on the other processors. With other searches
// in progress the workers hand off, so that no caller holds a processor the others'
// runs could use.
func (s *System) mode(job *Job) runMode {
	if job.Inline == 0 || s.inlineBelow == 0 {
		return handOff
	}
	var sum, longest int64
	for _, st := range job.Plan {
		if job.Inline&(1<<st.Kind) == 0 {
			return handOff
		}
		t := s.expect[st.Kind].Load()
		sum += t
		longest = max(longest, t)
	}
	switch {
	case sum-longest < s.inlineBelow:
		return inline
	case job.Alone && s.workers.procs > 1 && s.blocking.Load() == 1:
		return helped
	}
	return handOff
}

// longestFirst orders se's steps by their kinds' expected run time, longest first (in
// plan order when equal). Sent in this order, they are started in it (the pool's queue
// is first in, first out), so the slowest retrievers of a search start first and the
// short ones fill in around them.
func (s *System) longestFirst(se *search) []int {
	order := se.order[:0]
	for i := range se.reqs {
		t := s.expect[se.reqs[i].kind].Load()
		j := len(order) // insertion sort: a plan has a handful of steps
		for j > 0 && s.expect[se.reqs[order[j-1]].kind].Load() < t {
			j--
		}
		order = slices.Insert(order, j, i)
	}
	se.order = order
	return order
}

// dispatch sends r to a retriever of its kind with room in its mailbox, or answers
// it as overloaded straight to the gather actor. helped: the caller helps run it.
func (s *System) dispatch(r *retrieval, helped bool) {
	ws := s.kinds[r.kind]
	first := 0
	if len(ws) > 1 {
		first = int(s.next[r.kind].Add(1) % uint32(len(ws)))
	}
	for i := range ws {
		w := ws[(first+i)%len(ws)]
		if w.queued.Add(1) <= s.mailboxSize {
			if helped {
				w.mb.postHelped(r)
			} else {
				s.root.Send(w.pid, r)
			}
			return
		}
		w.queued.Add(-1)
	}
	r.ev, r.at = Evidence{Kind: r.kind, Outcome: TimedOut, Err: ErrOverloaded}, r.se.start
	s.root.Send(r.gather.self, r)
}

// instant is a point in time in nanoseconds since the System started, read from the
// monotonic clock alone: half the cost of time.Now, which reads the wall clock too, and
// a search reads the clock a few times per step.
type instant int64

func (s *System) now() instant { return instant(time.Since(s.epoch)) }

// wall is i as a time.Time.
func (s *System) wall(i instant) time.Time { return s.epoch.Add(time.Duration(i)) }

// growTo returns b with length n, reusing its storage when large enough.
func growTo[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}
