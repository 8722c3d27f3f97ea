// Package cubetest holds the comparisons of cubes that tests of several
// packages make.
package cubetest

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

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

// Orthonormal returns a random rows×cols matrix of orthonormal columns
// (cols ≤ rows): the first columns of the Q of the QR factorisation of a
// matrix of standard normal entries drawn from rng row by row.
func Orthonormal(rng *rand.Rand, rows, cols int) *mat.Dense {
	a := mat.NewDense(rows, cols, nil)
	for i := range rows {
		for j := range cols {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var q mat.Dense
	qr.QTo(&q)
	return q.Slice(0, rows, 0, cols).(*mat.Dense)
}
