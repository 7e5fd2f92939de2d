package actors

import "sync"

// workerPool is an actor.Dispatcher that runs mailbox wake-ups on long-lived worker
// goroutines. protoactor's default dispatcher starts a goroutine per wake-up, and its
// deep call chain grows every fresh goroutine's stack; long-lived workers keep their
// grown stacks. A wake-up that finds no idle worker runs on a fresh goroutine instead
// of waiting, so a worker blocked in a slow RetrieveFunc never delays another actor.
type workerPool struct {
	work       chan func() // unbuffered: a send succeeds only when a worker is idle; nil stops a worker
	workers    int
	wg         sync.WaitGroup // counts running workers
	throughput int
}

func newWorkerPool(workers, throughput int) *workerPool {
	p := &workerPool{work: make(chan func()), workers: workers, throughput: throughput}
	p.wg.Add(workers)
	for range workers {
		go p.loop()
	}
	return p
}

func (p *workerPool) loop() {
	defer p.wg.Done()
	for fn := range p.work {
		if fn == nil {
			return
		}
		fn()
	}
}

// Schedule implements actor.Dispatcher.
func (p *workerPool) Schedule(fn func()) {
	select {
	case p.work <- fn:
	default:
		go fn()
	}
}

// Throughput implements actor.Dispatcher: messages a mailbox handles before yielding.
func (p *workerPool) Throughput() int { return p.throughput }

// close stops the workers and waits for them; later wake-ups run on fresh goroutines.
// Call it once no actor runs.
func (p *workerPool) close() {
	for range p.workers {
		p.work <- nil
	}
	p.wg.Wait()
}
