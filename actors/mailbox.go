package actors

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// mailbox is an actor.Mailbox with protoactor's default mailbox logic (system
// messages first, suspend/resume, a yield every throughput messages, panics escalated
// to the supervisor) over one mutex-guarded FIFO per message class. Its runs go to the
// System's workerPool, not to the dispatcher protoactor hands it, and allocate nothing.
//
// It grows as needed: retriever mailboxes are bounded by System.dispatch, which admits
// at most Options.MailboxSize requests per retriever, so a send never blocks; gather
// mailboxes take at most a start, one evidence per step and a cancel per search in
// flight, plus timer ticks.
type mailbox struct {
	mu   sync.Mutex // protects user and sys
	user fifo
	sys  fifo

	userN, sysN atomic.Int32 // messages posted and not yet taken
	scheduled   atomic.Bool  // a run is queued or running
	suspended   atomic.Bool

	pool       *workerPool
	throughput int
	invoker    actor.MessageInvoker
	// runner is the worker running the mailbox, nil outside a run or on a goroutine
	// outside the pool. Only that goroutine touches it.
	runner *worker
}

func newMailbox(pool *workerPool, throughput int) *mailbox {
	return &mailbox{pool: pool, throughput: throughput}
}

// PostUserMessage implements actor.Mailbox.
func (m *mailbox) PostUserMessage(msg any) { m.post(msg, nil) }

// post is PostUserMessage from by: nil, or the worker running the sender when this
// post ends the sender's message handling, which then usually runs this mailbox next
// (see workerPool.schedule).
func (m *mailbox) post(msg any, by *worker) {
	if m.push(msg) {
		m.pool.schedule(m, by)
	}
}

// postHelped is PostUserMessage from a Search caller that helps run its search (see
// workerPool.help): it queues the run without waking anyone.
func (m *mailbox) postHelped(msg any) {
	if m.push(msg) {
		m.pool.enqueue(m, 0)
	}
}

// push adds a user message and reports whether the mailbox needs a run queued (it was
// not scheduled, and now is).
func (m *mailbox) push(msg any) bool {
	m.mu.Lock()
	m.user.push(msg)
	m.mu.Unlock()
	m.userN.Add(1)
	return m.scheduled.CompareAndSwap(false, true)
}

// PostSystemMessage implements actor.Mailbox.
func (m *mailbox) PostSystemMessage(msg any) {
	m.mu.Lock()
	m.sys.push(msg)
	m.mu.Unlock()
	m.sysN.Add(1)
	if m.scheduled.CompareAndSwap(false, true) {
		m.pool.schedule(m, nil)
	}
}

// RegisterHandlers implements actor.Mailbox. The dispatcher is not used: runs go to
// the pool.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, _ actor.Dispatcher) {
	m.invoker = invoker
}

// Start implements actor.Mailbox.
func (m *mailbox) Start() {}

// UserMessageCount implements actor.Mailbox.
func (m *mailbox) UserMessageCount() int { return int(m.userN.Load()) }

// process is one run, on worker w (nil outside the pool). It reports whether it handed
// the run back to the queue (only on a caller pseudo-worker: see drain).
func (m *mailbox) process(w *worker) (requeued bool) {
	for {
		m.runner = w
		if !m.drain() {
			m.runner = nil
			m.pool.requeue(m) // still scheduled: a worker runs the rest
			return true
		}
		m.runner = nil
		m.scheduled.Store(false)
		// a message posted after drain returned but before the store above found the
		// mailbox still scheduled and did not schedule it: look again.
		if m.sysN.Load() == 0 && (m.suspended.Load() || m.userN.Load() == 0) {
			return false
		}
		if !m.scheduled.CompareAndSwap(false, true) {
			return false
		}
	}
}

// postWaited is PostUserMessage of a retriever's answer to a search whose caller waits
// in workerPool.help with waiting set: the run is queued for that caller without waking
// anyone, and a worker is woken for it only if the caller stopped waiting meanwhile (the
// caller clears waiting before its last look at the queue, so one of the two takes it).
func (m *mailbox) postWaited(msg any, waiting *atomic.Bool) {
	if m.push(msg) {
		m.pool.enqueue(m, 0)
		if !waiting.Load() {
			m.pool.wake(1)
		}
	}
}

// settle is called before m handles another message or yields: the run its worker
// took on for later (see workerPool.schedule) gets a worker of its own, since this one
// goes on with m.
func (m *mailbox) settle() {
	if w := m.runner; w != nil && w.owed != nil {
		w.pool.settle(w)
	}
}

// next takes the next message to handle: a system one first, then a user one unless
// the mailbox is suspended; nil when there is none. On a caller pseudo-worker (caller)
// it leaves a user message that may not run inline (runsInline) and reports stop: the
// check and the take are one, so that a message posted in between cannot slip in.
func (m *mailbox) next(caller bool) (msg any, system, stop bool) {
	m.mu.Lock()
	if msg = m.sys.pop(); msg != nil {
		system = true
	} else if !m.suspended.Load() {
		if caller && m.user.n > 0 && !runsInline(m.user.buf[m.user.head]) {
			stop = true
		} else {
			msg = m.user.pop()
		}
	}
	m.mu.Unlock()
	return msg, system, stop
}

// drain handles the mailbox's messages until none is left, and reports true; on a caller
// pseudo-worker (see workerPool.help) it stops before a message that may not run inline,
// or after throughput messages, and reports false.
func (m *mailbox) drain() (done bool) {
	var msg any
	done = true
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	caller := m.runner != nil && m.runner.caller
	for i := 0; ; i++ {
		if i > m.throughput {
			if caller {
				return false
			}
			i = 0
			m.settle()
			runtime.Gosched()
		}
		var system, stop bool
		if msg, system, stop = m.next(caller); stop {
			return false
		} else if msg == nil {
			return
		}
		if system {
			m.sysN.Add(-1)
			switch msg.(type) {
			case *actor.SuspendMailbox:
				m.suspended.Store(true)
			case *actor.ResumeMailbox:
				m.suspended.Store(false)
			default:
				m.settle()
				m.invoker.InvokeSystemMessage(msg)
			}
			continue
		}
		m.userN.Add(-1)
		m.settle()
		m.invoker.InvokeUserMessage(msg)
	}
}

// runsInline reports whether a user message may run on a Search caller's goroutine: a
// message of an inline search (see Job.Inline).
func runsInline(msg any) bool {
	switch msg := msg.(type) {
	case *retrieval:
		return msg.se.mode != handOff
	case *search:
		return msg.mode != handOff
	}
	return false
}

// fifo is a growable ring of messages.
type fifo struct {
	buf     []any
	head, n int
}

func (q *fifo) push(msg any) {
	if q.n == len(q.buf) {
		buf := make([]any, max(16, 2*len(q.buf)))
		for i := range q.n {
			buf[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = buf, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = msg
	q.n++
}

func (q *fifo) pop() any {
	if q.n == 0 {
		return nil
	}
	msg := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return msg
}
