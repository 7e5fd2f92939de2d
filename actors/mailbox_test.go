package actors

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/asynkron/protoactor-go/actor"

	"github.com/capdex/capdex/index"
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
	p := newWorkerPool(2, 4)
	defer p.close()
	var inv recordInvoker
	m := newMailbox(p, 7) // a small throughput exercises the yield
	m.RegisterHandlers(&inv, nil)

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

func TestTakeOwedFirst(t *testing.T) {
	p := newWorkerPool(1, 1)
	defer p.close()
	a, b, c := newMailbox(p, 1), newMailbox(p, 1), newMailbox(p, 1)
	w := &worker{pool: p}
	p.mu.Lock() // keep the pool's workers off the queue
	defer p.mu.Unlock()
	p.queue = []*mailbox{a, b, c}
	w.owed, p.coming = c, 1
	for i, want := range []*mailbox{c, a, b, nil} {
		if got := p.take(w); got != want {
			t.Fatalf("take %d: got %p, want %p", i, got, want)
		}
	}
	w.owed, p.coming = a, 1 // already taken by another worker
	p.queue = []*mailbox{b}
	if got := p.take(w); got != b || w.owed != nil || p.coming != 0 {
		t.Fatalf("owed run gone: took %p (want %p), owed %p, coming %d", got, b, w.owed, p.coming)
	}
}

func TestDocSetUnion(t *testing.T) {
	hit := func(docs ...uint32) Evidence {
		ev := Evidence{Kind: index.Lexical}
		for _, d := range docs {
			ev.Hits = append(ev.Hits, index.Hit{Doc: d})
		}
		return ev
	}
	failed := hit(5)
	failed.Outcome = Failed
	var spread, spreadDocs []uint32 // 101 documents over two roaring chunks
	for i := range uint32(101) {
		spread = append(spread, 70000-i*700)
		spreadDocs = append(spreadDocs, i*700)
	}
	tests := []struct {
		name   string
		evs    []Evidence
		want   []uint32
		bitset bool
	}{
		{"none", nil, nil, false},
		{"no hits", []Evidence{hit()}, nil, false},
		{"small ids, overlapping", []Evidence{hit(9, 3, 64, 0), hit(3, 200, 9)}, []uint32{0, 3, 9, 64, 200}, true},
		{"two roaring chunks", []Evidence{hit(spread[:60]...), hit(spread[40:]...)}, spreadDocs, true},
		{"sparse large ids", []Evidence{hit(1<<30, 7, 1<<31+5), hit(7, 1<<30)}, []uint32{7, 1 << 30, 1<<31 + 5}, false},
		{"failed evidence ignored", []Evidence{hit(4), failed}, []uint32{4}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d docSet
			for range 2 { // the second run finds the scratch of the first
				b := roaring.New()
				d.union(b, tt.evs)
				if got := b.ToArray(); !slices.Equal(got, tt.want) {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
				if i := slices.IndexFunc(d.dense, func(w uint64) bool { return w != 0 }); i >= 0 {
					t.Fatalf("bitset word %d left set", i)
				}
			}
			if used := len(d.dense) > 0; used != tt.bitset {
				t.Errorf("bitset used: %v, want %v", used, tt.bitset)
			}
		})
	}
}
