package actors

import (
	"context"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/asynkron/protoactor-go/actor"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// search is one in-flight search. The submitting goroutine fills it and sends it to
// a gather actor, which owns it from then on. A blocking Search's caller reads its
// answer after receiving on done. It is recycled once its owner (the Search caller, or
// the gather actor for a stream) and every retrieval are done with it (refs).
type search struct {
	id    uint64
	job   *Job
	start instant
	refs  atomic.Int32 // the owner plus the retrievals not yet back at the gather actor

	steps    []stepState
	planned  []Step
	reqs     []retrieval
	order    []int // dispatch order of reqs
	answered int
	due      instant // the latest deadline among unanswered steps
	hidx     int     // index in the gather actor's deadline queue, -1 when out

	g        Gathered
	evidence []Evidence
	pending  []index.Kind
	cands    *roaring.Bitmap
	docs     docSet // scratch for merge

	// mode: how a blocking search runs (System.mode); its messages may run on its
	// caller's goroutine (Job.Inline) unless handOff, and its caller then helps run it
	// (workerPool.help).
	mode runMode
	// waiting: the caller of a helped search waits in workerPool.help for runs to take.
	waiting atomic.Bool

	// delivery: exactly one of done (blocking Search) and updates (SearchStream) is used.
	done      chan struct{} // capacity 1; reused
	resp      *registry.SearchResponse
	err       error
	updates   chan<- Update
	stopWatch func() bool // stops the ctx watcher of a stream
}

// IgnoreDeadLetterLogging marks the message as not worth a dead-letter log line.
func (*search) IgnoreDeadLetterLogging() {}

type stepState struct {
	deadline instant
	answered bool
	inTime   bool // answered with an Outcome other than TimedOut
}

var searchPool = sync.Pool{New: func() any {
	return &search{done: make(chan struct{}, 1), cands: roaring.New(), hidx: -1}
}}

// release drops one reference to s; the last one recycles it, keeping only buffers.
func (s *search) release() {
	if s.refs.Add(-1) != 0 {
		return
	}
	clear(s.evidence)
	clear(s.planned)
	clear(s.reqs)
	s.job, s.resp, s.err, s.updates, s.stopWatch = nil, nil, nil, nil, nil
	s.g = Gathered{}
	s.cands.Clear()
	s.hidx = -1
	s.answered = 0
	searchPool.Put(s)
}

// cancelSearch ends a search early because its caller's context is done.
type cancelSearch struct {
	id    uint64
	cause error
}

// IgnoreDeadLetterLogging marks the message as not worth a dead-letter log line.
func (*cancelSearch) IgnoreDeadLetterLogging() {}

// tick is sent by a gather actor's timer.
type tick struct{}

// IgnoreDeadLetterLogging marks the message as not worth a dead-letter log line.
func (*tick) IgnoreDeadLetterLogging() {}

var theTick = &tick{}

// closeGather ends every search of a gather actor (System.Close).
type closeGather struct{ wg *sync.WaitGroup }

// IgnoreDeadLetterLogging marks the message as not worth a dead-letter log line.
func (*closeGather) IgnoreDeadLetterLogging() {}

// gatherer is one long-lived gather actor holding many searches keyed by id.
// All its fields are touched only on the actor, except timer's callback, which only
// sends a tick to self.
type gatherer struct {
	sys      *System
	self     *actor.PID
	mb       *mailbox
	searches map[uint64]*search
	queue    deadlineQueue
	timer    *time.Timer
	armed    bool
	armedAt  instant
	closed   bool
	stopped  *sync.WaitGroup
}

// Receive implements actor.Actor.
func (g *gatherer) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *retrieval:
		g.arrive(m)
	case *search:
		g.begin(m)
	case *tick:
		g.onTick()
	case *cancelSearch:
		if s := g.searches[m.id]; s != nil {
			g.finish(s, m.cause, g.sys.now())
		}
	case *closeGather:
		g.closed = true
		now := g.sys.now()
		for _, s := range g.searches {
			g.finish(s, ErrClosed, now)
		}
		if g.timer != nil {
			g.timer.Stop()
		}
		m.wg.Done()
	case *actor.Stopped:
		g.stopped.Done()
	}
}

func (g *gatherer) begin(s *search) {
	if g.closed {
		g.finish(s, ErrClosed, g.sys.now())
		return
	}
	g.searches[s.id] = s
	if len(s.steps) == 0 {
		g.finish(s, nil, g.sys.now())
		return
	}
	g.queue.push(s)
	g.arm(s.due)
}

// arrive takes one step's Evidence.
func (g *gatherer) arrive(r *retrieval) {
	s := r.se
	defer s.release()
	if g.searches[s.id] != s {
		return // the search already ended: late evidence is dropped
	}
	st := &s.steps[r.step]
	if st.answered {
		return
	}
	st.answered = true
	s.answered++
	ev := r.ev
	r.ev = Evidence{}
	now := r.at // when the retriever answered: this usually runs right after it
	if (ev.Outcome == OK || ev.Outcome == Failed) && now > st.deadline {
		ev.Outcome, ev.Err, ev.Hits = TimedOut, ErrLate, nil
	}
	st.inTime = ev.Outcome != TimedOut
	s.evidence = append(s.evidence, ev)
	if s.answered == len(s.steps) {
		g.finish(s, nil, now)
		return
	}
	var due instant
	for i := range s.steps {
		if !s.steps[i].answered {
			due = max(due, s.steps[i].deadline)
		}
	}
	if due <= now {
		g.finish(s, nil, now)
		return
	}
	if due < s.due {
		s.due = due
		g.queue.fix(s.hidx)
		g.arm(due)
	}
	if s.job.Stream && ev.Outcome == OK {
		g.partial(s, now)
	}
}

// merge sets the candidate bitmap from the evidence: the union of the OK hits'
// documents, keeping the best-ranked MaxCandidates when over the cap. It runs before
// each Rank call rather than per arrival, so a search without partial rankings builds
// the bitmap once.
func (s *search) merge() {
	s.cands.Clear()
	limit := s.job.MaxCandidates
	if limit <= 0 || hitCount(s.evidence) <= limit {
		s.docs.union(s.cands, s.evidence)
		return
	}
	for rank := 0; ; rank++ {
		more := false
		for i := range s.evidence {
			ev := &s.evidence[i]
			if ev.Outcome != OK || rank >= len(ev.Hits) {
				continue
			}
			more = true
			s.cands.Add(ev.Hits[rank].Doc)
			if int(s.cands.GetCardinality()) >= limit {
				return
			}
		}
		if !more {
			return
		}
	}
}

// hitCount is the number of OK hits in evs.
func hitCount(evs []Evidence) int {
	n := 0
	for i := range evs {
		if evs[i].Outcome == OK {
			n += len(evs[i].Hits)
		}
	}
	return n
}

// docSet is scratch memory for building a candidate bitmap, reused across searches.
type docSet struct {
	docs  []uint32
	dense []uint64 // a bitset over document ids, all zero between uses
}

// union adds the documents of the OK hits in evs to b, which must be empty. When the
// largest document is small next to the number of hits, as in any catalogue of up to
// some ten thousand documents, it sets them in a bitset that roaring turns into a
// container at once; otherwise it sorts and dedupes them, since roaring adds ascending
// documents fastest. Either beats adding each retriever's hits as they come.
func (d *docSet) union(b *roaring.Bitmap, evs []Evidence) {
	d.docs = d.docs[:0]
	var top uint32
	for i := range evs {
		if evs[i].Outcome != OK {
			continue
		}
		for _, h := range evs[i].Hits {
			d.docs = append(d.docs, h.Doc)
			top = max(top, h.Doc)
		}
	}
	if len(d.docs) == 0 {
		return
	}
	if words := int(top/64) + 1; words <= 16*len(d.docs)+64 {
		d.dense = growTo(d.dense, words)
		for _, doc := range d.docs {
			d.dense[doc/64] |= 1 << (doc % 64)
		}
		b.FromDense(d.dense, true)
		clear(d.dense)
		return
	}
	slices.Sort(d.docs)
	b.AddMany(slices.Compact(d.docs))
}

// fill prepares s.g for a Rank call.
func (s *search) fill(now instant, final bool) {
	s.merge()
	s.pending = s.pending[:0]
	for i := range s.steps {
		if !s.steps[i].inTime {
			s.pending = append(s.pending, s.planned[i].Kind)
		}
	}
	s.g = Gathered{
		Planned:    s.planned,
		Evidence:   s.evidence,
		Candidates: s.cands,
		Pending:    s.pending,
		Final:      final,
		Elapsed:    time.Duration(now - s.start),
	}
}

func (g *gatherer) partial(s *search, now instant) {
	s.fill(now, false)
	resp, err := rank(s)
	if resp == nil || err != nil {
		return
	}
	select {
	case s.updates <- Update{Response: resp}:
	default: // cannot happen: the channel has room for every update
	}
}

// finish ends s at now: unanswered steps become TimedOut Evidence (Err cause, or
// context.DeadlineExceeded), Rank runs with Final set, and the answer is delivered.
func (g *gatherer) finish(s *search, cause error, now instant) {
	delete(g.searches, s.id)
	if s.hidx >= 0 {
		g.queue.remove(s.hidx)
	}
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	for i := range s.steps {
		if !s.steps[i].answered {
			s.evidence = append(s.evidence, Evidence{Kind: s.planned[i].Kind, Outcome: TimedOut, Err: cause})
		}
	}
	s.fill(now, true)
	resp, err := rank(s)
	if s.updates == nil {
		s.resp, s.err = resp, err
		s.done <- struct{}{}
		return
	}
	select {
	case s.updates <- Update{Response: resp, Final: true, Err: err}:
	default: // cannot happen: the channel has room for every update
	}
	close(s.updates)
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.release()
}

// rank calls the Job's RankFunc, recovering a panic.
func rank(s *search) (resp *registry.SearchResponse, err error) {
	defer func() {
		if v := recover(); v != nil {
			resp, err = nil, &PanicError{Where: "rank", Value: v, Stack: debug.Stack()}
		}
	}()
	return s.job.Rank(&s.g), nil
}

// arm makes the timer fire no later than at.
func (g *gatherer) arm(at instant) {
	if g.armed && at >= g.armedAt {
		return
	}
	d := time.Duration(at - g.sys.now())
	if g.timer == nil {
		self, root := g.self, g.sys.root
		g.timer = time.AfterFunc(d, func() { root.Send(self, theTick) })
	} else {
		g.timer.Reset(d)
	}
	g.armed, g.armedAt = true, at
}

func (g *gatherer) onTick() {
	g.armed = false
	if g.closed {
		return
	}
	now := g.sys.now()
	for len(g.queue) > 0 && g.queue[0].due <= now {
		g.finish(g.queue[0], nil, now)
	}
	if len(g.queue) > 0 {
		g.arm(g.queue[0].due)
	}
}

// deadlineQueue is a min-heap of searches by due time; search.hidx is each one's index.
type deadlineQueue []*search

func (q *deadlineQueue) push(s *search) {
	s.hidx = len(*q)
	*q = append(*q, s)
	q.up(s.hidx)
}

func (q *deadlineQueue) remove(i int) {
	h := *q
	n := len(h) - 1
	h[i].hidx = -1
	if i != n {
		h[i] = h[n]
		h[i].hidx = i
	}
	h[n] = nil
	*q = h[:n]
	if i != n {
		q.fix(i)
	}
}

func (q deadlineQueue) fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

func (q deadlineQueue) less(i, j int) bool { return q[i].due < q[j].due }

func (q deadlineQueue) swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].hidx, q[j].hidx = i, j
}

func (q deadlineQueue) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !q.less(j, i) {
			break
		}
		q.swap(i, j)
		j = i
	}
}

func (q deadlineQueue) down(i0 int) bool {
	i, n := i0, len(q)
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if r := j + 1; r < n && q.less(r, j) {
			j = r
		}
		if !q.less(j, i) {
			break
		}
		q.swap(i, j)
		i = j
	}
	return i > i0
}
