package vst

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
)

// levels are the noise levels (a, b) the tests run on: the three,
// pure Poisson and a small gain with large read noise.
var levels = []noise.Level{{A: 2, B: 16}, {A: 0.5, B: 36}, {A: 4, B: 1}, {A: 1, B: 0}, {A: 4, B: 0}}

// expectedTransform returns E[f(y)] for y = a·Poisson(x/a) + N(0, b), by
// brute force: the Poisson sum to 12 standard deviations past the mean,
// and for each count the Gaussian integral by the trapezoidal rule on
// ±8 standard deviations (4001 points; the integrand is smooth and its
// weight negligible at the ends, so the rule is accurate far below the
// tolerances here).
func expectedTransform(x, a, b float64) float64 {
	lambda := x / a
	pois := distuv.Poisson{Lambda: lambda}
	const n = 4001
	const width = 16.0
	ts := make([]float64, n)
	weights := make([]float64, n)
	for j := range ts {
		ts[j] = -width/2 + width*float64(j)/(n-1)
		weights[j] = math.Exp(-ts[j]*ts[j]/2) / math.Sqrt(2*math.Pi) * width / (n - 1)
	}
	weights[0] /= 2
	weights[n-1] /= 2
	ys := make([]float64, n)
	var total float64
	for k := 0; k <= int(lambda+12*math.Sqrt(lambda)+30); k++ {
		for j, t := range ts {
			ys[j] = a*float64(k) + math.Sqrt(b)*t
		}
		Forward(ys, ys, a, b)
		var s float64
		for j, w := range weights {
			s += w * ys[j]
		}
		total += pois.Prob(float64(k)) * s
	}
	return total
}

// simulated returns n draws of y = a·Poisson(x/a) + N(0, b) from the
// project's simulator.
func simulated(t *testing.T, x float64, l noise.Level, n int, seed uint64) []float64 {
	t.Helper()
	c := msi.NewCube(1, n, 1)
	for i := range c.Data {
		c.Data[i] = x
	}
	y, _, err := noise.Simulate(nil, c, noise.Spec{PoissonGaussian: []noise.Level{l}, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return y.Data
}

func meanVariance(v []float64) (mean, variance float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(v)-1)
}

// The brute-force expectation agrees with a Monte Carlo mean, so it can
// stand as the oracle of the inverse.
func TestExpectedTransformAgreesWithMonteCarlo(t *testing.T) {
	for i, l := range levels {
		for _, x := range []float64{1, 30, 200} {
			y := simulated(t, x, l, 100000, uint64(10+i))
			Forward(y, y, l.A, l.B)
			mean, variance := meanVariance(y)
			want := expectedTransform(x, l.A, l.B)
			if tol := 5 * math.Sqrt(variance/float64(len(y))); math.Abs(mean-want) > tol {
				t.Errorf("%v, x = %g: Monte Carlo mean %.5f, brute force %.5f (tolerance %.5f)", l, x, mean, want, tol)
			}
		}
	}
}

// Forward stabilises the variance: on simulated noise the transformed
// values have variance 1 within 6 % wherever the count x/a is 4 or more
// (below, no transform can: at one count the variance is 0.6–1.15 for
// these levels).
func TestForwardStabilisesVariance(t *testing.T) {
	const n = 40000
	for i, l := range levels {
		for _, x := range []float64{2, 5, 10, 20, 50, 100, 150, 200, 255} {
			if x/l.A < 4 {
				continue
			}
			y := simulated(t, x, l, n, uint64(100+i))
			Forward(y, y, l.A, l.B)
			_, variance := meanVariance(y)
			// The sampling error of a variance near 1 is √(2/n) ≈ 0.007.
			if math.Abs(variance-1) > 0.06 {
				t.Errorf("%v, x = %g: variance of the transform %.4f, want 1 ± 0.06", l, x, variance)
			}
			// Without the transform the variance is a·x + b.
			if raw := l.Variance(x); raw < 2 {
				t.Fatalf("%v, x = %g: a test level with noise variance %g is no test", l, x, raw)
			}
		}
	}
}

// Forward's derivative is 1/σ(y) (finite differences): that is what makes
// it stabilise the variance.
func TestForwardDerivative(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		a, b := 4*rng.Float64(), 50*rng.Float64()+0.01
		y := 1 + 254*rng.Float64()
		const h = 1e-5
		v := []float64{y - h, y + h}
		Forward(v, v, a, b)
		got := (v[1] - v[0]) / (2 * h)
		want := 1 / math.Sqrt(a*y+3.0/8*a*a+b)
		if math.Abs(got-want) > 1e-6*want {
			t.Fatalf("a = %g, b = %g, y = %g: f' = %.9g, want %.9g", a, b, y, got, want)
		}
	}
}

// algebraicInverse is f⁻¹, the inverse that ignores the bias.
func algebraicInverse(d, a, b float64) float64 {
	return (a*d/2)*(a*d/2)/a - 3.0/8*a - b/a
}

// The unbiased inverse of E[f(y)] gives x back within 0.04·a over the
// range, where the algebraic inverse is off by more than 0.2·a (about a/4)
// wherever the count is 4 or more.
func TestInverseIsUnbiased(t *testing.T) {
	for _, l := range levels {
		for _, x := range []float64{0.5, 1, 2, 4, 8, 16, 32, 64, 128, 255} {
			d := expectedTransform(x, l.A, l.B)
			got := []float64{d}
			Inverse(got, got, l.A, l.B)
			alg := algebraicInverse(d, l.A, l.B)
			if err := got[0] - x; math.Abs(err) > 0.04*l.A {
				t.Errorf("%v, x = %g: unbiased inverse %.4f (error %.4f > %.4f)", l, x, got[0], err, 0.04*l.A)
			}
			if err := alg - x; x/l.A >= 4 && math.Abs(err) <= 0.2*l.A {
				t.Errorf("%v, x = %g: the algebraic inverse %.4f is unbiased too (error %.4f): the test shows nothing", l, x, alg, err)
			}
		}
	}
}

// Below the transform of a zero count the inverse is 0, and the
// polynomial is 0 there, so the inverse is continuous; NaN stays NaN.
func TestInverseLowEnd(t *testing.T) {
	v := []float64{0, 0.5, 1, zeroCount - 1e-9, zeroCount, zeroCount + 1e-6, math.NaN()}
	Inverse(v, v, 1, 0)
	for i, want := range []float64{0, 0, 0, 0, 0, 0} {
		if math.Abs(v[i]-want) > 1e-5 {
			t.Errorf("value %d: %g, want %g", i, v[i], want)
		}
	}
	if !math.IsNaN(v[6]) {
		t.Errorf("NaN became %g", v[6])
	}
	// Increasing above it.
	prev := 0.0
	for d := zeroCount; d < 40; d += 0.01 {
		v := []float64{d}
		Inverse(v, v, 2, 16)
		if v[0] < prev {
			t.Fatalf("the inverse decreases at D = %g: %g after %g", d, v[0], prev)
		}
		prev = v[0]
	}
}

// With a = 0 the transform is y/√b and its inverse D·√b: a round trip is
// the identity, and the variance of Gaussian noise becomes 1.
func TestGaussianBand(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := make([]float64, 1000)
	for i := range src {
		src[i] = 300*rng.Float64() - 20
	}
	f := make([]float64, len(src))
	Forward(f, src, 0, 25)
	back := make([]float64, len(src))
	Inverse(back, f, 0, 25)
	for i := range src {
		if math.Abs(f[i]-src[i]/5) > 1e-12 || math.Abs(back[i]-src[i]) > 1e-12 {
			t.Fatalf("value %g: forward %g, back %g", src[i], f[i], back[i])
		}
	}
	y := simulated(t, 100, noise.Level{A: 0, B: 49}, 40000, 5)
	Forward(y, y, 0, 49)
	if _, variance := meanVariance(y); math.Abs(variance-1) > 0.03 {
		t.Errorf("variance %.4f, want 1", variance)
	}
}

func TestBadLevelsPanic(t *testing.T) {
	for _, l := range []noise.Level{{A: 0, B: 0}, {A: -1, B: 2}, {A: 1, B: -2}, {A: math.NaN(), B: 1}, {A: 1, B: math.Inf(1)}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%v: no panic", l)
				}
			}()
			Forward(make([]float64, 1), make([]float64, 1), l.A, l.B)
		}()
	}
}

// The cube's transform: one noise σ, Scale, in every band of the
// stabilised cube; each band's mean where it was; a round trip through
// Transform is the band transforms' round trip; NaN stays missing.
func TestTransform(t *testing.T) {
	const h, w = 100, 100
	values := []float64{20, 120, 200, 60, 90}
	clean := msi.NewCube(h, w, len(values))
	for b, v := range values {
		for i := range clean.Band(b) {
			clean.Band(b)[i] = v
		}
	}
	noisy, _, err := noise.Simulate(nil, clean, noise.Spec{PoissonGaussian: levels, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	noisy.Band(1)[17] = math.NaN()
	a, b := make([]float64, len(levels)), make([]float64, len(levels))
	var power float64
	for i, l := range levels {
		a[i], b[i] = l.A, l.B
		power += l.A*bandMean(noisy.Band(i)) + l.B
	}
	tr := New(noisy, a, b)
	if want := math.Sqrt(power / float64(len(levels))); math.Abs(tr.Scale-want) > 1e-12 {
		t.Errorf("scale %v, want %v", tr.Scale, want)
	}
	z := tr.Forward(nil, noisy)
	if !math.IsNaN(z.Band(1)[17]) {
		t.Errorf("a missing voxel became %v", z.Band(1)[17])
	}
	for band := range values {
		m := bandMean(noisy.Band(band))
		v := []float64{m}
		Forward(v, v, a[band], b[band])
		if got := tr.Scale*v[0] + tr.Offset[band]; math.Abs(got-m) > 1e-9 {
			t.Errorf("band %d: its mean %v is stabilised to %v", band, m, got)
		}
		_, variance := meanVariance(withoutNaN(z.Band(band)))
		if sd := math.Sqrt(variance); math.Abs(sd/tr.Scale-1) > 0.04 {
			t.Errorf("band %d: stabilised noise σ %.4f, want the scale %.4f", band, sd, tr.Scale)
		}
	}
	back := tr.Inverse(nil, z)
	for band := range values {
		want := append([]float64(nil), noisy.Band(band)...)
		Forward(want, want, a[band], b[band])
		Inverse(want, want, a[band], b[band])
		for i, v := range back.Band(band) {
			if math.IsNaN(want[i]) != math.IsNaN(v) || math.Abs(v-want[i]) > 1e-9*(1+math.Abs(want[i])) {
				t.Fatalf("band %d voxel %d: round trip %v, band transforms %v", band, i, v, want[i])
			}
		}
	}
	// In place.
	tr.Inverse(z, tr.Forward(z, noisy))
	if math.Abs(z.Data[5]-back.Data[5]) > 1e-12 {
		t.Errorf("in place %v, not %v", z.Data[5], back.Data[5])
	}
}

func withoutNaN(v []float64) []float64 {
	var out []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// A gain too small to matter beside the read noise is taken as 0, and the
// transform is then continuous with the one of a small but counted gain.
func TestTinyGainIsGaussian(t *testing.T) {
	c := msi.NewCube(2, 2, 2)
	copy(c.Data, []float64{10, 20, 30, 40, 10, 20, 30, 40})
	tr := New(c, []float64{1e-12, 1e-6}, []float64{16, 16})
	if tr.A[0] != 0 || tr.A[1] != 1e-6 {
		t.Errorf("gains %v, want the first taken as 0", tr.A)
	}
	z := tr.Forward(nil, c)
	for i := range 4 {
		if d := math.Abs(z.Band(0)[i] - z.Band(1)[i]); d > 1e-3 {
			t.Errorf("voxel %d: %v with a = 0, %v with a = 1e-6", i, z.Band(0)[i], z.Band(1)[i])
		}
	}
}
