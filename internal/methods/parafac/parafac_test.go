package parafac

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/multilinear"
	"tdsc/internal/msi"
	"tdsc/internal/option"
)

// cpCube returns a cube that is a band offset (100 + 3·band) plus an exact
// rank-R CP tensor (unit mean square times amp, component r weighted by
// weights[r], or 1 if weights is nil) whose bands have zero mean (the mode-0 factor's
// columns are centred, so band-mean removal keeps the rank), with noise
// sigma added, and the clean cube.
func cpCube(seed uint64, dims [3]int, rank int, amp, sigma float64, weights ...float64) (clean, noisy *msi.Cube) {
	rng := rand.New(rand.NewPCG(seed, 3))
	m := &multilinear.CP{Weights: make([]float64, rank)}
	for n := range 3 {
		f := mat.NewDense(dims[n], rank, nil)
		for i := 0; i < dims[n]; i++ {
			for r := 0; r < rank; r++ {
				f.Set(i, r, rng.NormFloat64())
			}
		}
		if n == 0 {
			for r := 0; r < rank; r++ {
				mean := mat.Sum(f.ColView(r)) / float64(dims[0])
				for i := 0; i < dims[0]; i++ {
					f.Set(i, r, f.At(i, r)-mean)
				}
			}
		}
		m.Factors[n] = f
	}
	for r := range m.Weights {
		m.Weights[r] = 1
		if weights != nil {
			m.Weights[r] = weights[r]
		}
	}
	x, err := m.Reconstruct(context.Background(), 1)
	if err != nil {
		panic(err)
	}
	s := math.Sqrt(x.SquaredNorm() / float64(x.Len()))
	clean = msi.NewCube(dims[0], dims[1], dims[2])
	noisy = msi.NewCube(dims[0], dims[1], dims[2])
	for i, v := range x.Data {
		clean.Data[i] = 100 + 3*float64(i/(dims[0]*dims[1])) + amp*v/s
		noisy.Data[i] = clean.Data[i] + sigma*rng.NormFloat64()
	}
	return clean, noisy
}

func mse(a, b *msi.Cube) float64 {
	s := 0.0
	for i, v := range a.Data {
		s += (v - b.Data[i]) * (v - b.Data[i])
	}
	return s / float64(len(a.Data))
}

// TestExactRankRecovered: a noise-free rank-R cube (plus band offsets)
// denoised at rank R with a negligible σ comes back to round-off.
func TestExactRankRecovered(t *testing.T) {
	clean, _ := cpCube(1, [3]int{30, 26, 9}, 4, 40, 0)
	out, _, err := (&Denoiser{Options: Options{Rank: 4, Iters: 3000}}).Denoise(context.Background(), clean, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	if e := math.Sqrt(mse(clean, out)); e > 1e-6 {
		t.Errorf("RMS error %g", e)
	}
}

// TestDiscrepancyRank: on a rank-4 cube with noise, the automatic rank
// stops at the first ladder rung at or above 4 whose residual is within
// N·σ², and the estimate removes most of the noise.
func TestDiscrepancyRank(t *testing.T) {
	clean, noisy := cpCube(2, [3]int{40, 36, 12}, 4, 40, 5)
	y := &multilinear.Tensor{Dims: [3]int{40, 36, 12}, Data: append([]float64(nil), noisy.Data...)}
	y.CentreSlices()
	l, err := ChooseRank(context.Background(), y, 5, 1, 200, 2)
	if err != nil {
		t.Fatal(err)
	}
	if l.Rank != 4 {
		t.Errorf("rank %d (rungs %v, residuals %v, N·σ² = %g), want 4", l.Rank, l.Ranks, l.Residuals, float64(y.Len())*25)
	}
	for i, r := range l.Ranks {
		if r < l.Rank && l.Residuals[i] <= float64(y.Len())*25 {
			t.Errorf("rung %d below the chosen %d meets the bound", r, l.Rank)
		}
	}
	out, _, err := (&Denoiser{}).Denoise(context.Background(), noisy, 5)
	if err != nil {
		t.Fatal(err)
	}
	if m := mse(clean, out); m > 0.1*25 {
		t.Errorf("MSE %g, noise variance 25", m)
	}
}

// TestDiscrepancyWeakComponents: two strong and two weak components whose
// energy is about a tenth of the noise's: the rank-2 residual exceeds
// N·σ² by that tenth, so the ladder must go on to 4.
func TestDiscrepancyWeakComponents(t *testing.T) {
	dims := [3]int{40, 36, 12}
	n := float64(dims[0] * dims[1] * dims[2])
	_, noisy := cpCube(6, dims, 4, 20, 5, 1, 1, 0.1, 0.1)
	y := &multilinear.Tensor{Dims: dims, Data: append([]float64(nil), noisy.Data...)}
	y.CentreSlices()
	l, err := ChooseRank(context.Background(), y, 5, 1, 200, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rungs %v, residuals per voxel %v", l.Ranks, perVoxel(l.Residuals, n))
	if l.Rank != 4 || l.Residuals[0] < 1.05*n*25 {
		t.Errorf("rank %d (rungs %v, residuals per voxel %v), want 4 with rank 2 above 1.05σ²", l.Rank, l.Ranks, perVoxel(l.Residuals, n))
	}
}

func perVoxel(r []float64, n float64) []float64 {
	out := make([]float64, len(r))
	for i, v := range r {
		out[i] = v / n
	}
	return out
}

func TestThreadsIdentical(t *testing.T) {
	_, noisy := cpCube(3, [3]int{40, 33, 8}, 3, 40, 10)
	a, _, err := (&Denoiser{Options: Options{Threads: 1}}).Denoise(context.Background(), noisy, 10)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := (&Denoiser{Options: Options{Threads: 3}}).Denoise(context.Background(), noisy, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Data {
		if a.Data[i] != b.Data[i] {
			t.Fatalf("voxel %d differs between 1 and 3 threads", i)
		}
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, noisy := cpCube(4, [3]int{20, 20, 6}, 2, 40, 10)
	for _, rank := range []int{0, 3} {
		if _, _, err := (&Denoiser{Options: Options{Rank: rank}}).Denoise(ctx, noisy, 10); !errors.Is(err, context.Canceled) {
			t.Errorf("rank %d: got %v, want context.Canceled", rank, err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		o     Options
		field string
	}{
		{Options{Rank: -1}, "rank"},
		{Options{Rank: 1000}, "rank"},
		{Options{Iters: -1}, "iters"},
	} {
		err := tc.o.Resolve(10).Validate(20, 20, 6)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("%+v: got %v, want an option error on %q", tc.o, err, tc.field)
		}
	}
	if err := (Options{}).Resolve(10).Validate(20, 20, 1); err == nil {
		t.Error("a cube of one band was accepted")
	}
}

// TestTooSmallForTheLadder: a cube too small for the least rank of the
// ladder is refused by Check with the size it needs, at exactly the size
// ChooseRank would find no rung, and taken one voxel above.
func TestTooSmallForTheLadder(t *testing.T) {
	d := &Denoiser{}
	if err := d.Check(10, 2, 4, 4); err == nil || !strings.Contains(err.Error(), "needs at least 34 voxels (give --rank)") {
		t.Errorf("2×4×4: %v", err)
	}
	if err := d.Check(10, 2, 4, 5); err != nil { // 40 voxels: 2·(2+4+5−2) = 18 < 20
		t.Errorf("2×4×5: %v", err)
	}
	if err := (&Denoiser{Options: Options{Rank: 1}}).Check(10, 2, 4, 4); err != nil {
		t.Errorf("2×4×4 with --rank 1: %v", err)
	}
}
