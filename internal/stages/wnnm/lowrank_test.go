package wnnm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/lapack"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/mat"
)

// closedForm is the estimate of the package documentation computed with a
// full SVD from gonum.
func closedForm(y []float64, n, d int, sigma, c float64) ([]float64, int) {
	mean := make([]float64, d)
	for i := range n {
		for j := range d {
			mean[j] += y[i*d+j] / float64(n)
		}
	}
	yc := mat.NewDense(n, d, nil)
	for i := range n {
		for j := range d {
			yc.Set(i, j, y[i*d+j]-mean[j])
		}
	}
	var svd mat.SVD
	if !svd.Factorize(yc, mat.SVDThin) {
		panic("svd")
	}
	s := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	noise := (math.Sqrt(float64(n)) + math.Sqrt(float64(d))) * sigma
	x := make([]float64, len(s))
	rank := 0
	for i, sv := range s {
		est := math.Sqrt(math.Max(sv*sv-noise*noise, 0))
		w := c * math.Sqrt(float64(n)) * sigma * sigma / (est + 1e-8)
		x[i] = math.Max(sv-w, 0)
		if x[i] > 0 {
			rank++
		}
	}
	out := make([]float64, n*d)
	for i := range n {
		for j := range d {
			v2 := mean[j]
			for q := range s {
				v2 += u.At(i, q) * x[q] * v.At(j, q)
			}
			out[i*d+j] = v2
		}
	}
	return out, rank
}

// noisyLowRank returns an n×d group of rank r (scaled by amp) plus N(0, σ²).
func noisyLowRank(rng *rand.Rand, n, d, r int, amp, sigma float64) []float64 {
	a := make([]float64, n*r)
	b := make([]float64, r*d)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for i := range b {
		b[i] = rng.NormFloat64() * amp / float64(1+i/d)
	}
	y := make([]float64, n*d)
	for i := range n {
		for j := range d {
			v := 50.0 + float64(j)
			for q := range r {
				v += a[i*r+q] * b[q*d+j]
			}
			y[i*d+j] = v + sigma*rng.NormFloat64()
		}
	}
	return y
}

func relErr(got, want []float64) float64 {
	num, den := 0.0, 0.0
	for i := range got {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

// closeTol is the RMS difference from the SVD's estimate allowed, in units
// of σ: the Lanczos residuals (residualTol) leave the estimate within
// about 4e-5 σ of it where many components lie near the noise floor, and
// within 1e-7 σ elsewhere; a missed or wrong component is off by far more.
const closeTol = 1e-4

func TestShrinkClosedForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		n, d, r    int
		amp, sigma float64
	}{
		{128, 96, 4, 20, 10}, {64, 24, 3, 30, 30}, {16, 40, 2, 25, 5}, {20, 20, 5, 10, 2}, {30, 12, 0, 0, 10}, {12, 8, 8, 50, 1},
		// The nonlocal method's groups (256 patches of 4×4×k), with few
		// components and with more than one Lanczos extension finds.
		{256, 96, 2, 20, 30}, {256, 240, 3, 20, 10}, {256, 160, 40, 20, 10}, {64, 160, 50, 8, 5},
	} {
		y := noisyLowRank(rng, tc.n, tc.d, tc.r, tc.amp, tc.sigma)
		want, wantRank := closedForm(y, tc.n, tc.d, tc.sigma, 8)
		s := New(tc.n, tc.d)
		got := make([]float64, len(y))
		rank := s.Shrink(got, y, tc.sigma, 8, s.NewWorkspace())
		if rank != wantRank {
			t.Errorf("%+v: rank %d, want %d", tc, rank, wantRank)
		}
		if e := rmsDiff(got, want) / tc.sigma; e > closeTol {
			t.Errorf("%+v: %.3g σ RMS from the SVD closed form", tc, e)
		}
		// dst aliasing y.
		s.Shrink(y, y, tc.sigma, 8, s.NewWorkspace())
		if e := rmsDiff(y, want) / tc.sigma; e > closeTol {
			t.Errorf("%+v: in place, %.3g σ RMS from the SVD closed form", tc, e)
		}
	}
}

// TestShrinkNoNoise: with σ = 0 the weights vanish and X = Y.
func TestShrinkNoNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	y := noisyLowRank(rng, 40, 16, 3, 10, 0.5)
	s := New(40, 16)
	got := make([]float64, len(y))
	s.Shrink(got, y, 0, 8, s.NewWorkspace())
	if e := relErr(got, y); e > 1e-10 {
		t.Errorf("σ = 0: relative error %.3g from Y", e)
	}
}

// TestShrinkRankOne checks a hand computation: Y = a bᵀ with centred a,
// singular value ‖a‖‖b‖, so X = (1 − w/s)·Y.
func TestShrinkRankOne(t *testing.T) {
	n, d := 4, 3
	a := []float64{1, -1, 2, -2}
	b := []float64{3, 0, 4}
	y := make([]float64, n*d)
	for i := range n {
		for j := range d {
			y[i*d+j] = a[i] * b[j]
		}
	}
	sigma, c := 0.5, 1.0
	sv := math.Sqrt(10) * 5
	noise := (2 + math.Sqrt(3)) * sigma
	w := c * 2 * sigma * sigma / (math.Sqrt(sv*sv-noise*noise) + 1e-8)
	s := New(n, d)
	got := make([]float64, n*d)
	if r := s.Shrink(got, y, sigma, c, s.NewWorkspace()); r != 1 {
		t.Fatalf("rank %d, want 1", r)
	}
	for i := range y {
		if want := (1 - w/sv) * y[i]; math.Abs(got[i]-want) > 1e-12 {
			t.Fatalf("X[%d] = %v, want %v", i, got[i], want)
		}
	}
}

func TestShrinkAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	y := noisyLowRank(rng, 64, 32, 3, 20, 10)
	s := New(64, 32)
	ws := s.NewWorkspace()
	dst := make([]float64, len(y))
	if a := testing.AllocsPerRun(10, func() { s.Shrink(dst, y, 10, 8, ws) }); a != 0 {
		t.Errorf("Shrink allocates %v times per call", a)
	}
}

func TestShrinkPanics(t *testing.T) {
	s := New(4, 3)
	defer func() {
		if recover() == nil {
			t.Error("Shrink with a short dst did not panic")
		}
	}()
	s.Shrink(make([]float64, 11), make([]float64, 12), 1, 1, s.NewWorkspace())
}

func BenchmarkShrink(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sz := range []struct {
		n, d, r int
		sigma   float64
	}{{128, 96, 5, 10}, {128, 160, 5, 10}, {256, 96, 5, 10}, {256, 240, 5, 10}, {256, 272, 200, 0.2}} {
		// The last: nearly every component survives (a cube whose noise
		// is faint against its detail).
		y := noisyLowRank(rng, sz.n, sz.d, sz.r, 20, sz.sigma)
		s := New(sz.n, sz.d)
		ws := s.NewWorkspace()
		dst := make([]float64, len(y))
		b.Run(fmtSize(sz.n, sz.d), func(b *testing.B) {
			for b.Loop() {
				s.Shrink(dst, y, sz.sigma, 8, ws)
			}
		})
	}
}

func fmtSize(n, d int) string { return itoa(n) + "x" + itoa(d) }

func itoa(v int) string {
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}

// TestShrinkEqualSingularValues: kept singular values that coincide make
// the eigenvectors of the Gram matrix a cluster that inverse iteration must
// keep orthogonal; the estimate still equals the SVD closed form.
func TestShrinkEqualSingularValues(t *testing.T) {
	n, d := 32, 12
	y := make([]float64, n*d)
	for i := range n {
		// Two orthogonal centred row patterns of equal norm, on orthogonal
		// column patterns of equal norm: singular values equal.
		a := float64(1 - 2*(i%2))
		b := float64(1 - 2*((i/2)%2))
		for j := range d {
			u := float64(1 - 2*(j%2))
			v := float64(1 - 2*((j/2)%2))
			y[i*d+j] = 10*a*u + 10*b*v
		}
	}
	want, wantRank := closedForm(y, n, d, 0.5, 1)
	s := New(n, d)
	got := make([]float64, n*d)
	rank := s.Shrink(got, y, 0.5, 1, s.NewWorkspace())
	if rank != wantRank || rank < 2 {
		t.Errorf("rank %d, want %d (≥ 2)", rank, wantRank)
	}
	if e := relErr(got, want); e > 1e-9 {
		t.Errorf("relative error %.3g against the SVD closed form", e)
	}
}

// TestLastComponentSq checks the last components of a tridiagonal's
// eigenvectors, computed from its eigenvalues and its leading block's,
// against the eigenvectors from gonum's Dsteqr, on random tridiagonals
// with well separated and with clustered eigenvalues.
func TestLastComponentSq(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	impl := gonumlapack.Implementation{}
	for _, m := range []int{2, 3, 7, 30, 120} {
		for _, clustered := range []bool{false, true} {
			alpha, beta := make([]float64, m), make([]float64, m-1)
			for i := range alpha {
				alpha[i] = 10 * rng.Float64()
				if clustered {
					alpha[i] = float64(i % 3)
				}
			}
			for i := range beta {
				beta[i] = 0.5 + rng.Float64()
				if clustered && i%4 == 0 {
					beta[i] = 1e-6 * rng.Float64()
				}
			}
			theta, e := slices.Clone(alpha), slices.Clone(beta)
			z := make([]float64, m*m)
			work := make([]float64, max(1, 2*m-2))
			if !impl.Dsteqr(lapack.EVTridiag, m, theta, e, z, m, work) {
				t.Fatal("Dsteqr did not converge")
			}
			mu, e2 := slices.Clone(alpha[:m-1]), slices.Clone(beta[:max(m-2, 0)])
			if !impl.Dsterf(m-1, mu, e2) {
				t.Fatal("Dsterf did not converge")
			}
			for k := range m {
				want := z[(m-1)*m+k] * z[(m-1)*m+k]
				got := lastComponentSq(theta, mu, k)
				if math.Abs(got-want) > 1e-9 {
					t.Errorf("m=%d clustered=%v k=%d: s² = %.12g, want %.12g", m, clustered, k, got, want)
				}
			}
		}
	}
}

// rmsDiff is the root mean square of a − b.
func rmsDiff(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s / float64(len(a)))
}
