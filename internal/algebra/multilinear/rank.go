package multilinear

import (
	"math"
	"slices"
)

// Criterion is an information-theoretic criterion for the number of
// signals: AIC or MDL (Wax and Kailath 1985).
type Criterion int

const (
	// AIC is Akaike's criterion; it tends to overestimate the number of
	// signals for many samples, never to underestimate it.
	AIC Criterion = iota
	// MDL is Rissanen's minimum description length (Schwarz's BIC); it is
	// consistent: for many samples it finds the true number.
	MDL
)

// String returns "aic" or "mdl".
func (c Criterion) String() string {
	if c == MDL {
		return "mdl"
	}
	return "aic"
}

// Scores returns the criterion's value for k = 0..p−1 signals, given the p
// eigenvalues of a sample covariance (in any order) estimated from samples
// independent observations. With l₁ ≥ … ≥ l_p and, for the p−k smallest,
// g their geometric and a their arithmetic mean,
//
//	AIC(k) = −2·N·(p−k)·log(g/a) + 2·k(2p−k),
//	MDL(k) = −N·(p−k)·log(g/a) + ½·k(2p−k)·log N,
//
// the log-likelihood of "p−k equal noise eigenvalues" plus a penalty on the
// k(2p−k) free parameters of k eigenvectors and eigenvalues. Eigenvalues
// below 1e-14 of the largest (round-off of a rank-deficient covariance) are
// raised to that floor so the logarithms stay finite.
func Scores(eigenvalues []float64, samples int, c Criterion) []float64 {
	l := slices.Clone(eigenvalues)
	slices.SortFunc(l, func(a, b float64) int { return -cmpFloat(a, b) })
	p := len(l)
	floor := 1e-14 * math.Max(l[0], math.SmallestNonzeroFloat64)
	for i := range l {
		l[i] = math.Max(l[i], floor)
	}
	n := float64(samples)
	out := make([]float64, p)
	// Sums over the tail l[k:], accumulated from the smallest up.
	sum, logSum := 0.0, 0.0
	for k := p - 1; k >= 0; k-- {
		sum += l[k]
		logSum += math.Log(l[k])
		m := float64(p - k)
		logRatio := logSum/m - math.Log(sum/m) // log(g/a) ≤ 0
		free := float64(k * (2*p - k))
		if c == MDL {
			out[k] = -n*m*logRatio + 0.5*free*math.Log(n)
		} else {
			out[k] = -2*n*m*logRatio + 2*free
		}
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// EstimateRank returns the number of signals k in [0, p−1] that minimises
// the criterion's Scores (the smallest such k on a tie).
func EstimateRank(eigenvalues []float64, samples int, c Criterion) int {
	s := Scores(eigenvalues, samples, c)
	best := 0
	for k, v := range s {
		if v < s[best] {
			best = k
		}
	}
	return best
}
