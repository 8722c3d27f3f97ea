package parafac

import (
	"context"
	"testing"

	"tdsc/internal/testenv/regress"
)

// regressionPSNR is the PSNR (dB) that the default settings reached in
// TestRegressionBalloons when it was recorded; the test fails 0.3 dB below
// it.
const regressionPSNR = 35.9189

// TestRegressionBalloons: σ = 30 noise (seed 1) on the 96×96×31 crop of
// the shared balloons scene at rows 256–351, columns 192–287, denoised with
// the default options.
func TestRegressionBalloons(t *testing.T) {
	clean, noisy := regress.Balloons(t, 256, 192, 0, 96, 31, 30)
	out, _, err := (&Denoiser{}).Denoise(context.Background(), noisy, 30)
	if err != nil {
		t.Fatal(err)
	}
	regress.Check(t, clean, out, regressionPSNR)
}
