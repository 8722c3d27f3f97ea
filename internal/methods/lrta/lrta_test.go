package lrta

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/multilinear"
	"tdsc/internal/msi"
	"tdsc/internal/option"
)

// lowRank returns a random tensor of multilinear rank ranks, scaled to
// unit mean square.
func lowRank(rng *rand.Rand, dims, ranks [3]int) *multilinear.Tensor {
	core := multilinear.New(ranks[0], ranks[1], ranks[2])
	for i := range core.Data {
		core.Data[i] = rng.NormFloat64()
	}
	var ms [3]mat.Matrix
	for n := range 3 {
		m := mat.NewDense(dims[n], ranks[n], nil)
		for i := 0; i < dims[n]; i++ {
			for j := 0; j < ranks[n]; j++ {
				m.Set(i, j, rng.NormFloat64())
			}
		}
		ms[n] = m
	}
	x, err := multilinear.MultiplyModes(context.Background(), core, ms, 1)
	if err != nil {
		panic(err)
	}
	s := math.Sqrt(x.SquaredNorm() / float64(x.Len()))
	for i := range x.Data {
		x.Data[i] /= s
	}
	return x
}

// validRanks draws a multilinear rank: each entry at most the product of
// the other two, or the tensor would have a lower rank.
func validRanks(rng *rand.Rand) [3]int {
	for {
		r := [3]int{1 + rng.IntN(5), 1 + rng.IntN(5), 1 + rng.IntN(3)}
		if r[0] <= r[1]*r[2] && r[1] <= r[0]*r[2] && r[2] <= r[0]*r[1] {
			return r
		}
	}
}

func addNoise(rng *rand.Rand, x *multilinear.Tensor, sigma float64) *multilinear.Tensor {
	y := x.Clone()
	for i := range y.Data {
		y.Data[i] += sigma * rng.NormFloat64()
	}
	return y
}

// TestWienerIdentityOnNoiseFreeSignal: on a noise-free tensor of
// multilinear rank (r₀, r₁, r₂), filtered with those ranks and a
// negligible σ, every gain is 1 to within σ²-order terms and the output
// is the input.
func TestWienerIdentityOnNoiseFreeSignal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 4; trial++ {
		dims := [3]int{20 + rng.IntN(20), 20 + rng.IntN(20), 6 + rng.IntN(10)}
		ranks := validRanks(rng)
		x := lowRank(rng, dims, ranks)
		f, err := FitWiener(context.Background(), x, ranks, 1e-6, 5, 2)
		if err != nil {
			t.Fatal(err)
		}
		out, err := f.Apply(context.Background(), x, 2)
		if err != nil {
			t.Fatal(err)
		}
		d := 0.0
		for i, v := range x.Data {
			d = math.Max(d, math.Abs(out.Data[i]-v))
		}
		if d > 1e-6 {
			t.Errorf("dims %v ranks %v: output differs from the signal by %g", dims, ranks, d)
		}
		for n := range 3 {
			for i, g := range f.Gains[n] {
				if math.Abs(g-1) > 1e-6 {
					t.Errorf("dims %v ranks %v: mode %d gain %d is %g", dims, ranks, n, i, g)
				}
			}
		}
	}
}

// directSURE is ‖Y − X̂‖² − Nσ² + 2σ² Π tr Hₙ from the filtered tensor.
func directSURE(t *testing.T, f *Filters, y *multilinear.Tensor, sigma float64) float64 {
	out, err := f.Apply(context.Background(), y, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := 0.0
	for i, v := range y.Data {
		r += (v - out.Data[i]) * (v - out.Data[i])
	}
	tr := 1.0
	for n := range 3 {
		tr *= f.trace(n, y.Dims[n])
	}
	return r - float64(y.Len())*sigma*sigma + 2*sigma*sigma*tr
}

// TestWienerSURE checks the SURE that FitWiener reports after its last
// sweep against the one computed from the filtered tensor, that the gains
// minimise it for the chosen subspaces (moving any gain raises it), and
// that SURE ends below its starting value Nσ².
func TestWienerSURE(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 3; trial++ {
		dims := [3]int{30, 25, 12}
		x := lowRank(rng, dims, [3]int{4, 3, 2})
		sigma := 0.3
		y := addNoise(rng, x, sigma)
		f, err := FitWiener(context.Background(), y, [3]int{6, 5, 3}, sigma, 4, 2)
		if err != nil {
			t.Fatal(err)
		}
		last := f.SURE[len(f.SURE)-1]
		direct := directSURE(t, f, y, sigma)
		if math.Abs(last-direct) > 1e-9*y.SquaredNorm() {
			t.Fatalf("trial %d: reported SURE %g, direct %g", trial, last, direct)
		}
		if last >= f.SURE[0] {
			t.Errorf("trial %d: SURE %v did not fall", trial, f.SURE)
		}
		// The last update was mode 2: its gains minimise SURE with the
		// subspaces fixed.
		for i := range f.Gains[2] {
			for _, delta := range []float64{-0.05, 0.05} {
				g := f.Gains[2][i]
				if g+delta < 0 {
					continue
				}
				f.Gains[2][i] = g + delta
				if moved := directSURE(t, f, y, sigma); moved < direct-1e-9*y.SquaredNorm() {
					t.Errorf("trial %d: moving gain %d by %g lowers SURE from %g to %g", trial, i, delta, direct, moved)
				}
				f.Gains[2][i] = g
			}
		}
	}
}

// TestChooseRanksFindsMultilinearRank: AIC and MDL on the mode covariances
// of a low-rank tensor plus white noise name its multilinear rank.
func TestChooseRanksFindsMultilinearRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 4; trial++ {
		ranks := validRanks(rng)
		y := addNoise(rng, lowRank(rng, [3]int{40, 50, 20}, ranks), 0.05)
		for _, c := range []multilinear.Criterion{multilinear.AIC, multilinear.MDL} {
			got, err := ChooseRanks(context.Background(), y, [3]int{}, c, 2)
			if err != nil {
				t.Fatal(err)
			}
			if got != ranks {
				t.Errorf("trial %d: %v chose %v, want %v", trial, c, got, ranks)
			}
		}
		if got, _ := ChooseRanks(context.Background(), y, [3]int{7, 0, 9}, multilinear.AIC, 2); got != [3]int{7, ranks[1], 9} {
			t.Errorf("fixed ranks not kept: %v", got)
		}
	}
}

// TestModeCovarianceEigenvalues compares the eigenvalues with those of the
// covariance of the unfolding's columns computed directly.
func TestModeCovarianceEigenvalues(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	y := addNoise(rng, lowRank(rng, [3]int{12, 10, 7}, [3]int{2, 2, 2}), 0.5)
	for i := range y.Data {
		y.Data[i] += 3 // a mean that the covariance must remove
	}
	for n := range 3 {
		got, err := ModeCovarianceEigenvalues(context.Background(), y, n, 2)
		if err != nil {
			t.Fatal(err)
		}
		u := y.Unfold(n)
		d, m := u.Dims()
		cov := mat.NewSymDense(d, nil)
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				mi, mj := mat.Sum(u.RowView(i))/float64(m), mat.Sum(u.RowView(j))/float64(m)
				s := 0.0
				for c := 0; c < m; c++ {
					s += (u.At(i, c) - mi) * (u.At(j, c) - mj)
				}
				cov.SetSym(i, j, s/float64(m))
			}
		}
		var eig mat.EigenSym
		eig.Factorize(cov, false)
		want := eig.Values(nil)
		for i := range want {
			if math.Abs(got[i]-want[d-1-i]) > 1e-10*want[d-1] {
				t.Fatalf("mode %d: eigenvalue %d is %g, want %g", n, i, got[i], want[d-1-i])
			}
		}
	}
}

// testCube is a random low-rank cube plus noise on the [0, 255] scale.
func testCube(seed uint64) *msi.Cube {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := lowRank(rng, [3]int{36, 33, 8}, [3]int{5, 4, 3})
	c := msi.NewCube(36, 33, 8)
	for i, v := range x.Data {
		c.Data[i] = 128 + 40*v + 10*rng.NormFloat64()
	}
	return c
}

func TestThreadsIdentical(t *testing.T) {
	for _, trunc := range []bool{false, true} {
		c := testCube(1)
		a, _, err := (&Denoiser{Options: Options{Threads: 1, Truncate: trunc}}).Denoise(context.Background(), c, 10)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := (&Denoiser{Options: Options{Threads: 3, Truncate: trunc}}).Denoise(context.Background(), c, 10)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.Data {
			if a.Data[i] != b.Data[i] {
				t.Fatalf("truncate %v: voxel %d differs between 1 and 3 threads", trunc, i)
			}
		}
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := (&Denoiser{}).Denoise(ctx, testCube(2), 10); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// TestValidate checks that bad settings are *option.Error for the flag
// that gives them, --ranks for the ranks.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		o     Options
		field string
	}{
		{Options{Ranks: [3]int{0, 40, 0}, Iters: 1}, "ranks"},
		{Options{Ranks: [3]int{-1, 0, 0}, Iters: 1}, "ranks"},
		{Options{Ranks: [3]int{0, 0, 9}, Iters: 1}, "ranks"},
		{Options{Iters: -2}, "iters"},
	} {
		err := tc.o.Resolve(10).Validate(36, 33, 8)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("%+v: got %v, want an option error on %q", tc.o, err, tc.field)
		}
	}
	if err := (Options{Ranks: [3]int{36, 33, 8}}).Resolve(10).Validate(36, 33, 8); err != nil {
		t.Errorf("the largest ranks: %v", err)
	}
	if err := (Options{}).Resolve(10).Validate(36, 1, 8); err == nil {
		t.Error("a cube one column wide was accepted")
	}
}

// TestDenoiseLowRankCube: on a low-rank cube with noise σ = 10 the
// estimate is far closer to the clean cube than the noisy one is.
func TestDenoiseLowRankCube(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x := lowRank(rng, [3]int{48, 40, 10}, [3]int{4, 4, 3})
	clean := msi.NewCube(48, 40, 10)
	noisy := msi.NewCube(48, 40, 10)
	for i, v := range x.Data {
		clean.Data[i] = 128 + 40*v
		noisy.Data[i] = clean.Data[i] + 10*rng.NormFloat64()
	}
	out, _, err := (&Denoiser{}).Denoise(context.Background(), noisy, 10)
	if err != nil {
		t.Fatal(err)
	}
	mse := 0.0
	for i, v := range clean.Data {
		mse += (out.Data[i] - v) * (out.Data[i] - v)
	}
	mse /= float64(len(clean.Data))
	if mse > 0.05*100 {
		t.Errorf("MSE %g, noise variance 100", mse)
	}
}
