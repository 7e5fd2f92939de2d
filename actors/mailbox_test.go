package actors

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

func TestFIFO(t *testing.T) {
	tests := []struct {
		name       string
		pushes     int
		popsBefore int // pops interleaved before the rest, to wrap the ring
	}{
		{"empty", 0, 0},
		{"below first size", 5, 0},
		{"grows", 100, 0},
		{"wraps then grows", 40, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q fifo
			next, want := 0, 0
			for range tt.popsBefore {
				q.push(next)
				next++
			}
			for range tt.popsBefore / 2 {
				if got := q.pop(); got != want {
					t.Fatalf("pop %v, want %d", got, want)
				}
				want++
			}
			for range tt.pushes {
				q.push(next)
				next++
			}
			for want < next {
				if got := q.pop(); got != want {
					t.Fatalf("pop %v, want %d", got, want)
				}
				want++
			}
			if got := q.pop(); got != nil {
				t.Fatalf("pop of empty: %v", got)
			}
		})
	}
}

// recordInvoker is an actor.MessageInvoker that records user messages.
type recordInvoker struct {
	mu   sync.Mutex
	user []any
	sys  atomic.Int32
}

func (r *recordInvoker) InvokeSystemMessage(any) { r.sys.Add(1) }
func (r *recordInvoker) InvokeUserMessage(m any) {
	r.mu.Lock()
	r.user = append(r.user, m)
	r.mu.Unlock()
}
func (r *recordInvoker) EscalateFailure(any, any) {}

func (r *recordInvoker) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.user)
}

type seqMsg struct{ producer, seq int }

func TestMailboxOrderAndSuspend(t *testing.T) {
	p := newWorkerPool(2, 7) // a small throughput exercises the yield
	defer p.close()
	var inv recordInvoker
	m := newMailbox()
	m.RegisterHandlers(&inv, p)

	const producers, each = 4, 5000
	var wg sync.WaitGroup
	for pr := range producers {
		wg.Go(func() {
			for i := range each {
				m.PostUserMessage(seqMsg{pr, i})
			}
		})
	}
	wg.Wait()
	waitFor(t, func() bool { return inv.count() == producers*each })
	last := make([]int, producers)
	for i := range last {
		last[i] = -1
	}
	for _, msg := range inv.user {
		s := msg.(seqMsg)
		if s.seq != last[s.producer]+1 {
			t.Fatalf("producer %d: got %d after %d", s.producer, s.seq, last[s.producer])
		}
		last[s.producer] = s.seq
	}

	m.PostSystemMessage(&actor.SuspendMailbox{})
	m.PostSystemMessage(&actor.Stop{})
	waitFor(t, func() bool { return inv.sys.Load() == 1 })
	m.PostUserMessage(seqMsg{0, each})
	time.Sleep(10 * time.Millisecond)
	if inv.count() != producers*each {
		t.Fatal("a suspended mailbox delivered a user message")
	}
	if m.UserMessageCount() != 1 {
		t.Fatalf("UserMessageCount %d, want 1", m.UserMessageCount())
	}
	m.PostSystemMessage(&actor.ResumeMailbox{})
	waitFor(t, func() bool { return inv.count() == producers*each+1 })
}

func waitFor(tb testing.TB, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			tb.Fatal("condition not met in 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
