// Package twodsc is the paper's denoiser, the method "2dsc" of tdsc, and
// its point of comparison, the method "sc": it joins the patch grid and
// the 2DSC solver into a pipeline that learns a dictionary from patches of
// the noisy cube (or takes one), codes every overlapping patch, and
// averages the reconstructions back into a cube.
//
// Patches are p×p pixels × q bands, cut as (p²)×1×q tensors with their mean
// removed (package patch); the dictionary has (p²)×1×q atoms (package tsc).
// Coding streams the patches in fixed-size batches through one workspace per
// worker into a per-voxel sum, so memory is bounded by the cube, the sums and
// batch size × workers, never by the number of patches. The batches are the
// same whatever the number of workers and the aggregation order is fixed
// (patch.Grid.ForEachBatch), so the output is bit-identical for every
// thread count.
//
// The method sc is conventional (vectorised) sparse coding on exactly the
// same patches (Options.Vectorised): every p×p-pixel × q-band patch (mean
// removed) is one p²q-vector x, coded as min_b ½‖x − Db‖² + β‖b‖₁ over a
// dictionary D of m unit-norm columns learned from the noisy cube by the
// same alternation of FISTA coding and Lagrange-dual dictionary update. It
// is the k = 1 case of the 2DSC problem (a (p²q)×1×1 tensor over
// (p²q)×m×1 atoms, where the t-product is the matrix product): the same
// sample, step, β, iteration limits and averaging, and only the model
// differs. The number of atoms m defaults to r·q (150 = 30 × 5 for the
// 2DSC defaults, VectorisedAtoms): the number of real columns of 2DSC's
// block-circulant dictionary, so that the two models have the same number
// of parameters per atom column; Options.Atoms = r compares at equal atoms
// instead.
package twodsc

import (
	"cmp"
	"context"
	"fmt"
	"runtime"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/patch"
	"tdsc/internal/report"
	"tdsc/internal/tile"
	"tdsc/internal/tsc"
)

// batchSize is the number of patches coded together. It is fixed (not
// derived from the thread count) because FISTA's per-batch choice of
// evaluation path, and so the last bits of the result, depend on the batch.
const batchSize = 2048

// Options are the settings of training and coding. A zero field takes its
// default for the noise level (Resolve, Defaults); so does a zero Seed, which
// becomes 1.
type Options struct {
	Patch  int // window side p in pixels
	Depth  int // window depth q in bands
	Stride int // spatial step between patches (spectral step is 1)

	Atoms      int       // dictionary size r
	Beta       float64   // ℓ1 weight β on the [0, 255] scale
	Samples    int       // training patches drawn from the cube
	TrainIters int       // maximum outer learning iterations
	InnerIters int       // FISTA iterations per outer learning iteration
	TrainTol   float64   // relative objective change that stops learning early (0: 1e-4)
	CodeIters  int       // maximum FISTA iterations when coding every patch
	CodeTol    float64   // relative change of a code that stops its iteration (0: 1e-4)
	Weighting  Weighting // how overlapping reconstructions are averaged
	Seed       uint64    // seed of the training sample and the initial dictionary
	Threads    int       // worker goroutines (≤ 0: GOMAXPROCS)

	// Vectorised codes every patch as one p²q-vector, a (p²q)×1×1 tensor,
	// over (p²q)×1×1 atoms instead of a p²×1×q tensor over p²×1×q atoms:
	// conventional sparse coding, the k = 1 case of the same problem and
	// the paper's point of comparison (the method sc). The patch tensors
	// need no copy: their lateral slices are the same p²q numbers in
	// either shape (tproduct.Tensor's layout).
	Vectorised bool

	// TrainProgress, if not nil, is called after every outer learning
	// iteration; CodeProgress after every coded batch with the patches done
	// so far. Both may be called from several goroutines, never at once.
	TrainProgress func(iter, total int, objective float64)
	CodeProgress  func(done, total int)
}

// Weighting is the rule that averages the reconstructions of the patches
// covering a voxel.
type Weighting int

const (
	// Sparsity, the default, weights the reconstruction of a patch by
	// 1/(1 + ‖b‖₀), b its code (r×1×q, so ‖b‖₀ ≤ r·q): a patch explained by
	// few atoms is mostly signal, one that needs many has fitted noise too.
	// The voxel is Σ wⱼ·vⱼ / Σ wⱼ over its covering patches j.
	Sparsity Weighting = iota
	// Uniform counts every covering patch once (docs/model.md, "Patches":
	// the plain mean).
	Uniform
)

// String returns the flag spelling of w.
func (w Weighting) String() string {
	switch w {
	case Uniform:
		return "uniform"
	case Sparsity:
		return "sparsity"
	}
	return fmt.Sprintf("Weighting(%d)", int(w))
}

// sparsityWeight is the Sparsity weight of a patch whose code is b.
func sparsityWeight(b []float64) float64 {
	nnz := 0
	for _, v := range b {
		if v != 0 {
			nnz++
		}
	}
	return 1 / float64(1+nnz)
}

// Defaults returns the default settings for noise of standard deviation
// sigma on the [0, 255] scale (Fields): 5×5×5 patches, spatial step
// StrideFor(sigma), 30 atoms, β = BetaFor(sigma), 10000 training patches,
// at most 15 outer × 30 inner FISTA iterations, at most 50 when coding, a
// relative change of 10⁻⁴ that stops either, and Sparsity weighting.
//
// They were tuned on the full 512×512×31 CAVE balloons scene, noise seed 1;
// docs/results.md ("How the defaults were chosen") has the measurements.
func Defaults(sigma float64) Options {
	return Options{TrainTol: defaultTol, CodeTol: defaultTol}.Resolve(sigma)
}

// The defaults that do not depend on the noise level (Defaults).
const (
	DefaultPatch      = 5
	DefaultDepth      = 5
	DefaultAtoms      = 30
	DefaultSamples    = 10000
	DefaultTrainIters = 15
	DefaultInnerIters = 30
	DefaultCodeIters  = 50
	DefaultSeed       = 1
)

// Resolve returns o with every zero setting set to its default for noise
// of standard deviation sigma on the [0, 255] scale, as Fields declares
// them: β = BetaFor(σ) and the step StrideFor(σ), which never exceeds the
// patch size so that a small Patch is still covered, and when Vectorised
// VectorisedAtoms(Depth) atoms.
func (o Options) Resolve(sigma float64) Options { return Fields.Resolve(o, sigma) }

// defaultTol is the relative change that stops learning (Options.TrainTol)
// and coding (Options.CodeTol) when they are zero.
const defaultTol = 1e-4

// VectorisedAtoms returns the default number of atoms of vectorised
// coding (the method sc) for patches of depth q: DefaultAtoms·q, the
// column count of the default 2DSC dictionary's block-circulant matrix.
func VectorisedAtoms(depth int) int { return DefaultAtoms * depth }

// fineStrideSigma is the noise level from which the default spatial step
// is 1 (StrideFor), and betaPerSigma the default β over σ (BetaFor).
const (
	fineStrideSigma = 20
	betaPerSigma    = 3
)

// StrideFor returns the default spatial step between patches for noise of
// standard deviation sigma on the [0, 255] scale: 1 for σ ≥ 20, else 2.
//
// Step 1 codes about 4 times as many patches as step 2 and gains 0.3 dB; at
// σ ≥ 20 the codes are sparse enough for that to be affordable, and below
// step 2 already reaches the reference implementation's SSIM
// (docs/results.md, "Spatial step"). The step also sets the positions the
// training sample is drawn from.
func StrideFor(sigma float64) int {
	if sigma >= fineStrideSigma {
		return 1
	}
	return 2
}

// BetaFor returns the default ℓ1 weight for noise of standard deviation
// sigma on the [0, 255] scale: β = 3σ.
//
// c = 3 was the best of 2.5, 3, 3.5 and 4 at every σ of Table 2, and smaller
// β makes the codes denser and coding slower (docs/results.md, "β = 3σ").
// The paper's β (10, 28, 200, 220, 290) belongs to its own step size and
// iteration count and does not transfer.
func BetaFor(sigma float64) float64 { return betaPerSigma * sigma }

// Validate checks resolved settings (Resolve) against a cube of the given
// size and returns an *option.Error naming the first bad setting, or the
// error of a patch that does not fit the cube.
func (o *Options) Validate(height, width, bands int) error {
	if err := Fields.Check(o); err != nil {
		return err
	}
	if err := denoise.CheckStride(o.Stride, o.Patch); err != nil {
		return err
	}
	return denoise.CheckPatchFits(height, width, bands, o.Patch, o.Depth)
}

// Train learns a dictionary from Samples patches drawn at random (seeded)
// over all patch positions of the cube. When ctx is cancelled it stops
// within one batch of coding and returns ctx.Err().
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
	return learn(ctx, x, g, o)
}

// learn learns the dictionary from x, the training patches drawn from the
// grid g.
func learn(ctx context.Context, x *tproduct.Tensor, g *patch.Grid, o Options) (*tsc.LearnResult, error) {
	if x.N < o.Atoms {
		// Sample returns min(Samples, positions) patches: say which is short.
		if o.Samples < g.Len() {
			return nil, fmt.Errorf("%d training samples are fewer than the %d atoms to learn", o.Samples, o.Atoms)
		}
		return nil, fmt.Errorf("the image has %d patch positions, fewer than the %d atoms to learn: it needs at least %d (a larger cube, a smaller --stride, or fewer --atoms)", x.N, o.Atoms, o.Atoms)
	}
	return tsc.Learn(ctx, o.codingShape(x), tsc.LearnOptions{
		Atoms: o.Atoms, Beta: o.Beta, Iters: o.TrainIters, InnerIters: o.InnerIters,
		Tol: cmp.Or(o.TrainTol, defaultTol), Seed: o.Seed, Threads: o.Threads,
		Progress: func(iter int, obj float64) {
			if o.TrainProgress != nil {
				o.TrainProgress(iter, o.TrainIters, obj)
			}
		},
	})
}

// TileGeometry returns the strips (package tile) under which Reconstruct,
// with resolved settings o, gives for every strip's core exactly the lines
// it gives on the whole cube: cores and reads start at multiples of two
// stripes of the patch grid (patch.StripeHeight), so that a strip's grid
// has the whole cube's patch positions, stripes and phases and codes the
// same batches, and the halo, at least one patch and a multiple of that,
// holds every patch that covers a core line (and keeps the strip's forced
// last row of patches, which the whole cube does not have, off the core).
func (o *Options) TileGeometry() tile.Geometry {
	align := 2 * patch.StripeHeight(o.Patch, o.Stride)
	return tile.Geometry{Halo: align * ((o.Patch + align - 1) / align), Align: align}
}

// gatherValues bounds the values of a window of lines that sampleTiles
// reads at once (64 MiB as float64): a fraction of a second to read, so
// that an interrupt is noticed at once.
var gatherValues = 1 << 23

// sampleTiles cuts the training sample that Train draws over the whole
// cube's patch positions from the cube of r, read a window of lines at a
// time within the strips of TileGeometry (never more lines at once than a
// strip's core and halo, the memory the strips were planned for), each
// line once, so that
// learning from it gives Train's result on the whole cube. It returns the
// patches and the whole cube's grid, reports the lines done on log and
// stops with ctx.Err() between windows once ctx is cancelled: on a cube of
// tens of gigabytes gathering reads the whole file.
func sampleTiles(ctx context.Context, r tile.Reader, strips []tile.Strip, o Options, log report.Reporter) (*tproduct.Tensor, *patch.Grid, error) {
	h, w, b := r.Size()
	if err := o.Validate(h, w, b); err != nil {
		return nil, nil, err
	}
	g, err := patch.NewGrid(h, w, b, o.Patch, o.Depth, o.Stride)
	if err != nil {
		return nil, nil, err
	}
	idx := patch.Sample(g, o.Samples, o.Seed)
	x := g.NewTensor(len(idx))
	firstLine := func(j int) int { y, _, _ := g.Pos(idx[j]); return y }
	log.Start("gathering training patches", "lines", int64(h))
	defer log.Finish()
	j := 0 // the sample's indices increase with the patch's first line
	// The last lines read, from line heldTop: a patch that begins in one
	// window ends in the next, which reads only the lines after them.
	var held *msi.Cube
	heldTop := 0
	for _, s := range strips {
		lines := min(s.Core.Len(), max(1, gatherValues/(w*b)))
		for start := s.Core.Start; start < s.Core.End; start += lines {
			end := j // the patches whose first line is in [start, start+lines)
			for end < len(idx) && firstLine(end) < min(start+lines, s.Core.End) {
				end++
			}
			if end == j {
				continue
			}
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			top, bottom := firstLine(j), firstLine(end-1)+o.Patch
			from := top // the first line to read
			if held != nil {
				from = max(top, min(heldTop+held.Height, bottom))
			}
			var c *msi.Cube
			if from < bottom {
				if c, err = r.ReadLines(from, bottom-from); err != nil {
					return nil, nil, err
				}
			}
			if from > top {
				c = stackLines(held.Crop(top-heldTop, 0, 0, from-top, w, b), c)
			}
			if keep := min(c.Height, o.Patch-1); keep > 0 {
				held, heldTop = c.Crop(c.Height-keep, 0, 0, keep, w, b), bottom-keep
			}
			wg, err := patch.NewGrid(c.Height, w, b, o.Patch, o.Depth, o.Stride)
			if err != nil {
				return nil, nil, err
			}
			for ; j < end; j++ {
				y, xx, bb := g.Pos(idx[j])
				wg.ExtractAt(x.Lateral(j), c, y-top, xx, bb)
			}
			log.Update(int64(min(start+lines, s.Core.End)), "")
		}
	}
	if j != len(idx) {
		return nil, nil, fmt.Errorf("twodsc: the strips cover %d of the %d training patches", j, len(idx))
	}
	log.Update(int64(h), "") // the last lines hold no patch's first line
	return x, g, nil
}

// stackLines returns the lines of a followed by those of b (nil: none), a
// cube of the width and bands of both.
func stackLines(a, b *msi.Cube) *msi.Cube {
	if b == nil {
		return a
	}
	c := msi.NewCube(a.Height+b.Height, a.Width, a.Bands)
	for band := range c.Bands {
		n := copy(c.Band(band), a.Band(band))
		copy(c.Band(band)[n:], b.Band(band))
	}
	return c
}

// atomShape returns the M and K of the atoms that o's patches are coded
// over: p²×1×q, or (p²q)×1×1 when Vectorised.
func (o *Options) atomShape() (m, k int) {
	if o.Vectorised {
		return o.Patch * o.Patch * o.Depth, 1
	}
	return o.Patch * o.Patch, o.Depth
}

// codingShape returns the patch tensor x (p²×n×q, as the grid cuts it) in
// the shape the solver codes: x itself, or when Vectorised a (p²q)×n×1
// tensor on the same data.
func (o *Options) codingShape(x *tproduct.Tensor) *tproduct.Tensor {
	if !o.Vectorised {
		return x
	}
	return &tproduct.Tensor{M: x.M * x.K, N: x.N, K: 1, Data: x.Data}
}

// Reconstruct codes every overlapping patch of c over the dictionary d
// (p²×r×q atoms, or (p²q)×r×1 when Vectorised) and returns the average of the reconstructions, plain or
// weighted as o.Weighting says. It stops
// with ctx.Err() when ctx is cancelled.
func Reconstruct(ctx context.Context, c *msi.Cube, d *tproduct.Tensor, o Options) (*msi.Cube, error) {
	if err := o.Validate(c.Height, c.Width, c.Bands); err != nil {
		return nil, err
	}
	if m, k := o.atomShape(); d.M != m || d.K != k {
		return nil, fmt.Errorf("the dictionary's atoms are %d×1×%d but %d×%d×%d patches need %d×1×%d",
			d.M, d.K, o.Patch, o.Patch, o.Depth, m, k)
	}
	g, err := patch.NewGrid(c.Height, c.Width, c.Bands, o.Patch, o.Depth, o.Stride)
	if err != nil {
		return nil, err
	}
	enc, err := tsc.NewEncoder(d, tsc.EncodeOptions{Beta: o.Beta, MaxIter: o.CodeIters, Tol: cmp.Or(o.CodeTol, defaultTol)})
	if err != nil {
		return nil, err
	}
	workers := o.Threads
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type buffers struct {
		ws    *tsc.Workspace
		x, b  *tproduct.Tensor
		rec   *tproduct.Tensor
		means []float64
		w     []float64
	}
	bufs := make([]buffers, workers)
	for w := range bufs {
		bufs[w] = buffers{
			ws:    enc.NewWorkspace(batchSize),
			x:     g.NewTensor(batchSize),
			b:     tproduct.NewTensor(d.N, batchSize, d.K),
			rec:   g.NewTensor(batchSize),
			means: make([]float64, batchSize),
			w:     make([]float64, batchSize),
		}
	}
	agg := patch.NewAggregator(g)
	if o.Weighting == Sparsity {
		agg = patch.NewWeightedAggregator(g)
	}
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
	err = g.ForEachBatch(ctx, workers, batchSize, func(w, start, end int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		bf := &bufs[w]
		n := end - start
		x, b, rec := bf.x.Slice(0, n), bf.b.Slice(0, n), bf.rec.Slice(0, n)
		patch.Extract(x, bf.means[:n], c, g, start)
		enc.Encode(bf.ws, b, o.codingShape(x), false)
		enc.Reconstruct(bf.ws, o.codingShape(rec), b)
		if o.Weighting == Sparsity {
			w := bf.w[:n]
			for j := range w {
				w[j] = sparsityWeight(b.Lateral(j))
			}
			agg.AddWeighted(rec, bf.means[:n], w, start)
		} else {
			agg.Add(rec, bf.means[:n], start)
		}
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
