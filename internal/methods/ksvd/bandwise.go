package ksvd

import (
	"context"
	"fmt"
	"math"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/report"
)

// The band-wise K-SVD, the method "bwksvd" (the baseline of the paper's
// Table 2): every band of the cube is denoised on its own as a grey image
// by the K-SVD denoiser of Elad and Aharon (2006). For each band: 8×8
// patches, a 256-atom dictionary initialised with the overcomplete 2-D DCT
// and trained by K-SVD on random noisy patches of that band (with their
// means removed), Batch-OMP coding of every overlapping patch to the error
// bound ‖Rᵢy − Dαᵢ‖ ≤ 1.15·σ·8, and the per-pixel average
// x̂ = (λy + Σ RᵢᵀDαᵢ)/(λ + Σ RᵢᵀRᵢ), λ = 30/σ (Denoise). The bands share
// nothing: that is what the baseline measures against methods that use the
// spectral correlation.

// Defaults of BandOptions (Resolve).
const (
	DefaultBandPatch = 8   // Elad and Aharon's 8×8 patches
	DefaultBandAtoms = 256 // 16×16 DCT frequencies: 4 times overcomplete
	// DefaultBandIters is the number of K-SVD iterations. The paper's
	// 10–15 gain little over 10 on these images (the dictionary starts from
	// the DCT, which is already a good one), and learning runs once per
	// band.
	DefaultBandIters = 10
	// DefaultBandSamples is the number of training patches per band: 40
	// times the atoms, enough for K-SVD to fit 256 atoms of 64 values, and
	// a learning time per band well below its coding time.
	DefaultBandSamples = 10000
	// defaultStride codes every patch position; defaultSeed is 1, as for
	// every seeded method of tdsc.
	defaultStride = 1
	defaultSeed   = 1
)

// BandOptions are the settings of the band-wise K-SVD; a zero field takes
// its default (Resolve).
type BandOptions struct {
	Patch   int    // window side p in pixels (flag "patch")
	Atoms   int    // dictionary size K, a square k² with k ≥ Patch (flag "atoms")
	Iters   int    // K-SVD iterations per band (flag "iters")
	Samples int    // training patches drawn from each band (flag "samples")
	Stride  int    // step between coded patch positions, ≤ Patch; 1 codes them all (flag "stride")
	Seed    uint64 // seed of the training samples; 0 becomes 1 (flag "seed")
	Threads int    // worker goroutines (0: GOMAXPROCS); the output does not depend on it
}

// Resolve returns o with its zero settings set to their defaults
// (bandFields), which do not depend on the noise level.
func (o BandOptions) Resolve(sigma float64) BandOptions { return bandFields.Resolve(o, sigma) }

// sideAtoms returns k with k²·depth = atoms, or 0 when there is none.
func sideAtoms(atoms, depth int) int {
	if depth < 1 || atoms%depth != 0 {
		return 0
	}
	k := int(math.Round(math.Sqrt(float64(atoms / depth))))
	if k*k*depth != atoms {
		return 0
	}
	return k
}

// Validate checks resolved options against a cube of height×width×bands.
func (o BandOptions) Validate(height, width, bands int) error {
	for _, err := range []error{
		bandFields.Check(&o),
		denoise.CheckStride(o.Stride, o.Patch),
	} {
		if err != nil {
			return err
		}
	}
	k := sideAtoms(o.Atoms, 1)
	switch {
	case k == 0:
		return option.Errorf("atoms", o.Atoms, "number of atoms must be a square k² (k DCT frequencies per axis), got %d", o.Atoms)
	case k < o.Patch:
		return option.Errorf("atoms", o.Atoms, "%d atoms are fewer than the %d×%d DCT of a %d×%d patch", o.Atoms, o.Patch, o.Patch, o.Patch, o.Patch)
	case o.Samples < o.Atoms:
		return option.Errorf("samples", o.Samples, "%d training samples are fewer than the %d atoms to learn", o.Samples, o.Atoms)
	}
	if err := denoise.CheckPatchFits(height, width, bands, o.Patch, 1); err != nil {
		return err
	}
	if n := (height - o.Patch + 1) * (width - o.Patch + 1); n < o.Atoms {
		return option.Errorf("atoms", o.Atoms, "a %d×%d band has %d patch positions, fewer than the %d atoms to learn: it needs at least %d (a larger cube, or fewer --atoms)", height, width, n, o.Atoms, o.Atoms)
	}
	return nil
}

// bandSeed spreads the seed over the bands so that each band draws its own
// training sample (an odd multiplier keeps the map one-to-one).
func bandSeed(seed uint64, band int) uint64 { return seed + uint64(band)*0x9e37_79b9_7f4a_7c15 }

// BandDenoiser runs the band-wise K-SVD. It keeps nothing from one run to
// the next, and may be used by several goroutines at once.
type BandDenoiser struct {
	Options BandOptions
	// Report, if not nil, receives the progress over the bands and a
	// summary line.
	Report report.Reporter
}

// Check returns the error Denoise would return for noise level sigma on a
// cube of height×width×bands.
func (d *BandDenoiser) Check(sigma float64, height, width, bands int) error {
	return d.Options.Resolve(sigma).Validate(height, width, bands)
}

// Denoise returns the estimate of the clean cube for noise of standard
// deviation sigma > 0 on the [0, 255] scale, band by band. It stops with
// ctx.Err() when ctx is cancelled.
func (d *BandDenoiser) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	log := report.OrDiscard(d.Report)
	o := d.Options.Resolve(sigma)
	if err := o.Validate(noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return nil, denoise.Result{}, err
	}
	out := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
	if noisy.Wavelengths != nil {
		out.Wavelengths = append([]float64(nil), noisy.Wavelengths...)
	}
	k := sideAtoms(o.Atoms, 1)
	var total Times
	log.Start("band-wise K-SVD", "bands", int64(noisy.Bands))
	for b := range noisy.Bands {
		in := &msi.Cube{Height: noisy.Height, Width: noisy.Width, Bands: 1, Data: noisy.Band(b)}
		res := &msi.Cube{Height: noisy.Height, Width: noisy.Width, Bands: 1, Data: out.Band(b)}
		t, err := Denoise(ctx, res, in, sigma, Settings{
			Patch: o.Patch, Depth: 1, SideAtoms: k, DepthAtoms: 1,
			Iters: o.Iters, Samples: o.Samples, Seed: bandSeed(o.Seed, b),
			Step: o.Stride, BandStep: 1, Threads: o.Threads,
		})
		if err != nil {
			log.Finish()
			return nil, denoise.Result{}, err
		}
		total.Learn += t.Learn
		total.Code += t.Code
		log.Update(int64(b+1), "")
	}
	log.Finish()
	log.Logf("band-wise K-SVD: learned %d bands in %.1f s, coded them in %.1f s",
		noisy.Bands, total.Learn.Seconds(), total.Code.Seconds())
	return out, denoise.Result{Settings: denoise.Params("patch", o.Patch, "atoms", o.Atoms, "iters", o.Iters,
		"samples", o.Samples, "stride", o.Stride, "seed", o.Seed)}, nil
}

// patchRule is the patch setting of both K-SVD methods: at least 2
// pixels.
var patchRule = denoise.Patch.WithMin(2)

// bandFields are the settings of bwksvd.
var bandFields = denoise.Fields[BandOptions]{
	denoise.Value(patchRule, func(o *BandOptions) *int { return &o.Patch }, DefaultBandPatch),
	denoise.Value(denoise.Atoms, func(o *BandOptions) *int { return &o.Atoms }, DefaultBandAtoms),
	denoise.Value(denoise.Iters, func(o *BandOptions) *int { return &o.Iters }, DefaultBandIters),
	denoise.Value(denoise.Samples, func(o *BandOptions) *int { return &o.Samples }, DefaultBandSamples),
	denoise.Value(denoise.Stride, func(o *BandOptions) *int { return &o.Stride }, defaultStride),
	denoise.Value(denoise.Seed, func(o *BandOptions) *uint64 { return &o.Seed }, defaultSeed),
}

// BandSpec declares the method bwksvd.
var BandSpec = denoise.Spec{
	Name: "bwksvd",
	Summary: fmt.Sprintf("band-wise K-SVD (Elad and Aharon 2006): each band as a grey image, %d×%d patches, %d atoms (paper's baseline)",
		DefaultBandPatch, DefaultBandPatch, DefaultBandAtoms),
	Settings: bandFields.Settings(),
	New: func(c denoise.Config) (denoise.Method, error) {
		o := bandFields.Options(c.Values)
		o.Threads = c.Threads
		return &BandDenoiser{Report: c.Report, Options: o}, nil
	},
	// Peak RSS 356 MiB.
	BytesPerVoxel: 46,
}
