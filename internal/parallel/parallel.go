// Package parallel runs the iterations of a loop on a fixed number of
// goroutines. Which goroutine runs which iteration varies from run to run,
// so callers keep results deterministic by construction: work is split by
// size, never by the number of workers, and each iteration writes its own
// part of the result.
package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers returns n when it is positive, else GOMAXPROCS.
func Workers(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// For calls fn(worker, i) for every i in [0, n) on Workers(workers)
// goroutines; worker in [0, Workers(workers)) names the goroutine, so fn may
// keep per-worker scratch memory indexed by it, never used by two calls at
// once. The first error (or ctx.Err() once ctx is done) stops the start of
// further iterations and is returned after the running ones end.
func For(ctx context.Context, n, workers int, fn func(worker, i int) error) error {
	workers = min(Workers(workers), max(n, 1))
	var (
		next    atomic.Int64
		stopped atomic.Bool
		once    sync.Once
		first   error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		once.Do(func() { first = err })
		stopped.Store(true)
	}
	for w := range workers {
		wg.Go(func() {
			for !stopped.Load() {
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(w, i); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// Each calls fn(i) for every i in [0, n) on GOMAXPROCS goroutines, for work
// that neither fails nor is cancelled (a pass over the planes of a cube,
// each call writing only its own). It returns when every call has.
func Each(n int, fn func(i int)) {
	// The context is never done and fn returns no error, so For returns
	// none.
	_ = For(context.Background(), n, 0, func(_, i int) error {
		fn(i)
		return nil
	})
}
