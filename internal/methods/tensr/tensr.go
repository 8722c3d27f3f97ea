// Package tensr is the TenSR baseline of Table 2 (the method "tensr"):
// multi-dimensional sparse coding over separable per-mode dictionaries,
// after N. Qi, Y. Shi, X. Sun, B. Yin, "TenSR: Multi-dimensional tensor
// sparse recovery", ICCV 2015, and its journal version "Multi-dimensional
// sparse models" (Qi, Shi, Sun, Wang, Yin).
//
// # Model
//
// A p×p-pixel × q-band patch is a third-order tensor X of p₁×p₂×p₃ =
// p×p×q, and
//
//	X ≈ B ×₁ D₁ ×₂ D₂ ×₃ D₃,
//
// with one dictionary per mode, Dₙ of pₙ×rₙ with columns of norm ≤ 1
// (the atoms of the vectorised model are the Kronecker products
// d₃⊗d₂⊗d₁, so they have norm ≤ 1 too), and a sparse core B of r₁×r₂×r₃.
// The coding problem is
//
//	min_B ½‖X − B×₁D₁×₂D₂×₃D₃‖² + λ‖B‖₁,
//
// the vectorised lasso min ½‖x − (D₃⊗D₂⊗D₁)b‖² + λ‖b‖₁ without ever
// forming the Kronecker matrix: Coder solves it by FISTA in the tensor
// space, with gradients by mode products and the exact Lipschitz constant
// Π‖Dₙ‖₂². Learn alternates coding with a per-mode dictionary update.
//
// # Conventions
//
// Modes follow the patch layout of package patch: mode 1 is the column
// within the window (p values), mode 2 the row (p values), mode 3 the band
// (q values); tensors are stored with mode 1 fastest, so a patch as cut by
// patch.Extract (q runs of p² row-major pixels) is already a p×p×q tensor
// in this layout. As everywhere in tdsc, each patch's mean is removed
// before coding and added back after, so the dictionaries model the
// patch's variation only.
//
// # Denoising protocol
//
// As the papers do for MSI, the dictionaries are learned from the noisy
// cube itself: a seeded random sample of Samples noisy patches, starting
// from the separable overcomplete DCT. Then every patch of the grid (all
// positions at the spatial step Stride, spectral step 1, last row, column
// and band window always included) is coded with the learned dictionaries
// and the reconstructions are averaged voxel by voxel. Coding streams the
// patches in fixed-size batches through one workspace per worker into a
// per-voxel sum (patch.Grid.ForEachBatch), so memory is bounded by the
// cube, the sums, the training sample and batch × workers, and the output
// is bit-identical for every thread count.
//
// Where the papers leave the setting open or impractical here (the step
// between patches, λ as a function of σ, iteration counts), the defaults
// were measured on crops of two CAVE scenes; see Defaults.
package tensr

import (
	"context"
	"fmt"
	"time"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/parallel"
	"tdsc/internal/patch"
	"tdsc/internal/report"
)

// batchSize is the number of patches a worker extracts, codes and
// aggregates at once. Coding is per patch, so it only sets how often the
// aggregation and the progress are updated.
const batchSize = 256

// codeTol is the relative change of a code that stops its FISTA iteration
// early, and learnTol the relative decrease of the training objective that
// stops learning early.
const (
	codeTol  = 1e-3
	learnTol = 1e-4
)

// Options are the settings of the TenSR denoiser. A zero field takes its
// default for the noise level (Resolve, Defaults).
type Options struct {
	Patch  int // window side p in pixels (modes 1 and 2)
	Depth  int // window depth q in bands (mode 3)
	Stride int // spatial step between patches (spectral step is 1)
	// Atoms are r₁, r₂, r₃: the atoms of the column, row and band
	// dictionaries. A zero entry takes DefaultAtoms.
	Atoms     [3]int
	Beta      float64 // ℓ1 weight λ on the [0, 255] scale
	Iters     int     // maximum dictionary-learning iterations
	CodeIters int     // maximum FISTA iterations per code
	Samples   int     // training patches drawn from the noisy cube
	Seed      uint64  // seed of the training sample
	Threads   int     // worker goroutines (≤ 0: GOMAXPROCS); the output does not depend on it
}

// The defaults that do not depend on the noise level (Defaults).
const (
	DefaultPatch     = 5
	DefaultDepth     = 5
	DefaultStride    = 2
	DefaultAtoms     = 6
	DefaultIters     = 10
	DefaultCodeIters = 40
	DefaultSamples   = 4000
	DefaultSeed      = 1
)

// Defaults returns the default settings for noise of standard deviation
// sigma on the [0, 255] scale (fields): 5×5×5 patches, 6 atoms per mode (216
// Kronecker atoms for a 125-value patch), λ = BetaFor(sigma), spatial step
// StrideFor(sigma), 4000 training patches, at most 10 learning iterations
// and 40 FISTA iterations per code.
//
// The patch size is the 5×5×5 of Table 2's protocol. The atom counts were measured
// on 64×64×31 crops of CAVE balloons (rows 256–319, columns 192–255) and
// chart_and_stuffed_toy (same place), noise seed 1: at σ = 10, 30, 50,
// r = 5, 6, 7 per mode (both scenes) and 8, 10 (balloons) are within
// 0.1–0.4 dB of each other; no count is best everywhere (on the chart r = 7
// gains 0.18 dB at σ = 10, r = 5 0.13 dB at σ = 50), r = 6 is within 0.2 dB
// of the best at every σ on both scenes, and the cost of a FISTA iteration
// grows like r⁴, so a twice-overcomplete 10 per mode is slower by
// about ten times for a result 0.1–0.4 dB lower. Learning from the
// overcomplete DCT gains under 0.1 dB over the DCT itself on these crops
// (balloons at σ = 10: 42.27 dB after one iteration, 42.35 after ten).
func Defaults(sigma float64) Options { return Options{}.Resolve(sigma) }

// BetaFor returns the default ℓ1 weight for noise of standard deviation
// sigma on the [0, 255] scale: λ = 2.5σ.
//
// On the crops of Defaults (r = 6), λ/σ of 2, 2.5, 3 and 3.5 gave, on
// balloons, 42.16/42.35/41.94/41.47 dB at σ = 10 and 32.17 (2σ), 34.39,
// 34.68, 34.60 at σ = 50, 37.05/37.00 (2.5σ/3σ) at σ = 30; on the chart,
// 38.44/37.81/37.26/36.58 at σ = 10, 29.73/30.33/30.00/29.65 at σ = 50 and
// 32.56/32.27 (2.5σ/3σ) at σ = 30. 2.5σ is best or within 0.3 dB of best
// on both scenes at every σ; smaller λ also makes codes denser and coding
// slower.
func BetaFor(sigma float64) float64 { return betaPerSigma * sigma }

// betaPerSigma is the default λ over σ (BetaFor).
const betaPerSigma = 2.5

// StrideFor returns the default spatial step between patches for noise of
// standard deviation sigma on the [0, 255] scale: DefaultStride at every σ.
//
// Step 2 codes a quarter of the patches of step 1 for little loss: on the
// balloons crop of Defaults, steps 1, 2, 3 gave 42.34, 42.35, 41.94 dB at
// σ = 10 and 37.23, 37.05, 36.61 dB at σ = 30. A 512×512×31 scene has
// 1.7·10⁶ patch positions at step 2, about a minute of CPU at σ = 30.
func StrideFor(sigma float64) int { return DefaultStride }

// Resolve returns o with every zero setting set to its default for noise
// of standard deviation sigma (fields, Defaults); the default step never
// exceeds the patch size.
func (o Options) Resolve(sigma float64) Options { return fields.Resolve(o, sigma) }

// maxCore bounds r₁r₂r₃: the coder's cost per iteration grows with
// (r₁+r₂+r₃)·r₁r₂r₃, and a core beyond this many coefficients would take
// hours on a full scene.
const maxCore = 1 << 16

// Validate checks resolved settings (Resolve) against a cube of the given
// size and returns an *option.Error naming the first bad one, or the
// error of a patch that does not fit the cube.
func (o *Options) Validate(height, width, bands int) error {
	if err := fields.Check(o); err != nil {
		return err
	}
	if err := denoise.CheckStride(o.Stride, o.Patch); err != nil {
		return err
	}
	if core := o.Atoms[0] * o.Atoms[1] * o.Atoms[2]; core > maxCore {
		return option.Errorf(atomsSetting.Name, atomsString(o.Atoms), "atoms %s make a core of %d coefficients, more than %d", atomsString(o.Atoms), core, maxCore)
	}
	return denoise.CheckPatchFits(height, width, bands, o.Patch, o.Depth)
}

// atomsString spells atom counts as the atoms flag takes them.
func atomsString(a [3]int) string { return fmt.Sprintf("%d,%d,%d", a[0], a[1], a[2]) }

// Denoiser is the TenSR pipeline: learn the separable dictionary from the
// noisy cube, then code every patch over it and average. It keeps nothing
// from one run to the next, and may be used by several goroutines at once.
type Denoiser struct {
	// Options are the settings; zero fields take their defaults for the
	// noise level given to Denoise (Options.Resolve).
	Options Options
	// Report, if not nil, receives the stages' progress and log lines.
	Report report.Reporter
}

// Check returns the error Denoise would return for noise level sigma on a
// cube of height×width×bands.
func (d *Denoiser) Check(sigma float64, height, width, bands int) error {
	o := d.Options.Resolve(sigma)
	return o.Validate(height, width, bands)
}

// Denoise returns the TenSR estimate of the clean cube for noise of
// standard deviation sigma > 0 on the [0, 255] scale. It stops with
// ctx.Err() when ctx is cancelled.
func (d *Denoiser) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	log := report.OrDiscard(d.Report)
	o := d.Options.Resolve(sigma)
	if err := o.Validate(noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return nil, denoise.Result{}, err
	}
	start := time.Now()
	log.Start("learning", "iterations", int64(o.Iters))
	res, err := Train(ctx, noisy, o, func(iter int, obj float64) {
		log.Update(int64(iter), fmt.Sprintf("objective %.6g", obj))
	})
	log.Finish()
	if err != nil {
		return nil, denoise.Result{}, err
	}
	log.Logf("learned %s separable atoms in %d iterations (%.1f s)", atomsString(o.Atoms), len(res.Objective), time.Since(start).Seconds())
	codeStart := time.Now()
	out, err := Reconstruct(ctx, noisy, res.Dict, o, log)
	if err != nil {
		return nil, denoise.Result{}, err
	}
	log.Logf("coded the patches in %.1f s", time.Since(codeStart).Seconds())
	return out, denoise.Result{Settings: denoise.Params("beta", o.Beta, "patch", o.Patch, "depth", o.Depth, "stride", o.Stride,
		"atoms", atomsString(o.Atoms), "iters", o.Iters, "code-iters", o.CodeIters, "samples", o.Samples, "seed", o.Seed)}, nil
}

// Train learns the dictionary for cube c with resolved settings o: Samples
// patches drawn at random (seeded) among the grid positions, mean removed,
// coded and learned from the separable overcomplete DCT (Learn). progress,
// if not nil, is called after every learning iteration.
func Train(ctx context.Context, c *msi.Cube, o Options, progress func(iter int, objective float64)) (*LearnResult, error) {
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
	init := NewDCTDictionary([3]int{o.Patch, o.Patch, o.Depth}, o.Atoms)
	return Learn(ctx, x.Data, len(idx), init, LearnOptions{
		Lambda: o.Beta, Iters: o.Iters, CodeIters: o.CodeIters, CodeTol: codeTol,
		Tol: learnTol, Threads: o.Threads, Progress: progress,
	})
}

// Reconstruct codes every patch of the grid of cube c over the dictionary
// d with settings o and returns the average of the reconstructions. log,
// if not nil, receives the progress.
func Reconstruct(ctx context.Context, c *msi.Cube, d *Dictionary, o Options, log report.Reporter) (*msi.Cube, error) {
	if err := o.Validate(c.Height, c.Width, c.Bands); err != nil {
		return nil, err
	}
	if d.Size != [3]int{o.Patch, o.Patch, o.Depth} {
		return nil, fmt.Errorf("tensr: the dictionary is for %d×%d×%d patches, the settings for %d×%d×%d",
			d.Size[0], d.Size[1], d.Size[2], o.Patch, o.Patch, o.Depth)
	}
	log = report.OrDiscard(log)
	g, err := patch.NewGrid(c.Height, c.Width, c.Bands, o.Patch, o.Depth, o.Stride)
	if err != nil {
		return nil, err
	}
	coder, err := NewCoder(d, o.Beta, o.CodeIters, codeTol)
	if err != nil {
		return nil, err
	}
	workers := parallel.Workers(o.Threads)
	type buffers struct {
		ws     *Workspace
		x, rec *tproduct.Tensor
		core   []float64
		means  []float64
	}
	plen, clen := d.PatchLen(), d.CoreLen()
	bufs := make([]buffers, workers)
	for w := range bufs {
		bufs[w] = buffers{ws: coder.NewWorkspace(), x: g.NewTensor(batchSize), rec: g.NewTensor(batchSize),
			core: make([]float64, clen), means: make([]float64, batchSize)}
	}
	agg := patch.NewAggregator(g)
	total := g.Len()
	progress := make(chan int, workers)
	reported := make(chan struct{})
	log.Start("coding patches", "patches", int64(total))
	go func() {
		done := 0
		for n := range progress {
			done += n
			log.Update(int64(done), "")
		}
		close(reported)
	}()
	err = g.ForEachBatch(ctx, workers, batchSize, func(w, start, end int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		bf := &bufs[w]
		n := end - start
		x, rec := bf.x.Slice(0, n), bf.rec.Slice(0, n)
		patch.Extract(x, bf.means[:n], c, g, start)
		for j := range n {
			xj := x.Data[j*plen : (j+1)*plen]
			coder.Code(bf.ws, bf.core, xj, false)
			coder.Synthesize(bf.ws, rec.Data[j*plen:(j+1)*plen], bf.core)
		}
		agg.Add(rec, bf.means[:n], start)
		progress <- n
		return nil
	})
	close(progress)
	<-reported
	log.Finish()
	if err != nil {
		return nil, err
	}
	out := msi.NewCube(c.Height, c.Width, c.Bands)
	if c.Wavelengths != nil {
		out.Wavelengths = append([]float64(nil), c.Wavelengths...)
	}
	agg.Result(out)
	return out, nil
}
