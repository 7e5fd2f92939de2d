package engine

import (
	"context"
	"sync"
	"time"
)

// Semantic retries. A build whose embedder failed (an endpoint down at start, or down when
// a change was indexed) keeps the generation searchable without the semantic retriever:
// its searches answer partial. The engine then builds the same snapshot again after
// Options.SemanticRetry, doubling the wait up to maxSemanticRetry, until a build has the
// vectors or a registry change builds a generation that has them; searches in flight keep
// the generation they loaded.

// defaultSemanticRetry is the first wait when Options.SemanticRetry is 0.
const defaultSemanticRetry = 30 * time.Second

// maxSemanticRetry is the longest wait between two attempts.
const maxSemanticRetry = 10 * time.Minute

// semRetry is the engine's one retry loop: at most one runs, and Close stops it.
type semRetry struct {
	mu      sync.Mutex
	running bool
	quit    chan struct{} // closed by Close
	wg      sync.WaitGroup
}

// watchSemantic starts the retry loop when the generation searched now has no semantic
// vectors, retries are on and none runs. Callers hold reloadMu (every build does).
func (e *Engine) watchSemantic() {
	if e.opts.SemanticRetry < 0 || e.state.Load().gen.SemanticErr() == nil {
		return
	}
	r := &e.semRetry
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running || r.quit == nil {
		return
	}
	select {
	case <-r.quit:
		return // closing
	default:
	}
	r.running = true
	r.wg.Go(e.retrySemantic)
}

// retrySemantic waits, then builds the current snapshot again, until the semantic retriever
// has its vectors or the engine closes.
func (e *Engine) retrySemantic() {
	r := &e.semRetry
	defer func() {
		r.mu.Lock()
		r.running = false
		r.mu.Unlock()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-r.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	wait := e.opts.SemanticRetry
	if wait == 0 {
		wait = defaultSemanticRetry
	}
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if e.retrySemanticOnce(ctx) {
			return
		}
		wait = min(2*wait, maxSemanticRetry)
	}
}

// retrySemanticOnce builds the current snapshot again; it reports whether the generation
// searched now has semantic vectors (this build's, or a change's that came first).
func (e *Engine) retrySemanticOnce(ctx context.Context) bool {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	cur := e.state.Load()
	if cur.gen.SemanticErr() == nil {
		return true
	}
	if err := e.build(ctx, cur.gen.Snapshot(), false, cur); err != nil {
		if ctx.Err() == nil {
			e.log.Warn("semantic retry: rebuilding the generation failed", "err", err)
		}
		return false
	}
	if err := e.state.Load().gen.SemanticErr(); err != nil {
		e.log.Info("semantic retry: the embedder still fails", "embedder", e.embedder.ID(), "err", err)
		return false
	}
	e.log.Info("semantic retry: the semantic retriever has its vectors again", "embedder", e.embedder.ID(),
		"generation", cur.gen.Snapshot().Generation)
	return true
}

// stopSemantic stops the retry loop and waits for it (Close, before the store closes).
func (e *Engine) stopSemantic() {
	r := &e.semRetry
	r.mu.Lock()
	if r.quit != nil {
		close(r.quit)
	}
	r.mu.Unlock()
	r.wg.Wait()
}
