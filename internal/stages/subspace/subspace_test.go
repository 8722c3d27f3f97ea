package subspace

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/msi"
)

// lowRankCube returns an h×w×b cube whose spectra are a mean plus r random
// directions with decreasing scales, plus a little noise.
func lowRankCube(rng *rand.Rand, h, w, b, r int) *msi.Cube {
	c := msi.NewCube(h, w, b)
	dirs := make([][]float64, r)
	for i := range dirs {
		dirs[i] = make([]float64, b)
		for j := range dirs[i] {
			dirs[i][j] = rng.NormFloat64()
		}
	}
	for y := range h {
		for x := range w {
			coef := make([]float64, r)
			for i := range coef {
				coef[i] = rng.NormFloat64() * 40 / float64(i+1)
			}
			for j := range b {
				v := 100 + 3*float64(j)
				for i := range r {
					v += coef[i] * dirs[i][j]
				}
				c.Set(y, x, j, v+rng.NormFloat64())
			}
		}
	}
	return c
}

// TestFitAgainstSVD checks the basis against gonum's SVD of the centred
// pixel × band matrix: the eigenvalues are s²/N, and the projector EEᵀ onto
// the top-k right singular vectors is the same (signs aside).
func TestFitAgainstSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ h, w, b, r, k int }{{9, 7, 5, 3, 2}, {12, 10, 31, 6, 6}, {6, 6, 8, 8, 8}, {5, 4, 3, 1, 1}} {
		c := lowRankCube(rng, tc.h, tc.w, tc.b, tc.r)
		bs, err := Fit(c, nil, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		n := tc.h * tc.w
		a := mat.NewDense(n, tc.b, nil)
		for p := range n {
			for j := range tc.b {
				a.Set(p, j, c.Data[j*n+p]-bs.Mean[j])
			}
		}
		// The mean itself, by the definition.
		for j := range tc.b {
			s := 0.0
			for p := range n {
				s += c.Data[j*n+p]
			}
			if math.Abs(s/float64(n)-bs.Mean[j]) > 1e-9 {
				t.Fatalf("mean of band %d: %v, want %v", j, bs.Mean[j], s/float64(n))
			}
		}
		var svd mat.SVD
		if !svd.Factorize(a, mat.SVDThin) {
			t.Fatal("SVD failed")
		}
		sv := svd.Values(nil)
		for i, s := range sv {
			want := s * s / float64(n)
			if math.Abs(bs.Eigenvalues[i]-want) > 1e-8*(1+want) {
				t.Errorf("%v: eigenvalue %d = %v, want %v", tc, i, bs.Eigenvalues[i], want)
			}
		}
		var v mat.Dense
		svd.VTo(&v)
		for i := range tc.b {
			for j := range tc.b {
				got, want := 0.0, 0.0
				for q := range tc.k {
					got += bs.E[i*tc.k+q] * bs.E[j*tc.k+q]
					want += v.At(i, q) * v.At(j, q)
				}
				if math.Abs(got-want) > 1e-8 {
					t.Fatalf("%v: projector (%d,%d) = %v, want %v", tc, i, j, got, want)
				}
			}
		}
		// Orthonormal columns, each signed with its largest entry positive.
		for q := range tc.k {
			big := 0.0
			for qq := range tc.k {
				d := 0.0
				for i := range tc.b {
					d += bs.E[i*tc.k+q] * bs.E[i*tc.k+qq]
				}
				if want := float64(boolInt(q == qq)); math.Abs(d-want) > 1e-10 {
					t.Fatalf("%v: E column %d·%d = %v, want %v", tc, q, qq, d, want)
				}
			}
			for i := range tc.b {
				if math.Abs(bs.E[i*tc.k+q]) > math.Abs(big) {
					big = bs.E[i*tc.k+q]
				}
			}
			if big < 0 {
				t.Errorf("%v: column %d's largest entry %v is negative", tc, q, big)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestProjectSums checks Z = (Y − μ)E (Project) and ZEᵀ + μ
// (Reconstruct) bit for bit against each value's sum in the order of the
// bands (the eigen-images), on a cube of more pixels than a block of
// theirs, not a multiple of it.
func TestProjectSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := lowRankCube(rng, 97, 59, 12, 5)
	bs, err := Fit(c, nil, 6)
	if err != nil {
		t.Fatal(err)
	}
	z := bs.Project(c)
	for y := range c.Height {
		for x := range c.Width {
			for q := range bs.K {
				want := 0.0
				for b := range c.Bands {
					want += (c.At(y, x, b) - bs.Mean[b]) * bs.E[b*bs.K+q]
				}
				if got := z.At(y, x, q); got != want {
					t.Fatalf("Z(%d,%d,%d) = %v, want %v", y, x, q, got, want)
				}
			}
		}
	}
	back := bs.Reconstruct(z)
	for y := range c.Height {
		for x := range c.Width {
			for b := range c.Bands {
				want := bs.Mean[b]
				for q := range bs.K {
					want += z.At(y, x, q) * bs.E[b*bs.K+q]
				}
				if got := back.At(y, x, b); got != want {
					t.Fatalf("reconstruction (%d,%d,%d) = %v, want %v", y, x, b, got, want)
				}
			}
		}
	}
}

// BenchmarkProject projects a window of 146 lines of a 256-sample,
// 224-band cube on 22 eigen-images, as strips of such a cube do.
func BenchmarkProject(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := lowRankCube(rng, 146, 256, 224, 22)
	bs, err := Fit(c, nil, 22)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		bs.Project(c)
	}
}

// TestProjectReconstruct checks that with k = B the round trip returns
// the cube (TestProjectSums checks each value).
func TestProjectReconstruct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := lowRankCube(rng, 8, 6, 7, 4)
	full, err := Fit(c, nil, c.Bands)
	if err != nil {
		t.Fatal(err)
	}
	back := full.Reconstruct(full.Project(c))
	for i, v := range c.Data {
		if math.Abs(back.Data[i]-v) > 1e-9 {
			t.Fatalf("round trip with k = B: voxel %d is %v, want %v", i, back.Data[i], v)
		}
	}
}

// TestLeading: the first k directions of a basis are the basis Fit
// returns for k, exactly, and k out of 1..K panics.
func TestLeading(t *testing.T) {
	c := lowRankCube(rand.New(rand.NewPCG(5, 6)), 9, 8, 7, 4)
	full, err := Fit(c, nil, c.Bands)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= c.Bands; k++ {
		want, err := Fit(c, nil, k)
		if err != nil {
			t.Fatal(err)
		}
		if got := full.Leading(k); !reflect.DeepEqual(got, want) {
			t.Errorf("Leading(%d) = %+v, want %+v", k, got, want)
		}
	}
	for _, k := range []int{0, c.Bands + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Leading(%d) of %d directions did not panic", k, c.Bands)
				}
			}()
			full.Leading(k)
		}()
	}
}

func TestFitErrorsAndPanics(t *testing.T) {
	c := msi.NewCube(3, 3, 4)
	for _, k := range []int{0, 5, -1} {
		if _, err := Fit(c, nil, k); err == nil {
			t.Errorf("Fit(k = %d) gave no error", k)
		}
	}
	bs, err := Fit(c, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(){
		"Project":     func() { bs.Project(msi.NewCube(3, 3, 3)) },
		"Reconstruct": func() { bs.Reconstruct(msi.NewCube(3, 3, 3)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with the wrong band count did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestFitAboutMean: about a given mean the matrix is the second moment
// about it, so a shifted mean shows as a leading direction along the shift.
func TestFitAboutMean(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	c := lowRankCube(rng, 10, 10, 4, 1)
	own := MeanSpectrum(c)
	shift := []float64{own[0] + 1000, own[1], own[2], own[3]}
	bs, err := Fit(c, shift, 1)
	if err != nil {
		t.Fatal(err)
	}
	if bs.Mean[0] != shift[0] {
		t.Errorf("mean %v, want the given %v", bs.Mean, shift)
	}
	if math.Abs(bs.E[0]) < 0.999 {
		t.Errorf("leading direction %v, want ±e₀ (the shift dominates)", bs.E)
	}
	if _, err := Fit(c, own[:3], 1); err == nil {
		t.Error("a mean of the wrong length gave no error")
	}
}

// TestSignalPowerOfOwnCube: along the basis of a cube about its own mean,
// the power of the cube itself is the covariance's eigenvalue (from the
// eigensolver, a separate computation), less σ².
func TestSignalPowerOfOwnCube(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := lowRankCube(rng, 17, 13, 9, 4)
	bs, err := Fit(c, nil, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, sigma := range []float64{0, 3} {
		for i, p := range bs.SignalPower(c, sigma) {
			want := bs.Eigenvalues[i] - sigma*sigma
			if math.Abs(p-want) > 1e-9*bs.Eigenvalues[0] {
				t.Errorf("σ %v, direction %d: power %v, want %v", sigma, i, p, want)
			}
		}
	}
}

// TestMomentsStreamed: the moments of a cube added a window of lines at a
// time, about a shift far from the mean, give the brute-force mean and
// second moment about any spectrum (the mean included), the basis Fit
// gives, and the power SignalPower gives along it.
func TestMomentsStreamed(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const h, w, b = 23, 9, 6
	c := lowRankCube(rng, h, w, b, 4)
	shift := make([]float64, b)
	for i := range shift {
		shift[i] = 500 * rng.Float64()
	}
	m := NewMoments(shift)
	for y0 := 0; y0 < h; y0 += 5 {
		m.Add(c.Crop(y0, 0, 0, min(5, h-y0), w, b))
	}
	if m.N != h*w {
		t.Fatalf("N = %d, want %d", m.N, h*w)
	}
	mean := MeanSpectrum(c)
	for i, v := range m.Mean() {
		if math.Abs(v-mean[i]) > 1e-9*math.Abs(mean[i]) {
			t.Fatalf("mean[%d] = %v, want %v", i, v, mean[i])
		}
	}
	about := make([]float64, b)
	for i := range about {
		about[i] = mean[i] + rng.NormFloat64()*10
	}
	for _, a := range [][]float64{mean, about} {
		got := m.SecondMoment(a)
		for i := range b {
			for j := range b {
				want := 0.0
				for p := range h * w {
					want += (c.Band(i)[p] - a[i]) * (c.Band(j)[p] - a[j])
				}
				want /= h * w
				if math.Abs(got.At(i, j)-want) > 1e-9*(1+math.Abs(want)) {
					t.Fatalf("second moment (%d, %d) = %v, want %v", i, j, got.At(i, j), want)
				}
			}
		}
	}
	fit, err := Fit(c, mean, b)
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := FitMoment(m.SecondMoment(mean), mean, b)
	if err != nil {
		t.Fatal(err)
	}
	power, want := streamed.Power(m.SecondMoment(mean), 3), fit.SignalPower(c, 3)
	for i := range b {
		if math.Abs(streamed.Eigenvalues[i]-fit.Eigenvalues[i]) > 1e-8*(1+fit.Eigenvalues[0]) {
			t.Fatalf("eigenvalue %d = %v, Fit's %v", i, streamed.Eigenvalues[i], fit.Eigenvalues[i])
		}
		if math.Abs(power[i]-want[i]) > 1e-8*(1+math.Abs(want[0])) {
			t.Fatalf("power %d = %v, SignalPower %v", i, power[i], want[i])
		}
	}
}
