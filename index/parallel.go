package index

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelFor calls fn(i) for every i in [lo, hi) on up to GOMAXPROCS goroutines, in
// batches of 16 consecutive indexes. It stops early when ctx is done or fn panics, and
// returns ctx's error or the panic as an error. fn must be safe for concurrent calls on
// different indexes.
func parallelFor(ctx context.Context, lo, hi int, fn func(i int)) (err error) {
	const batch = 16
	workers := min(runtime.GOMAXPROCS(0), (hi-lo+batch-1)/batch)
	if workers <= 1 {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("index: build panicked: %v", p)
			}
		}()
		for i := lo; i < hi; i++ {
			if (i-lo)&255 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			fn(i)
		}
		return nil
	}
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		stop    atomic.Bool
	)
	next.Store(int64(lo))
	for range workers {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errOnce.Do(func() { err = fmt.Errorf("index: build panicked: %v", p) })
					stop.Store(true)
				}
			}()
			for !stop.Load() {
				if e := ctx.Err(); e != nil {
					errOnce.Do(func() { err = e })
					stop.Store(true)
					return
				}
				start := int(next.Add(batch)) - batch
				if start >= hi {
					return
				}
				for i := start; i < min(start+batch, hi); i++ {
					fn(i)
				}
			}
		})
	}
	wg.Wait()
	return err
}
