package ksvd

import (
	"context"
	"fmt"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/report"
)

// The 3-D K-SVD, the method "3dksvd" (the baseline of the paper's Table
// 2): the K-SVD denoiser of Elad and Aharon (2006) on 3-D patches of p×p
// pixels × d consecutive bands, so that one dictionary models the spatial
// and the spectral structure together. The pipeline is Denoise's: a
// separable overcomplete DCT dictionary (the Kronecker product of 1-D DCTs
// along the bands, the rows and the columns), K-SVD on random noisy 3-D
// patches of the whole cube with their means removed, Batch-OMP coding of
// every 3-D patch position (spatial and spectral step 1 by default) to
// ‖Rᵢy − Dαᵢ‖ ≤ 1.15·σ·√n, n = p²d, and the per-voxel average
// x̂ = (λy + Σ RᵢᵀDαᵢ)/(λ + Σ RᵢᵀRᵢ), λ = 30/σ.
//
// Shape. The default patch is 5×5×5 (the paper's patch size for its own
// method) with 320 atoms: 8 DCT frequencies per spatial axis (2.6 times
// overcomplete) and the square 5-point DCT along the bands (the spectra of
// natural scenes are smooth, so spectral overcompleteness buys little).
// On a 128×128×31 balloons crop at σ = 30 a 6×6×5 patch with 10·10·5 = 500
// atoms gained 0.08 dB (36.98 against 36.90 dB) for 1.9 times the time,
// and a spatial stride of 2 instead of 1 lost 0.66 dB: every position is
// coded.

// Defaults of Options3D (Resolve).
const (
	Default3DPatch = 5
	Default3DDepth = 5
	Default3DAtoms = 320 // 8·8 spatial frequencies × 5 spectral ones
	// Default3DIters is the number of K-SVD iterations (the paper's 10–15;
	// learning starts from the DCT and gains little after 10).
	Default3DIters = 10
	// Default3DSamples is the number of training patches drawn from the
	// whole cube: 125 per atom.
	Default3DSamples = 40000
)

// Options3D are the settings of the 3-D K-SVD; a zero field takes its
// default (Resolve).
type Options3D struct {
	Patch   int    // window side p in pixels (flag "patch")
	Depth   int    // window depth d in bands (flag "depth")
	Atoms   int    // dictionary size K = k²·d, k ≥ Patch DCT frequencies per spatial axis (flag "atoms")
	Iters   int    // K-SVD iterations (flag "iters")
	Samples int    // training patches drawn from the cube (flag "samples")
	Stride  int    // spatial step between coded patch positions, ≤ Patch (flag "stride")
	Seed    uint64 // seed of the training sample; 0 becomes 1 (flag "seed")
	Threads int    // worker goroutines (0: GOMAXPROCS); the output does not depend on it
}

// Resolve returns o with its zero settings set to their defaults
// (fields3D), which do not depend on the noise level.
func (o Options3D) Resolve(sigma float64) Options3D { return fields3D.Resolve(o, sigma) }

// Validate checks resolved options against a cube of height×width×bands.
func (o Options3D) Validate(height, width, bands int) error {
	for _, err := range []error{
		fields3D.Check(&o),
		denoise.CheckStride(o.Stride, o.Patch),
	} {
		if err != nil {
			return err
		}
	}
	k := sideAtoms(o.Atoms, o.Depth)
	switch {
	case k == 0:
		return option.Errorf("atoms", o.Atoms, "number of atoms must be k²×depth (k DCT frequencies per spatial axis, depth %d), got %d", o.Depth, o.Atoms)
	case k < o.Patch:
		return option.Errorf("atoms", o.Atoms, "%d atoms are fewer than the DCT of a %d×%d×%d patch", o.Atoms, o.Patch, o.Patch, o.Depth)
	case o.Samples < o.Atoms:
		return option.Errorf("samples", o.Samples, "%d training samples are fewer than the %d atoms to learn", o.Samples, o.Atoms)
	}
	if err := denoise.CheckPatchFits(height, width, bands, o.Patch, o.Depth); err != nil {
		return err
	}
	if (height-o.Patch+1)*(width-o.Patch+1)*(bands-o.Depth+1) < o.Atoms {
		return option.Errorf("atoms", o.Atoms, "a %d×%d×%d image has fewer patch positions than the %d atoms to learn: it needs at least %d (a larger cube, or fewer --atoms)", height, width, bands, o.Atoms, o.Atoms)
	}
	return nil
}

// Denoiser3D runs the 3-D K-SVD. It keeps nothing from one run to the
// next, and may be used by several goroutines at once.
type Denoiser3D struct {
	Options Options3D
	// Report, if not nil, receives the progress of the coding and a
	// summary line.
	Report report.Reporter
}

// Check returns the error Denoise would return for noise level sigma on a
// cube of height×width×bands.
func (d *Denoiser3D) Check(sigma float64, height, width, bands int) error {
	return d.Options.Resolve(sigma).Validate(height, width, bands)
}

// Denoise returns the estimate of the clean cube for noise of standard
// deviation sigma > 0 on the [0, 255] scale. It stops with ctx.Err() when
// ctx is cancelled.
func (d *Denoiser3D) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	log := report.OrDiscard(d.Report)
	o := d.Options.Resolve(sigma)
	if err := o.Validate(noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return nil, denoise.Result{}, err
	}
	out := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
	if noisy.Wavelengths != nil {
		out.Wavelengths = append([]float64(nil), noisy.Wavelengths...)
	}
	started := false
	t, err := Denoise(ctx, out, noisy, sigma, Settings{
		Patch: o.Patch, Depth: o.Depth, SideAtoms: sideAtoms(o.Atoms, o.Depth), DepthAtoms: o.Depth,
		Iters: o.Iters, Samples: o.Samples, Seed: o.Seed,
		Step: o.Stride, BandStep: 1, Threads: o.Threads,
		Progress: func(done, total int) {
			if !started {
				log.Start("3-D K-SVD coding", "rows", int64(total))
				started = true
			}
			log.Update(int64(done), "")
		},
	})
	if started {
		log.Finish()
	}
	if err != nil {
		return nil, denoise.Result{}, err
	}
	log.Logf("3-D K-SVD: learned %d atoms in %.1f s, coded the patches in %.1f s", o.Atoms, t.Learn.Seconds(), t.Code.Seconds())
	return out, denoise.Result{Settings: denoise.Params("patch", o.Patch, "depth", o.Depth, "atoms", o.Atoms, "iters", o.Iters,
		"samples", o.Samples, "stride", o.Stride, "seed", o.Seed)}, nil
}

// fields3D are the settings of 3dksvd.
var fields3D = denoise.Fields[Options3D]{
	denoise.Value(patchRule, func(o *Options3D) *int { return &o.Patch }, Default3DPatch),
	denoise.Value(denoise.Depth, func(o *Options3D) *int { return &o.Depth }, Default3DDepth),
	denoise.Value(denoise.Atoms, func(o *Options3D) *int { return &o.Atoms }, Default3DAtoms),
	denoise.Value(denoise.Iters, func(o *Options3D) *int { return &o.Iters }, Default3DIters),
	denoise.Value(denoise.Samples, func(o *Options3D) *int { return &o.Samples }, Default3DSamples),
	denoise.Value(denoise.Stride, func(o *Options3D) *int { return &o.Stride }, defaultStride),
	denoise.Value(denoise.Seed, func(o *Options3D) *uint64 { return &o.Seed }, defaultSeed),
}

// Spec3D declares the method 3dksvd.
var Spec3D = denoise.Spec{
	Name: "3dksvd",
	Summary: fmt.Sprintf("K-SVD on %d×%d×%d spatio-spectral patches, %d atoms (paper's baseline)",
		Default3DPatch, Default3DPatch, Default3DDepth, Default3DAtoms),
	Settings: fields3D.Settings(),
	New: func(c denoise.Config) (denoise.Method, error) {
		o := fields3D.Options(c.Values)
		o.Threads = c.Threads
		return &Denoiser3D{Report: c.Report, Options: o}, nil
	},
	// Peak RSS 356 MiB.
	BytesPerVoxel: 46,
}
