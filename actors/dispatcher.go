package actors

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// workerPool runs mailbox wake-ups ("runs") on long-lived worker goroutines, which keep
// the stacks that protoactor's deep call chain grows.
//
// A search is a burst of short runs on a few actors, so the pool spends as few
// goroutine hand-offs as it can on each (a hand-off costs more than a gather step):
//
//   - Scheduled mailboxes wait in one first-in first-out queue, and a worker that
//     finishes a run takes the next queued one itself before parking.
//   - Parked workers are woken lazily: a post from outside the pool wakes one only
//     while fewer than procs are already on their way to the queue (enough to use every
//     processor), and a woken worker that leaves work queued wakes the next one before
//     starting its own run. So a queued run always has a worker on its way that no
//     RetrieveFunc can hold up: a worker blocked in a slow RetrieveFunc never delays
//     another actor, and when no worker is parked a fresh one is started.
//   - A worker may queue a run without waking anyone when it is about to come back to
//     the queue itself, and then takes that run first: a retriever answering its gather
//     actor lets the same goroutine run the gather actor next.
//   - A Search caller whose search runs on it (System.mode: inline or helped) queues its
//     runs without waking anyone (a helped search's caller then wakes workers for the
//     other processors: wake) and works as a worker itself (help) until its answer is
//     ready, the queue is empty or it meets a message of a search that may not run on
//     it, which it hands back; on its way out it wakes workers for whatever is left, as
//     a post from outside would have.
type workerPool struct {
	mu     sync.Mutex
	queue  []*mailbox // scheduled mailboxes, oldest first; each at most once
	idle   []*worker  // parked workers, the most recently parked last
	coming int        // workers woken or started and not yet at the queue, plus owed runs
	closed bool

	requeues int // runs a caller pseudo-worker handed back (tests read it)

	posts atomic.Uint64 // runs ever queued: a helping caller watches it without the lock

	procs   int // posts from outside the pool keep up to procs workers coming
	maxIdle int // workers parked at once; more exit
	wg      sync.WaitGroup
}

// worker is one pool goroutine.
type worker struct {
	pool *workerPool
	wake chan struct{} // capacity 1: sent once per wake-up
	// owed is the run this worker queued for itself during its current run (see
	// schedule): it takes it when the run ends, or wakes a worker if the run goes on.
	owed *mailbox
	// caller marks a Search caller lending its goroutine (see help): it runs only
	// messages of inline searches and never parks in the pool.
	caller bool
}

var callerPool = sync.Pool{New: func() any { return &worker{caller: true} }}

func newWorkerPool(procs, maxIdle int) *workerPool {
	return &workerPool{procs: max(1, procs), maxIdle: maxIdle}
}

// schedule queues a run of m. by is nil, or the worker whose current message ends
// with this post (a retriever's answer): nobody is woken then, and by takes the run
// itself when its own run ends, or wakes a worker for it first if its run goes on with
// another message (settle).
func (p *workerPool) schedule(m *mailbox, by *worker) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		go m.process(nil) // Close is done with the workers: run on a fresh goroutine
		return
	}
	p.queue = append(p.queue, m)
	p.posts.Add(1)
	if by != nil && by.owed == nil {
		p.coming++
		by.owed = m
	} else {
		p.wakeForQueue(p.procs)
	}
	p.mu.Unlock()
}

// enqueue queues a run of m and wakes or starts workers until min(wake, queued runs) are
// coming (nobody for wake 0). Once the pool is closed it runs m on a fresh goroutine.
func (p *workerPool) enqueue(m *mailbox, wake int) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		go m.process(nil)
		return
	}
	p.queue = append(p.queue, m)
	p.posts.Add(1)
	if wake > 0 {
		p.wakeForQueue(wake)
	}
	p.mu.Unlock()
}

// wake wakes or starts workers until min(n, queued runs) are coming. Go queues a
// goroutine woken from a running one to run next on the waker's processor, where no
// other processor takes it at once, and moves the one queued there before to the
// processor's ordinary run queue, which an idle processor woken meanwhile takes from: so
// waking n workers sets n-1 of them to work beside a caller that stays busy.
func (p *workerPool) wake(n int) {
	p.mu.Lock()
	for range n {
		p.wakeForQueue(n)
	}
	p.mu.Unlock()
}

// help runs queued runs on the calling goroutine, as the caller pseudo-worker w, until
// done holds a value (the caller's answer is ready), none is queued, or it hands a run
// back: a run whose next message may not run on the caller goes back to the queue for a
// worker (see mailbox.drain), and the caller stops rather than take it straight back.
// With wait > 0 an empty queue does not end it at once: for up to wait the caller
// watches for more runs and takes them, with waiting set meanwhile so that a worker's
// retriever answering the caller's search queues the gather actor's run for the caller
// (mailbox.postWaited) rather than running it itself: the caller then ranks its search
// on its own goroutine instead of being woken for the answer. On the way out every
// queued run gets a worker on its way, as schedule would have given it.
func (p *workerPool) help(w *worker, done chan struct{}, wait time.Duration, waiting *atomic.Bool) {
	var since time.Time // when the queue was first found empty
	p.mu.Lock()
	for len(done) == 0 {
		m := p.take(w)
		if m == nil {
			if wait <= 0 {
				break
			}
			if since.IsZero() {
				since = time.Now()
				waiting.Store(true)
			} else if time.Since(since) >= wait {
				if waiting.Load() {
					// one more look: a run queued for this caller before the store is
					// in the queue now; one queued after it gets a worker (postWaited)
					waiting.Store(false)
					continue
				}
				break
			}
			seen := p.posts.Load()
			p.mu.Unlock()
			for p.posts.Load() == seen && len(done) == 0 && time.Since(since) < wait {
				runtime.Gosched()
			}
			p.mu.Lock()
			continue
		}
		p.mu.Unlock()
		requeued := m.process(w)
		p.mu.Lock()
		if requeued {
			// m waits for the worker requeue woke: taking it straight back would spin
			// until that worker gets a processor
			break
		}
	}
	if waiting != nil {
		waiting.Store(false) // before the wake-ups below: see postWaited
	}
	if w.owed != nil { // still queued: answered after done (the answer was ready)
		p.coming--
		w.owed = nil
	}
	p.wakeForQueue(p.procs)
	p.mu.Unlock()
}

// requeue hands a run back to the queue for a worker: its caller pseudo-worker met a
// message it may not run.
func (p *workerPool) requeue(m *mailbox) {
	p.mu.Lock()
	p.requeues++
	p.mu.Unlock()
	p.enqueue(m, p.procs)
}

// settle gives the run w owes to another worker: w's run goes on with another message,
// which may take long.
func (p *workerPool) settle(w *worker) {
	p.mu.Lock()
	p.coming--
	w.owed = nil
	p.wakeForQueue(1)
	p.mu.Unlock()
}

// wakeForQueue wakes or starts one worker if fewer than min(limit, queued runs) are
// coming. Called with p.mu held.
func (p *workerPool) wakeForQueue(limit int) {
	if p.coming >= min(limit, len(p.queue)) {
		return
	}
	p.coming++
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		w.wake <- struct{}{}
		return
	}
	w := &worker{pool: p, wake: make(chan struct{}, 1)}
	p.wg.Add(1)
	go w.loop()
}

// take dequeues the run for w: the one it owes if still queued, else the oldest; nil
// when none is queued. Called with p.mu held.
func (p *workerPool) take(w *worker) *mailbox {
	if m := w.owed; m != nil {
		w.owed = nil
		p.coming--
		if i := slices.Index(p.queue, m); i >= 0 {
			p.queue = slices.Delete(p.queue, i, i+1)
			return m
		}
	}
	if len(p.queue) == 0 {
		return nil
	}
	m := p.queue[0]
	p.queue = slices.Delete(p.queue, 0, 1)
	return m
}

// loop runs queued mailboxes until the pool closes. A worker starts counted in coming.
func (w *worker) loop() {
	p := w.pool
	defer p.wg.Done()
	p.mu.Lock()
	for {
		p.coming-- // at the queue now
		for m := p.take(w); m != nil; m = p.take(w) {
			p.wakeForQueue(1) // before m, which may block
			p.mu.Unlock()
			m.process(w)
			p.mu.Lock()
		}
		if p.closed || len(p.idle) >= p.maxIdle {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		<-w.wake
		p.mu.Lock()
		if p.closed && len(p.queue) == 0 {
			p.coming--
			p.mu.Unlock()
			return
		}
	}
}

// close stops the workers once no run is queued and waits for them; later runs go to
// fresh goroutines. Call it once no actor runs.
func (p *workerPool) close() {
	p.mu.Lock()
	p.closed = true
	for _, w := range p.idle {
		p.coming++
		w.wake <- struct{}{}
	}
	p.idle = nil
	p.mu.Unlock()
	p.wg.Wait()
}
