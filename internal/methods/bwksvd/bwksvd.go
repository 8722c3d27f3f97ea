// Package bwksvd is the band-wise K-SVD baseline of the paper's Table 2
// (the method "bwksvd"): every band of the cube is denoised on its own as a
// grey image by the K-SVD denoiser of Elad and Aharon (2006, "Image
// denoising via sparse and redundant representations over learned
// dictionaries").
//
// For each band: 8×8 patches, a 256-atom dictionary initialised with the
// overcomplete 2-D DCT and trained by K-SVD on random noisy patches of that
// band (with their means removed), Batch-OMP coding of every overlapping
// patch to the error bound ‖Rᵢy − Dαᵢ‖ ≤ 1.15·σ·8, and the per-pixel
// average x̂ = (λy + Σ RᵢᵀDαᵢ)/(λ + Σ RᵢᵀRᵢ), λ = 30/σ (package ksvd). The
// bands share nothing: that is what the baseline measures against methods
// that use the spectral correlation.
package bwksvd

import (
	"context"
	"math"

	"tdsc/internal/methods/ksvd"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/report"
)

// Defaults of the options (Resolve).
const (
	DefaultPatch = 8   // Elad and Aharon's 8×8 patches
	DefaultAtoms = 256 // 16×16 DCT frequencies: 4 times overcomplete
	// DefaultIters is the number of K-SVD iterations. The paper's 10–15
	// gain little over 10 on these images (the dictionary starts from the
	// DCT, which is already a good one), and learning runs once per band.
	DefaultIters = 10
	// DefaultSamples is the number of training patches per band: 40 times
	// the atoms, enough for K-SVD to fit 256 atoms of 64 values, and a
	// learning time per band well below its coding time.
	DefaultSamples = 10000
)

// Options are the settings of the band-wise K-SVD; a zero field takes its
// default (Resolve).
type Options struct {
	Patch   int    // window side p in pixels (flag "patch")
	Atoms   int    // dictionary size K, a square k² with k ≥ Patch (flag "atoms")
	Iters   int    // K-SVD iterations per band (flag "iters")
	Samples int    // training patches drawn from each band (flag "samples")
	Stride  int    // step between coded patch positions, ≤ Patch; 1 codes them all (flag "stride")
	Seed    uint64 // seed of the training samples; 0 becomes 1 (flag "seed")
	Threads int    // worker goroutines (0: GOMAXPROCS); the output does not depend on it
}

// Resolve returns o with its zero fields set to their defaults. The
// defaults do not depend on the noise level sigma.
func (o Options) Resolve(sigma float64) Options {
	_ = sigma
	if o.Patch == 0 {
		o.Patch = DefaultPatch
	}
	if o.Atoms == 0 {
		o.Atoms = DefaultAtoms
	}
	if o.Iters == 0 {
		o.Iters = DefaultIters
	}
	if o.Samples == 0 {
		o.Samples = DefaultSamples
	}
	if o.Stride == 0 {
		o.Stride = 1
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// sideAtoms returns k with k² = atoms, or 0 when atoms is not a square.
func sideAtoms(atoms int) int {
	k := int(math.Round(math.Sqrt(float64(atoms))))
	if k*k != atoms {
		return 0
	}
	return k
}

// Validate checks resolved options against a cube of height×width×bands.
func (o Options) Validate(height, width, bands int) error {
	k := sideAtoms(o.Atoms)
	switch {
	case o.Patch < 2:
		return option.Errorf("patch", o.Patch, "patch size must be at least 2, got %d", o.Patch)
	case o.Atoms < 1 || k == 0:
		return option.Errorf("atoms", o.Atoms, "number of atoms must be a square k² (k DCT frequencies per axis), got %d", o.Atoms)
	case k < o.Patch:
		return option.Errorf("atoms", o.Atoms, "%d atoms are fewer than the %d×%d DCT of a %d×%d patch", o.Atoms, o.Patch, o.Patch, o.Patch, o.Patch)
	case o.Iters < 1:
		return option.Errorf("iters", o.Iters, "iterations must be at least 1, got %d", o.Iters)
	case o.Samples < o.Atoms:
		return option.Errorf("samples", o.Samples, "%d training samples are fewer than the %d atoms to learn", o.Samples, o.Atoms)
	case o.Stride < 1 || o.Stride > o.Patch:
		return option.Errorf("stride", o.Stride, "stride must be between 1 and the patch size %d, got %d", o.Patch, o.Stride)
	case o.Threads < 0:
		return option.Errorf("threads", o.Threads, "threads must be ≥ 0, got %d", o.Threads)
	case height < o.Patch || width < o.Patch || bands < 1:
		return option.Errorf("patch", o.Patch, "image is %d×%d×%d, smaller than a %d×%d patch", height, width, bands, o.Patch, o.Patch)
	case (height-o.Patch+1)*(width-o.Patch+1) < o.Atoms:
		return option.Errorf("atoms", o.Atoms, "a %d×%d band has %d patch positions, fewer than the %d atoms to learn",
			height, width, (height-o.Patch+1)*(width-o.Patch+1), o.Atoms)
	}
	return nil
}

// bandSeed spreads the seed over the bands so that each band draws its own
// training sample (an odd multiplier keeps the map one-to-one).
func bandSeed(seed uint64, band int) uint64 { return seed + uint64(band)*0x9e37_79b9_7f4a_7c15 }

// Denoiser runs the band-wise K-SVD.
type Denoiser struct {
	Options Options
	// Report, if not nil, receives the progress over the bands and a
	// summary line.
	Report report.Reporter
}

// Denoise returns the estimate of the clean cube for noise of standard
// deviation sigma > 0 on the [0, 255] scale, band by band. It stops with
// ctx.Err() when ctx is cancelled.
func (d *Denoiser) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	log := report.OrDiscard(d.Report)
	o := d.Options.Resolve(sigma)
	if err := o.Validate(noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return nil, err
	}
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return nil, option.Errorf("sigma", sigma, "noise level must be a finite number > 0, got %v", sigma)
	}
	out := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
	if noisy.Wavelengths != nil {
		out.Wavelengths = append([]float64(nil), noisy.Wavelengths...)
	}
	k := sideAtoms(o.Atoms)
	var total ksvd.Times
	log.Start("band-wise K-SVD", "bands", int64(noisy.Bands))
	for b := range noisy.Bands {
		in := &msi.Cube{Height: noisy.Height, Width: noisy.Width, Bands: 1, Data: noisy.Band(b)}
		res := &msi.Cube{Height: noisy.Height, Width: noisy.Width, Bands: 1, Data: out.Band(b)}
		t, err := ksvd.Denoise(ctx, res, in, sigma, ksvd.Settings{
			Patch: o.Patch, Depth: 1, SideAtoms: k, DepthAtoms: 1,
			Iters: o.Iters, Samples: o.Samples, Seed: bandSeed(o.Seed, b),
			Step: o.Stride, BandStep: 1, Threads: o.Threads,
		})
		if err != nil {
			log.Finish()
			return nil, err
		}
		total.Learn += t.Learn
		total.Code += t.Code
		log.Update(int64(b+1), "")
	}
	log.Finish()
	log.Logf("band-wise K-SVD: learned %d bands in %.1f s, coded them in %.1f s",
		noisy.Bands, total.Learn.Seconds(), total.Code.Seconds())
	return out, nil
}
