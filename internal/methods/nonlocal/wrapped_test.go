package nonlocal

import (
	"context"
	"math"
	"slices"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/stages/bandwhiten"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/testenv"
	"tdsc/internal/testenv/regress"
)

// The method inside the stages that wrap it in the pipeline: whitening
// the bands (bandwhiten) and the real-noise repair path (repair). The
// stages' own tests use small stand-in methods; these run the real one.

// asStageMethod is d's Denoise as the stages call a method, without the
// settings it reports.
func asStageMethod(d *Denoiser) bandwhiten.Method {
	return func(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error) {
		out, _, err := d.Denoise(ctx, noisy, sigma)
		return out, err
	}
}

// whitenedRegressionPSNR is the PSNR (dB) that TestRegressionWhitened
// reached when it was recorded; the test fails regress.Tolerance below it.
// Raise it when the results improve; lowering it needs a reason in the
// commit that does so. (The same method given the single median σ reached
// 36.5303 dB on the same noisy crop: whitening is worth 4.1 dB here.)
const whitenedRegressionPSNR = 40.6677

// TestRegressionWhitened is the CI regression run of the method on
// whitened bands: per-band σ drawn from 10:70 (seed 1) on a fixed
// 64×64×31 crop of the shared balloons scene (rows 256–319, columns
// 192–255), the band σs estimated by the MAD estimator, and the method
// run with its defaults on the cube whitened by them.
func TestRegressionWhitened(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	full, err := formats.Open(testenv.Path(t, "cave", "balloons_ms"))
	if err != nil {
		t.Fatal(err)
	}
	const y0, x0, n = 256, 192, 64
	clean := full.Crop(y0, x0, 0, n, n, full.Bands)
	noisy, _, err := noise.Simulate(nil, clean, noise.Spec{SigmaRange: noise.Range{Lo: 10, Hi: 70}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	whitened, err := bandwhiten.Denoise(t.Context(), asStageMethod(&Denoiser{}), noisy, noise.Estimate(noisy), bandwhiten.Options{})
	if err != nil {
		t.Fatal(err)
	}
	regress.Check(t, clean, whitened, whitenedRegressionPSNR)
}

// TestRepairDeterministic runs the repair path around the method on a
// small crop with the mixture case's noise with 1 and 2 threads: the
// outputs must be bit-identical.
func TestRepairDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the repair path around the method twice")
	}
	crop, err := formats.Open("../../../testdata/balloons_crop128")
	if err != nil {
		t.Fatal(err)
	}
	small := crop.Crop(0, 0, 0, 48, 48, crop.Bands)
	noisy, _, err := noise.SimulateCase(nil, small, noise.CaseMixture, 1)
	if err != nil {
		t.Fatal(err)
	}
	det := sparsenoise.Detect(noisy)
	var outs [2]*repair.Result
	for i, threads := range []int{1, 2} {
		d := &Denoiser{Options: Options{Threads: threads}}
		if outs[i], err = repair.Remove(t.Context(), noisy, det, asStageMethod(d), repair.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(outs[0].Estimate.Data, outs[1].Estimate.Data) || !slices.Equal(outs[0].Sparse.Data, outs[1].Sparse.Data) {
		t.Error("the repair path's output differs between 1 and 2 threads")
	}
	for _, v := range outs[0].Estimate.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatal("estimate holds a NaN or Inf")
		}
	}
}
