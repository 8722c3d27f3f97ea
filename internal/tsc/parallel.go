package tsc

import (
	"context"
	"fmt"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/parallel"
)

// batchSize returns the number of patches per batch of encodeAll: about
// 2¹⁵ code coefficients (R·K each), between 32 and 256 patches. It depends
// on the geometry only, never on the number of threads, so that encodeAll
// gives the same result whatever that number.
func (e *Encoder) batchSize() int {
	return min(256, max(32, (1<<15)/(e.r*e.k)))
}

// encodeAll codes the patches x (M×N×K, any N) into b (R×N×K) as Encode
// does, over consecutive batches of batchSize patches shared among threads
// goroutines (threads ≤ 0: GOMAXPROCS), each with its own workspace. The
// batches do not depend on threads, so neither does the result, bit for
// bit. Once ctx is done it starts no further batch and the codes of the
// batches not started are left as they were; the caller checks ctx.Err().
// It returns the largest number of iterations done by a patch, and panics
// if the sizes do not fit the encoder.
func (e *Encoder) encodeAll(ctx context.Context, b, x *tproduct.Tensor, warm bool, threads int) (iterations int) {
	if x.M != e.m || x.K != e.k || b.M != e.r || b.K != e.k || b.N != x.N {
		panic(fmt.Sprintf("tsc: encodeAll: patches %d×%d×%d and codes %d×%d×%d for a %d×%d×%d dictionary",
			x.M, x.N, x.K, b.M, b.N, b.K, e.m, e.r, e.k))
	}
	size := e.batchSize()
	batches := (x.N + size - 1) / size
	workers := min(parallel.Workers(threads), batches)
	done := make([]int, workers)
	spaces := make([]*Workspace, workers)
	// The only error For can return is ctx's, which the caller checks.
	_ = parallel.For(ctx, batches, workers, func(w, i int) error {
		if spaces[w] == nil {
			spaces[w] = e.NewWorkspace(size)
		}
		j0, j1 := i*size, min(x.N, (i+1)*size)
		done[w] = max(done[w], e.Encode(spaces[w], b.Slice(j0, j1), x.Slice(j0, j1), warm))
		return nil
	})
	for _, d := range done {
		iterations = max(iterations, d)
	}
	return iterations
}
