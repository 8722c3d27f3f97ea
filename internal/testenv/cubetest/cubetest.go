// Package cubetest holds the comparisons of cubes that tests of several
// packages make.
package cubetest

import (
	"math"
	"testing"

	"tdsc/internal/metrics"
	"tdsc/internal/msi"
)

// PSNR returns the PSNR of x against ref in dB, as tdsc eval computes it
// (package metrics); the test fails if they cannot be compared.
func PSNR(tb testing.TB, ref, x *msi.Cube) float64 {
	tb.Helper()
	r, err := metrics.Evaluate(tb.Context(), ref, x)
	if err != nil {
		tb.Fatal(err)
	}
	return r.PSNR
}

// RMSE returns the root mean square of a − b over every voxel, for cubes
// of the same size.
func RMSE(a, b *msi.Cube) float64 {
	s := 0.0
	for i, v := range a.Data {
		d := v - b.Data[i]
		s += d * d
	}
	return math.Sqrt(s / float64(len(a.Data)))
}
