package ksvd

import (
	"context"
	"time"

	"tdsc/internal/msi"
)

// Settings describe one run of the whole K-SVD denoiser (Denoise) on a
// cube: the patch shape, the initial dictionary's shape, learning and the
// patch grid of the averaging.
type Settings struct {
	Patch      int // window side p
	Depth      int // window depth d in bands (1: grey patches)
	SideAtoms  int // 1-D DCT atoms per spatial axis of the initial dictionary
	DepthAtoms int // 1-D DCT atoms along the bands (1 when Depth is 1)
	Iters      int // K-SVD iterations
	Samples    int // training patches drawn from the noisy cube
	Seed       uint64
	Exact      bool // exact K-SVD atom update (LearnOptions.Exact)
	Step       int  // spatial step of the averaging grid
	BandStep   int  // spectral step of the averaging grid
	Threads    int

	// Progress, if not nil, receives the rows of patch positions coded so
	// far and their total during the averaging.
	Progress func(done, total int)
}

// Times are the wall times of the stages of one Denoise.
type Times struct {
	Learn, Code time.Duration
}

// Denoise runs the K-SVD denoiser on noisy with noise σ = sigma (positive
// and finite, denoise.CheckSigma) and writes
// the estimate to dst (same size, not noisy): the DCT dictionary
// (PatchDCT), K-SVD on Samples random noisy patches with their means
// removed (Learn, ε² = (DefaultGain·σ)²·n, at most n/2 atoms a patch),
// then the averaging over every position of the grid (Reconstruct, same
// bound, λ = DefaultLambdaTimesSigma/σ).
func Denoise(ctx context.Context, dst, noisy *msi.Cube, sigma float64, s Settings) (Times, error) {
	var t Times
	start := time.Now()
	init, err := PatchDCT(s.Patch, s.SideAtoms, s.Depth, s.DepthAtoms)
	if err != nil {
		return t, err
	}
	n := init.Dim
	eps2 := DefaultGain * DefaultGain * sigma * sigma * float64(n)
	maxAtoms := max(1, n/2)
	samples := SamplePatches(noisy, s.Patch, s.Depth, s.Samples, s.Seed)
	d, err := Learn(ctx, init, samples, LearnOptions{
		Iters: s.Iters, Epsilon2: eps2, MaxAtoms: maxAtoms, Exact: s.Exact, Threads: s.Threads,
	})
	if err != nil {
		return t, err
	}
	t.Learn = time.Since(start)
	start = time.Now()
	err = Reconstruct(ctx, dst, noisy, d, DenoiseOptions{
		Patch: s.Patch, Depth: s.Depth, Step: s.Step, BandStep: s.BandStep,
		Epsilon2: eps2, MaxAtoms: maxAtoms, Lambda: DefaultLambdaTimesSigma / sigma,
		Threads: s.Threads, Progress: s.Progress,
	})
	t.Code = time.Since(start)
	return t, err
}
