package actors

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// mailbox is an actor.Mailbox with protoactor's default mailbox logic (system
// messages first, suspend/resume, a yield every Throughput messages, panics escalated
// to the supervisor) over one mutex-guarded FIFO per message class, and with its run
// function allocated once instead of a closure per wake-up.
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
	scheduled   atomic.Bool  // a run is scheduled or running
	suspended   atomic.Bool

	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
	run        func()
}

func newMailbox() actor.Mailbox {
	m := &mailbox{}
	m.run = m.process
	return m
}

// PostUserMessage implements actor.Mailbox.
func (m *mailbox) PostUserMessage(msg any) {
	m.mu.Lock()
	m.user.push(msg)
	m.mu.Unlock()
	m.userN.Add(1)
	m.schedule()
}

// PostSystemMessage implements actor.Mailbox.
func (m *mailbox) PostSystemMessage(msg any) {
	m.mu.Lock()
	m.sys.push(msg)
	m.mu.Unlock()
	m.sysN.Add(1)
	m.schedule()
}

// RegisterHandlers implements actor.Mailbox.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.invoker, m.dispatcher = invoker, dispatcher
}

// Start implements actor.Mailbox.
func (m *mailbox) Start() {}

// UserMessageCount implements actor.Mailbox.
func (m *mailbox) UserMessageCount() int { return int(m.userN.Load()) }

func (m *mailbox) schedule() {
	if m.scheduled.CompareAndSwap(false, true) {
		m.dispatcher.Schedule(m.run)
	}
}

func (m *mailbox) process() {
	for {
		m.drain()
		m.scheduled.Store(false)
		// a message posted after drain returned but before the store above found the
		// mailbox still scheduled and did not schedule it: look again.
		if m.sysN.Load() == 0 && (m.suspended.Load() || m.userN.Load() == 0) {
			return
		}
		if !m.scheduled.CompareAndSwap(false, true) {
			return
		}
	}
}

func (m *mailbox) pop(q *fifo) any {
	m.mu.Lock()
	msg := q.pop()
	m.mu.Unlock()
	return msg
}

func (m *mailbox) drain() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	t := m.dispatcher.Throughput()
	for i := 0; ; i++ {
		if i > t {
			i = 0
			runtime.Gosched()
		}
		if msg = m.pop(&m.sys); msg != nil {
			m.sysN.Add(-1)
			switch msg.(type) {
			case *actor.SuspendMailbox:
				m.suspended.Store(true)
			case *actor.ResumeMailbox:
				m.suspended.Store(false)
			default:
				m.invoker.InvokeSystemMessage(msg)
			}
			continue
		}
		if m.suspended.Load() {
			return
		}
		if msg = m.pop(&m.user); msg == nil {
			return
		}
		m.userN.Add(-1)
		m.invoker.InvokeUserMessage(msg)
	}
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
