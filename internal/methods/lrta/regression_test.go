package lrta

import (
	"context"
	"testing"

	"tdsc/internal/testenv/regress"
)

// regressionPSNR is the PSNR (dB) that the default settings reached in
// TestRegressionBalloons when it was recorded; the test fails 0.3 dB below
// it.
const regressionPSNR = 37.835

// TestRegressionBalloons: σ = 30 noise (seed 1) on the 128×128×31 crop of
// the shared balloons scene at rows 256–383, columns 192–319, denoised with
// the default options.
func TestRegressionBalloons(t *testing.T) {
	clean, noisy := regress.Balloons(t, 256, 192, 0, 128, 31, 30)
	out, _, err := (&Denoiser{}).Denoise(context.Background(), noisy, 30)
	if err != nil {
		t.Fatal(err)
	}
	regress.Check(t, clean, out, regressionPSNR)
}
