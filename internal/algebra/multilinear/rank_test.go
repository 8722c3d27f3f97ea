package multilinear

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCriteriaFindSignalCount draws N samples of k random signals in p
// dimensions plus white noise, and checks that AIC and MDL on the sample
// covariance's eigenvalues name k: MDL always, AIC in most draws and
// never fewer.
func TestCriteriaFindSignalCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	aicExact := 0
	const trials = 40
	for trial := 0; trial < trials; trial++ {
		p, k, n := 8+rng.IntN(12), 1+rng.IntN(5), 2000
		mix := randomMatrix(rng, p, k)
		data := mat.NewDense(n, p, nil)
		for s := 0; s < n; s++ {
			amp := make([]float64, k)
			for i := range amp {
				amp[i] = rng.NormFloat64()
			}
			for d := 0; d < p; d++ {
				v := rng.NormFloat64() * 0.5
				for i := range amp {
					v += mix.At(d, i) * amp[i]
				}
				data.Set(s, d, v)
			}
		}
		var cov mat.SymDense
		cov.SymOuterK(1/float64(n), data.T())
		var eig mat.EigenSym
		if !eig.Factorize(&cov, false) {
			t.Fatal("eigen failed")
		}
		vals := eig.Values(nil)
		if got := EstimateRank(vals, n, MDL); got != k {
			t.Errorf("trial %d (p %d): MDL found %d signals, want %d", trial, p, got, k)
		}
		got := EstimateRank(vals, n, AIC)
		if got < k || got > k+2 {
			t.Errorf("trial %d (p %d): AIC found %d signals, want %d to %d", trial, p, got, k, k+2)
		}
		if got == k {
			aicExact++
		}
	}
	// AIC is not consistent: the largest noise eigenvalue of a sample
	// covariance stands out by more than its penalty now and then, so it
	// overestimates by one in a sizeable fraction of draws, but it is
	// right in most.
	t.Logf("AIC exact in %d of %d draws", aicExact, trials)
	if aicExact < trials/2 {
		t.Errorf("AIC exact in only %d of %d draws", aicExact, trials)
	}
}

// TestCriteriaWhiteNoise: equal eigenvalues are zero signals, and a
// rank-deficient spectrum (zeros) stays finite.
func TestCriteriaWhiteNoise(t *testing.T) {
	if got := EstimateRank([]float64{2, 2, 2, 2}, 100, MDL); got != 0 {
		t.Errorf("equal eigenvalues: %d signals", got)
	}
	s := Scores([]float64{5, 3, 0, 0}, 100, AIC)
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("scores %v not finite", s)
		}
	}
}
