package bandwhiten

import (
	"context"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/methods/nonlocal"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/testenv"
	"tdsc/internal/testenv/cubetest"
)

// regressionPSNR is the PSNR (dB) that TestRegressionBalloons reached when
// it was recorded; the test fails 0.3 dB below it. Raise it when the
// results improve; lowering it needs a reason in the commit that does so.
// (The same method given the single median σ reached 36.5303 dB on the
// same noisy crop: whitening is worth 4.1 dB here.)
const regressionPSNR = 40.6677

// TestRegressionBalloons is the CI regression run: per-band σ drawn from
// 10:70 (seed 1) on a fixed 64×64×31 crop of the shared balloons scene
// (rows 256–319, columns 192–255), the band σs estimated by the MAD
// estimator, and the nonlocal method run on the whitened cube with the
// default options.
func TestRegressionBalloons(t *testing.T) {
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
	sigmas := noise.Estimate(noisy)
	method := func(ctx context.Context, c *msi.Cube, sigma float64) (*msi.Cube, error) {
		out, _, err := (&nonlocal.Denoiser{}).Denoise(ctx, c, sigma)
		return out, err
	}
	ctx := context.Background()
	whitened, err := Denoise(ctx, method, noisy, sigmas, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := cubetest.PSNR(t, clean, whitened)
	t.Logf("PSNR %.4f dB (recorded %.4f dB)", got, regressionPSNR)
	if got < regressionPSNR-0.3 {
		t.Errorf("PSNR %.4f dB is more than 0.3 dB below the recorded %.4f dB", got, regressionPSNR)
	}
}
