package parafac

import (
	"context"
	"testing"

	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/testenv"
)

// regressionPSNR is the PSNR (dB) that the default settings reached in
// TestRegressionBalloons when it was recorded; the test fails 0.3 dB below
// it.
const regressionPSNR = 35.9189

// TestRegressionBalloons: σ = 30 noise (seed 1) on the 96×96×31 crop of
// the shared balloons scene at rows 256–351, columns 192–287, denoised with
// the default options.
func TestRegressionBalloons(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	full, err := msi.Open(testenv.Path(t, "cave", "balloons_ms"))
	if err != nil {
		t.Fatal(err)
	}
	const y0, x0, n = 256, 192, 96
	clean := full.Crop(y0, x0, 0, n, n, full.Bands)
	noisy := noise.Add(nil, clean, 30, 1)
	out, err := (&Denoiser{}).Denoise(context.Background(), noisy, 30)
	if err != nil {
		t.Fatal(err)
	}
	r, err := metrics.Evaluate(clean, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PSNR %.4f dB (recorded %.4f dB)", r.PSNR, regressionPSNR)
	if r.PSNR < regressionPSNR-0.3 {
		t.Errorf("PSNR %.4f dB is more than 0.3 dB below the recorded %.4f dB", r.PSNR, regressionPSNR)
	}
}
