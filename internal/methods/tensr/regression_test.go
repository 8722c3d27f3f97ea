package tensr

import (
	"context"
	"testing"

	"tdsc/internal/testenv/regress"
)

// regressionPSNR is the PSNR (dB) that the default settings reached in
// TestRegressionBalloons when it was recorded; the test fails 0.3 dB below
// it. Raise it when the defaults improve; lowering it needs a reason in the
// commit that does so.
const regressionPSNR = 37.0483

// TestRegressionBalloons is the CI regression run: σ = 30 noise (seed 1) on
// a fixed 64×64×31 crop of the shared full-resolution balloons scene (rows
// 256–319, columns 192–255), denoised with the default settings.
func TestRegressionBalloons(t *testing.T) {
	clean, noisy := regress.Balloons(t, 256, 192, 0, 64, 31, 30)
	out, _, err := (&Denoiser{}).Denoise(context.Background(), noisy, 30)
	if err != nil {
		t.Fatal(err)
	}
	regress.Check(t, clean, out, regressionPSNR)
}
