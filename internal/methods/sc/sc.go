// Package sc is conventional (vectorised) sparse coding on exactly the
// patches of the 2DSC pipeline, the method "sc": the baseline the paper's
// central claim is measured against.
//
// Every p×p-pixel × q-band patch (mean removed) is one p²q-vector x, coded
// as min_b ½‖x − Db‖² + β‖b‖₁ over a dictionary D of m unit-norm columns
// learned from the noisy cube by the same alternation of FISTA coding and
// Lagrange-dual dictionary update as 2DSC. It is the k = 1 case of the 2DSC
// problem (a (p²q)×1×1 tensor over (p²q)×m×1 atoms, where the t-product is
// the matrix product), so it runs through package twodsc with
// Options.Vectorised set: the same sample, step, β, iteration limits and
// averaging, and only the model differs.
//
// The number of atoms m defaults to r·q (150 = 30 × 5 for the 2DSC
// defaults): the number of real columns of 2DSC's block-circulant
// dictionary, so that the two models have the same number of parameters
// per atom column; Options.Atoms = r compares at equal atoms instead.
package sc

import (
	"context"

	"tdsc/internal/methods/twodsc"
	"tdsc/internal/msi"
	"tdsc/internal/report"
	"tdsc/internal/tile"
)

// Denoiser is the sc pipeline: learn a vectorised dictionary from the noisy
// cube, code every patch over it, average the reconstructions.
type Denoiser struct {
	// Options are the 2DSC settings the pipeline runs with (Vectorised is
	// set by Resolve); a zero Atoms takes DefaultAtoms.
	Options twodsc.Options
	// Report, if not nil, receives the stages' progress and log lines.
	Report report.Reporter

	tiles *twodsc.Denoiser // the pipeline PrepareTiles readied for strips
}

// DefaultAtoms returns the default number of atoms for patches of depth q:
// twodsc.DefaultAtoms·q, the column count of the default 2DSC dictionary's
// block-circulant matrix.
func DefaultAtoms(depth int) int { return twodsc.DefaultAtoms * depth }

// Resolve returns o with its zero fields set for noise level sigma:
// twodsc's defaults (twodsc.Options.Resolve) except Atoms, which is
// DefaultAtoms(Depth), and Vectorised, which is always set.
func Resolve(o twodsc.Options, sigma float64) twodsc.Options {
	o.Vectorised = true
	if o.Atoms == 0 {
		depth := o.Depth
		if depth == 0 {
			depth = twodsc.DefaultDepth
		}
		o.Atoms = DefaultAtoms(depth)
	}
	return o.Resolve(sigma)
}

// Resolved returns the settings Denoise uses for noise level sigma.
func (d *Denoiser) Resolved(sigma float64) twodsc.Options { return Resolve(d.Options, sigma) }

// Denoise returns the sc estimate of the clean cube for noise of standard
// deviation sigma > 0 on the [0, 255] scale. It stops with ctx.Err() when
// ctx is cancelled; the result does not depend on Options.Threads.
func (d *Denoiser) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
	if d.tiles != nil {
		return d.tiles.Denoise(ctx, noisy, sigma)
	}
	p := twodsc.Denoiser{Options: d.Resolved(sigma), Report: d.Report}
	return p.Denoise(ctx, noisy, sigma)
}

// TileGeometry returns the strips under which denoising strip by strip,
// after PrepareTiles, gives the whole cube's result bit for bit, as for
// 2dsc (twodsc.Options.TileGeometry).
func (d *Denoiser) TileGeometry(sigma float64) tile.Geometry {
	o := d.Resolved(sigma)
	return o.TileGeometry()
}

// PrepareTiles learns the dictionary from the cube of r as Denoise of the
// whole cube would (twodsc.Denoiser.PrepareTiles); every later Denoise
// codes a strip with it.
func (d *Denoiser) PrepareTiles(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64) error {
	d.tiles = &twodsc.Denoiser{Options: d.Resolved(sigma), Report: d.Report}
	return d.tiles.PrepareTiles(ctx, r, strips, sigma)
}
