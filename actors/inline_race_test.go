package actors

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// goInvoker is an actor.MessageInvoker that notes when a message of a search not
// marked inline is handled on the goroutine of a Search caller (goroutine id caller).
type goInvoker struct {
	caller  atomic.Uint64
	handled atomic.Int64 // user messages handled on the caller
	wrong   atomic.Int64 // of them, messages of a search not inline
	// onCaller, when set, is called after an inline message handled on the caller
	onCaller func()
}

func (g *goInvoker) InvokeSystemMessage(any) {}
func (g *goInvoker) InvokeUserMessage(m any) {
	if goid() != g.caller.Load() {
		return
	}
	g.handled.Add(1)
	if r, ok := m.(*retrieval); ok && r.se.mode == handOff {
		g.wrong.Add(1)
	} else if g.onCaller != nil {
		g.onCaller()
	}
}
func (g *goInvoker) EscalateFailure(any, any) {}

// TestCallerRunsOnlyInline: a caller pseudo-worker draining a mailbox never handles a
// message of a search that is not inline, even one posted while it drains (when the
// check of the head and its taking were two steps, a message posted into the empty
// mailbox between them was taken and run on the caller).
func TestCallerRunsOnlyInline(t *testing.T) {
	pool := newWorkerPool(2, 4)
	defer pool.close()
	m := newMailbox(pool, throughput)
	var inv goInvoker
	m.RegisterHandlers(&inv, nil)
	inl := &retrieval{se: &search{mode: inline}}
	other := &retrieval{se: &search{}}

	// handled (the round whose inline message the caller handled last) tells the poster
	// to post an ordinary search's request from outside the pool, while the caller is
	// about to look for the mailbox's next message. over: the caller is done with the
	// round (a worker may have taken the inline message instead).
	var cur, handled, over, posted atomic.Int64
	round := make(chan int64)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range round {
			for handled.Load() < i && over.Load() < i {
			}
			if handled.Load() >= i {
				m.PostUserMessage(other)
			}
			posted.Store(i)
		}
	})
	inv.caller.Store(goid())
	inv.onCaller = func() {
		i := cur.Load()
		handled.Store(i)
		for range i % 256 { // let the poster catch up, by varying amounts
			raceSpin.Add(1)
		}
	}
	w := &worker{caller: true, pool: pool}
	never := make(chan struct{}, 1)
	rounds := int64(0)
	for start := time.Now(); time.Since(start) < stressFor() && inv.wrong.Load() == 0; {
		rounds++
		cur.Store(rounds)
		round <- rounds
		m.postHelped(inl)
		pool.help(w, never, 0, nil)
		over.Store(rounds)
		for posted.Load() < rounds || m.scheduled.Load() { // a worker runs the rest
			runtime.Gosched()
		}
	}
	close(round)
	wg.Wait()
	inv.caller.Store(0)
	if n := inv.wrong.Load(); n > 0 {
		t.Fatalf("round %d: %d message(s) of a search not inline ran on the caller", rounds, n)
	}
	t.Logf("%d rounds, %d messages on the caller, all inline", rounds, inv.handled.Load())
}

var raceSpin atomic.Int64

// stressFor is how long the stress tests of this file try to hit a narrow window.
func stressFor() time.Duration {
	if testing.Short() {
		return 500 * time.Millisecond
	}
	return 2 * time.Second
}

// TestOrdinarySearchNeverOnInlineCaller is TestCallerRunsOnlyInline through the
// System: an ordinary search sent while an inline search's caller drains the retriever
// both use has its RetrieveFunc run on that caller.
func TestOrdinarySearchNeverOnInlineCaller(t *testing.T) {
	s := newSystem(t, Options{Gatherers: 1, InlineBelow: time.Hour})
	plan := []Step{{Kind: index.Exact, Deadline: 10 * time.Second}}
	rank := func(g *Gathered) *registry.SearchResponse { return &registry.SearchResponse{SearchMeta: g.Meta()} }
	var handled atomic.Int64
	var wrongOn atomic.Uint64
	caller := goid()
	inlineJob := &Job{Query: &index.Query{}, Plan: plan, Inline: allKinds, Rank: rank,
		Retrieve: func(context.Context, index.Kind, *index.Query, *roaring.Bitmap, int) ([]index.Hit, error) {
			i := handled.Add(1)
			for range i % 2048 { // let the ordinary search's submit catch up, by varying amounts
				raceSpin.Add(1)
			}
			return nil, nil
		}}
	ordinary := &Job{Query: &index.Query{}, Plan: plan, Rank: rank,
		Retrieve: func(context.Context, index.Kind, *index.Query, *roaring.Bitmap, int) ([]index.Hit, error) {
			if goid() == caller {
				wrongOn.Store(caller)
			}
			return nil, nil
		}}
	round := make(chan int64)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range round {
			for handled.Load() < i {
			}
			if _, err := s.Search(context.Background(), ordinary); err != nil {
				t.Error(err)
			}
		}
	})
	rounds := int64(0)
	for start := time.Now(); time.Since(start) < stressFor() && wrongOn.Load() == 0; {
		rounds++
		round <- rounds
		if _, err := s.Search(context.Background(), inlineJob); err != nil {
			t.Fatal(err)
		}
	}
	close(round)
	wg.Wait()
	if wrongOn.Load() != 0 {
		t.Fatalf("round %d: an ordinary search's RetrieveFunc ran on the inline caller's goroutine", rounds)
	}
	t.Logf("%d rounds", rounds)
}

// TestCallerHandsBackOnce: a caller whose only queued run starts with a message it may
// not run hands it back to the queue once and stops helping, rather than take it straight
// back again and again until the worker woken for it gets a processor (on one processor,
// until the spinning caller is preempted).
func TestCallerHandsBackOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	pool := newWorkerPool(1, 4)
	defer pool.close()
	m := newMailbox(pool, throughput)
	var inv goInvoker
	m.RegisterHandlers(&inv, nil)
	inv.caller.Store(goid())
	m.postHelped(&retrieval{se: &search{}}) // of a search not inline: queued, nobody woken
	pool.help(&worker{caller: true, pool: pool}, make(chan struct{}, 1), 0, nil)
	pool.mu.Lock()
	n := pool.requeues
	pool.mu.Unlock()
	for m.scheduled.Load() { // the worker woken for it runs it
		runtime.Gosched()
	}
	if n != 1 || inv.handled.Load() != 0 {
		t.Fatalf("handed back %d times, %d messages handled on the caller", n, inv.handled.Load())
	}
}
