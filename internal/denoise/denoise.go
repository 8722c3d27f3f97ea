// Package denoise joins the patch grid and the 2DSC solver into the
// denoising pipeline of tdsc: learn a dictionary from patches of the noisy
// cube (or take one), code every overlapping patch, and average the
// reconstructions back into a cube.
//
// Patches are p×p pixels × q bands, cut as (p²)×1×q tensors with their mean
// removed (package patch); the dictionary has (p²)×1×q atoms (package tsc).
// Coding streams the patches in fixed-size batches through one workspace per
// worker into a per-voxel sum, so memory is bounded by the cube, the sums and
// batch size × workers, never by the number of patches. The batches are the
// same whatever the number of workers and the aggregation order is fixed
// (patch.Grid.ForEachBatch), so the output is bit-identical for every
// thread count.
package denoise

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"tdsc/internal/msi"
	"tdsc/internal/patch"
	"tdsc/internal/tsc"
)

// batchSize is the number of patches coded together. It is fixed (not
// derived from the thread count) because FISTA's per-batch choice of
// evaluation path, and so the last bits of the result, depend on the batch.
const batchSize = 2048

// Options are the settings of training and coding. The zero value is not
// usable: start from Defaults.
type Options struct {
	Patch  int // window side p in pixels
	Depth  int // window depth q in bands
	Stride int // spatial step between patches (spectral step is 1)

	Atoms      int     // dictionary size r
	Beta       float64 // ℓ1 weight β on the [0, 255] scale
	Samples    int     // training patches drawn from the cube
	TrainIters int     // maximum outer learning iterations
	InnerIters int     // FISTA iterations per outer learning iteration
	TrainTol   float64 // relative objective change that stops learning early
	CodeIters  int     // maximum FISTA iterations when coding every patch
	CodeTol    float64 // relative change of a code that stops its iteration
	Seed       uint64  // seed of the training sample and the initial dictionary
	Threads    int     // worker goroutines (≤ 0: GOMAXPROCS)

	// TrainProgress, if not nil, is called after every outer learning
	// iteration; CodeProgress after every coded batch with the patches done
	// so far. Both may be called from several goroutines, never at once.
	TrainProgress func(iter, total int, objective float64)
	CodeProgress  func(done, total int)
}

// Defaults returns the default settings for noise of standard deviation
// sigma on the [0, 255] scale (β = BetaFor(sigma)).
func Defaults(sigma float64) Options {
	return Options{
		Patch: 5, Depth: 5, Stride: 2,
		Atoms: 30, Beta: BetaFor(sigma), Samples: 10000,
		TrainIters: 15, InnerIters: 30, TrainTol: 1e-4,
		CodeIters: 50, CodeTol: 1e-4,
		Seed: 1,
	}
}

// BetaFor returns the default ℓ1 weight for noise of standard deviation
// sigma on the [0, 255] scale.
func BetaFor(sigma float64) float64 { return 4 * sigma }

// Validate checks the settings against a cube of the given size and
// returns an error naming the first bad one.
func (o *Options) Validate(height, width, bands int) error {
	switch {
	case o.Patch < 1:
		return fmt.Errorf("patch size must be at least 1, got %d", o.Patch)
	case o.Depth < 1:
		return fmt.Errorf("patch depth must be at least 1, got %d", o.Depth)
	case o.Stride < 1:
		return fmt.Errorf("stride must be at least 1, got %d", o.Stride)
	case o.Stride > o.Patch:
		return fmt.Errorf("stride %d is larger than the patch size %d: some pixels would be covered by no patch", o.Stride, o.Patch)
	case o.Atoms < 1:
		return fmt.Errorf("number of atoms must be at least 1, got %d", o.Atoms)
	case !(o.Beta >= 0) || math.IsInf(o.Beta, 0):
		return fmt.Errorf("beta must be a finite number ≥ 0, got %v", o.Beta)
	case o.Samples < 1:
		return fmt.Errorf("number of training samples must be at least 1, got %d", o.Samples)
	case o.TrainIters < 1 || o.InnerIters < 1 || o.CodeIters < 1:
		return fmt.Errorf("iteration counts must be at least 1")
	}
	if height < o.Patch || width < o.Patch || bands < o.Depth {
		return fmt.Errorf("image is %d×%d×%d but the patch is %d×%d×%d", height, width, bands, o.Patch, o.Patch, o.Depth)
	}
	return nil
}

// Train learns a dictionary from Samples patches drawn at random (seeded)
// over all patch positions of the cube. It returns ctx.Err() as soon as ctx
// is cancelled.
func Train(ctx context.Context, c *msi.Cube, o Options) (*tsc.LearnResult, error) {
	if err := o.Validate(c.Height, c.Width, c.Bands); err != nil {
		return nil, err
	}
	g, err := patch.NewGrid(c.Height, c.Width, c.Bands, o.Patch, o.Depth, o.Stride)
	if err != nil {
		return nil, err
	}
	idx := patch.Sample(g, o.Samples, o.Seed)
	x := g.NewTensor(len(idx))
	patch.ExtractIndices(x, make([]float64, len(idx)), c, g, idx)
	if len(idx) < o.Atoms {
		// Sample returns min(Samples, positions) patches: say which is short.
		if o.Samples < g.Len() {
			return nil, fmt.Errorf("%d training samples are fewer than the %d atoms to learn", o.Samples, o.Atoms)
		}
		return nil, fmt.Errorf("the image has %d patch positions, fewer than the %d atoms to learn", len(idx), o.Atoms)
	}

	type outcome struct {
		res *tsc.LearnResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := tsc.Learn(x, tsc.LearnOptions{
			Atoms: o.Atoms, Beta: o.Beta, Iters: o.TrainIters, InnerIters: o.InnerIters,
			Tol: o.TrainTol, Seed: o.Seed, Threads: o.Threads,
			Progress: func(iter int, obj float64) {
				if o.TrainProgress != nil {
					o.TrainProgress(iter, o.TrainIters, obj)
				}
			},
		})
		done <- outcome{res, err}
	}()
	// Learning has no cancellation point of its own; an interrupted run
	// returns at once and leaves the learning goroutine to the exiting
	// process.
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case out := <-done:
		return out.res, out.err
	}
}

// Reconstruct codes every overlapping patch of c over the dictionary d
// (p²×r×q atoms) and returns the average of the reconstructions. It stops
// with ctx.Err() when ctx is cancelled.
func Reconstruct(ctx context.Context, c *msi.Cube, d *tsc.Tensor, o Options) (*msi.Cube, error) {
	if err := o.Validate(c.Height, c.Width, c.Bands); err != nil {
		return nil, err
	}
	if d.M != o.Patch*o.Patch || d.K != o.Depth {
		return nil, fmt.Errorf("the dictionary's atoms are %d×1×%d but %d×%d×%d patches need %d×1×%d",
			d.M, d.K, o.Patch, o.Patch, o.Depth, o.Patch*o.Patch, o.Depth)
	}
	g, err := patch.NewGrid(c.Height, c.Width, c.Bands, o.Patch, o.Depth, o.Stride)
	if err != nil {
		return nil, err
	}
	enc, err := tsc.NewEncoder(d, tsc.EncodeOptions{Beta: o.Beta, MaxIter: o.CodeIters, Tol: o.CodeTol})
	if err != nil {
		return nil, err
	}
	workers := o.Threads
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type buffers struct {
		ws    *tsc.Workspace
		x, b  *tsc.Tensor
		rec   *tsc.Tensor
		means []float64
	}
	bufs := make([]buffers, workers)
	for w := range bufs {
		bufs[w] = buffers{
			ws:    enc.NewWorkspace(batchSize),
			x:     g.NewTensor(batchSize),
			b:     tsc.NewTensor(d.N, batchSize, d.K),
			rec:   g.NewTensor(batchSize),
			means: make([]float64, batchSize),
		}
	}
	agg := patch.NewAggregator(g)
	total := g.Len()
	progress := make(chan int, workers)
	reported := make(chan struct{})
	go func() {
		done := 0
		for n := range progress {
			done += n
			if o.CodeProgress != nil {
				o.CodeProgress(done, total)
			}
		}
		close(reported)
	}()
	err = g.ForEachBatch(workers, batchSize, func(w, start, end int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		bf := &bufs[w]
		n := end - start
		x, b, rec := bf.x.Slice(0, n), bf.b.Slice(0, n), bf.rec.Slice(0, n)
		patch.Extract(x, bf.means[:n], c, g, start)
		enc.Encode(bf.ws, b, x, false)
		enc.Reconstruct(bf.ws, rec, b)
		agg.Add(rec, bf.means[:n], start)
		progress <- n
		return nil
	})
	close(progress)
	<-reported
	if err != nil {
		return nil, err
	}
	out := msi.NewCube(c.Height, c.Width, c.Bands)
	out.Wavelengths = c.Wavelengths
	agg.Result(out)
	return out, nil
}
