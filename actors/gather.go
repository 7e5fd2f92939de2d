package actors

import (
	"context"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/asynkron/protoactor-go/actor"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// search is one in-flight search. The submitting goroutine fills it and sends it to
// a gather actor, which owns it from then on. A blocking Search's caller takes it
// back after receiving on done; a stream's search is recycled by the gather actor.
type search struct {
	id    uint64
	job   *Job
	start time.Time

	steps    []stepState
	planned  []Step
	answered int
	due      time.Time // the latest deadline among unanswered steps
	hidx     int       // index in the gather actor's deadline queue, -1 when out

	g        Gathered
	evidence []Evidence
	pending  []index.Kind
	cands    *roaring.Bitmap
	docs     []uint32 // scratch for unionHits

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
	deadline time.Time
	answered bool
	inTime   bool // answered with an Outcome other than TimedOut
}

var searchPool = sync.Pool{New: func() any {
	return &search{done: make(chan struct{}, 1), cands: roaring.New(), hidx: -1}
}}

// reset drops references so a pooled search keeps only its buffers.
func (s *search) reset() {
	clear(s.evidence)
	clear(s.planned)
	s.job, s.resp, s.err, s.updates, s.stopWatch = nil, nil, nil, nil, nil
	s.g = Gathered{}
	s.cands.Clear()
	s.hidx = -1
	s.answered = 0
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
	searches map[uint64]*search
	queue    deadlineQueue
	timer    *time.Timer
	armed    bool
	armedAt  time.Time
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
			g.finish(s, m.cause)
		}
	case *closeGather:
		g.closed = true
		for _, s := range g.searches {
			g.finish(s, ErrClosed)
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
		g.finish(s, ErrClosed)
		return
	}
	g.searches[s.id] = s
	if len(s.steps) == 0 {
		g.finish(s, nil)
		return
	}
	g.queue.push(s)
	g.arm(s.due)
}

// arrive takes one step's Evidence.
func (g *gatherer) arrive(r *retrieval) {
	s := g.searches[r.search]
	if s == nil {
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
	now := time.Now()
	if (ev.Outcome == OK || ev.Outcome == Failed) && now.After(st.deadline) {
		ev.Outcome, ev.Err, ev.Hits = TimedOut, ErrLate, nil
	}
	st.inTime = ev.Outcome != TimedOut
	s.evidence = append(s.evidence, ev)
	if ev.Outcome == OK {
		s.addCandidates(ev.Hits)
	}
	if s.answered == len(s.steps) {
		g.finish(s, nil)
		return
	}
	var due time.Time
	for i := range s.steps {
		if !s.steps[i].answered && s.steps[i].deadline.After(due) {
			due = s.steps[i].deadline
		}
	}
	if !due.After(now) {
		g.finish(s, nil)
		return
	}
	if due.Before(s.due) {
		s.due = due
		g.queue.fix(s.hidx)
		g.arm(due)
	}
	if s.job.Stream && ev.Outcome == OK {
		g.partial(s, now)
	}
}

// addCandidates unions hits into the candidate bitmap, keeping the best-ranked
// MaxCandidates documents when over the cap.
func (s *search) addCandidates(hits []index.Hit) {
	limit := s.job.MaxCandidates
	if limit <= 0 || int(s.cands.GetCardinality())+len(hits) <= limit {
		s.docs = unionHits(s.cands, s.docs, hits)
		return
	}
	s.cands.Clear()
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

// unionHits adds the hits' documents to b, using buf (returned for reuse) to add
// them in ascending order, which roaring handles fastest.
func unionHits(b *roaring.Bitmap, buf []uint32, hits []index.Hit) []uint32 {
	buf = buf[:0]
	for i := range hits {
		buf = append(buf, hits[i].Doc)
	}
	slices.Sort(buf)
	b.AddMany(buf)
	return buf
}

// fill prepares s.g for a Rank call.
func (s *search) fill(now time.Time, final bool) {
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
		Elapsed:    now.Sub(s.start),
	}
}

func (g *gatherer) partial(s *search, now time.Time) {
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

// finish ends s: unanswered steps become TimedOut Evidence (Err cause, or
// context.DeadlineExceeded), Rank runs with Final set, and the answer is delivered.
func (g *gatherer) finish(s *search, cause error) {
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
	s.fill(time.Now(), true)
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
	s.reset()
	searchPool.Put(s)
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
func (g *gatherer) arm(at time.Time) {
	if g.armed && !at.Before(g.armedAt) {
		return
	}
	d := time.Until(at)
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
	now := time.Now()
	for len(g.queue) > 0 && !g.queue[0].due.After(now) {
		g.finish(g.queue[0], nil)
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

func (q deadlineQueue) less(i, j int) bool { return q[i].due.Before(q[j].due) }

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
