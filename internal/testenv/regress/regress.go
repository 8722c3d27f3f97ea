// Package regress holds what the methods' regression tests share: a crop of
// the shared balloons scene, noised as Table 2 does, and the check of a
// result's PSNR against the value recorded when the test was written.
package regress

import (
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/testenv"
)

// Tolerance is how far (dB) a regression run may fall below its recorded
// PSNR.
const Tolerance = 0.3

// Balloons returns the n×n×bands crop of the shared full-resolution
// balloons scene whose first voxel is (y0, x0, b0), and that crop with
// Gaussian noise of standard deviation sigma (seed 1). It skips the test
// under -short, since it reads a full scene.
func Balloons(t *testing.T, y0, x0, b0, n, bands int, sigma float64) (clean, noisy *msi.Cube) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	full, err := formats.Open(testenv.Path(t, "cave", "balloons_ms"))
	if err != nil {
		t.Fatal(err)
	}
	clean = full.Crop(y0, x0, b0, n, n, bands)
	return clean, noise.Add(nil, clean, sigma, 1)
}

// Check logs the PSNR of out against clean and fails the test when it is
// more than Tolerance below recorded.
func Check(t *testing.T, clean, out *msi.Cube, recorded float64) {
	t.Helper()
	r, err := metrics.Evaluate(t.Context(), clean, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PSNR %.4f dB (recorded %.4f dB)", r.PSNR, recorded)
	if r.PSNR < recorded-Tolerance {
		t.Errorf("PSNR %.4f dB is more than %g dB below the recorded %.4f dB", r.PSNR, Tolerance, recorded)
	}
}
