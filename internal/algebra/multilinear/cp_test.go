package multilinear

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomCP returns a rank-R CP model with random factors (normalised) and
// weights in [1, 2).
func randomCP(rng *rand.Rand, dims [3]int, rank int) *CP {
	m := &CP{Weights: make([]float64, rank)}
	for n := range 3 {
		m.Factors[n] = randomMatrix(rng, dims[n], rank)
		normalizeColumns(m.Factors[n], make([]float64, rank))
	}
	for r := range m.Weights {
		m.Weights[r] = 1 + rng.Float64()
	}
	return m
}

// directCP is the definition of the CP tensor as a loop.
func directCP(m *CP) *Tensor {
	i0, rank := m.Factors[0].Dims()
	i1, _ := m.Factors[1].Dims()
	i2, _ := m.Factors[2].Dims()
	x := New(i0, i1, i2)
	for i := 0; i < i0; i++ {
		for j := 0; j < i1; j++ {
			for k := 0; k < i2; k++ {
				s := 0.0
				for r := 0; r < rank; r++ {
					s += m.Weights[r] * m.Factors[0].At(i, r) * m.Factors[1].At(j, r) * m.Factors[2].At(k, r)
				}
				x.Set(i, j, k, s)
			}
		}
	}
	return x
}

func TestCPReconstruct(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	m := randomCP(rng, [3]int{9, 7, 5}, 4)
	got, err := m.Reconstruct(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(got.Data, directCP(m).Data); d > 1e-13 {
		t.Errorf("Reconstruct differs from the direct loop by %g", d)
	}
}

// TestCPALSRecoversExactRank: from exact rank-R data, CP-ALS at rank R
// reproduces the tensor to round-off and finds the true components: every
// true component has an estimated one whose factor vectors are parallel in
// all three modes (congruence |cos| ≈ 1) with the same weight (signs may
// flip pairwise).
func TestCPALSRecoversExactRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial, init := range []CPInit{InitHOSVD, InitRandom, InitHOSVD} {
		dims := [3]int{12 + rng.IntN(10), 10 + rng.IntN(10), 8 + rng.IntN(6)}
		rank := 3 + trial
		truth := randomCP(rng, dims, rank)
		x := directCP(truth)
		est, res, err := CPALS(context.Background(), x, rank, CPOptions{MaxIter: 3000, Tol: 1e-15, Init: init, Seed: 5, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		rec, _ := est.Reconstruct(context.Background(), 1)
		scale := math.Sqrt(x.SquaredNorm())
		if d := maxAbsDiff(rec.Data, x.Data); d > 1e-8*scale {
			t.Errorf("trial %d: reconstruction off by %g after %d sweeps (‖X‖ = %g)", trial, d, len(res), scale)
		}
		for r := 0; r < rank; r++ {
			best, bestS := -1, 0.0
			for s := 0; s < rank; s++ {
				c := 1.0
				for n := range 3 {
					c *= math.Abs(mat.Dot(truth.Factors[n].ColView(r), est.Factors[n].ColView(s)))
				}
				if c > bestS {
					best, bestS = s, c
				}
			}
			if bestS < 1-1e-8 {
				t.Errorf("trial %d: component %d has congruence %.12f at best", trial, r, bestS)
				continue
			}
			if math.Abs(est.Weights[best]-truth.Weights[r]) > 1e-7 {
				t.Errorf("trial %d: component %d weight %g, estimated %g", trial, r, truth.Weights[r], est.Weights[best])
			}
		}
	}
}

// TestCPALSResidualNonIncreasing fits low ranks to random tensors and
// checks the residual of every sweep against the one before (through
// Progress), and the last one against the residual computed directly.
func TestCPALSResidualNonIncreasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for trial := 0; trial < 4; trial++ {
		x := randomTensor(rng, 14, 11, 6)
		var seen []float64
		o := CPOptions{MaxIter: 60, Tol: 1e-15, Init: CPInit(trial % 2), Seed: uint64(trial), Workers: 1,
			Progress: func(_ int, r float64) { seen = append(seen, r) }}
		m, res, err := CPALS(context.Background(), x, 4+trial, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != len(res) {
			t.Fatalf("Progress saw %d sweeps, result has %d", len(seen), len(res))
		}
		for i := 1; i < len(res); i++ {
			if res[i] > res[i-1]*(1+1e-10) {
				t.Errorf("trial %d: residual rose at sweep %d: %g → %g", trial, i, res[i-1], res[i])
			}
		}
		rec, _ := m.Reconstruct(context.Background(), 1)
		direct := 0.0
		for i, v := range x.Data {
			direct += (v - rec.Data[i]) * (v - rec.Data[i])
		}
		if last := res[len(res)-1]; math.Abs(direct-last) > 1e-9*x.SquaredNorm() {
			t.Errorf("trial %d: reported residual %g, direct %g", trial, last, direct)
		}
	}
}

// TestCPALSWarmStart: starting from a converged model gives at most its
// residual.
func TestCPALSWarmStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	x := randomTensor(rng, 10, 9, 8)
	m, res, err := CPALS(context.Background(), x, 3, CPOptions{MaxIter: 20, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, res2, err := CPALS(context.Background(), x, 3, CPOptions{MaxIter: 5, Start: m, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res2[0] > res[len(res)-1]*(1+1e-10) {
		t.Errorf("warm start rose from %g to %g", res[len(res)-1], res2[0])
	}
}

// TestThreadsIdentical: products, Gram matrices, HOOI and CP-ALS give
// bit-identical results for 1 and 3 workers.
func TestThreadsIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	x := randomTensor(rng, 70, 64, 5) // crosses the row and column block sizes
	ctx := context.Background()
	for n := range 3 {
		a := randomMatrix(rng, 5, x.Dims[n])
		p1, _ := ModeProduct(ctx, x, n, a, 1)
		p3, _ := ModeProduct(ctx, x, n, a, 3)
		g1, _ := Gram(ctx, x, n, 1)
		g3, _ := Gram(ctx, x, n, 3)
		if maxAbsDiff(p1.Data, p3.Data) != 0 || !mat.Equal(g1, g3) {
			t.Errorf("mode %d: results depend on the number of workers", n)
		}
	}
	c1, _, _ := CPALS(ctx, x, 4, CPOptions{MaxIter: 3, Workers: 1})
	c3, _, _ := CPALS(ctx, x, 4, CPOptions{MaxIter: 3, Workers: 3})
	if !mat.Equal(c1.Factors[0], c3.Factors[0]) || maxAbsDiff(c1.Weights, c3.Weights) != 0 {
		t.Error("CP-ALS depends on the number of workers")
	}
	h1, _, _ := HOOI(ctx, x, [3]int{3, 3, 2}, TuckerOptions{MaxIter: 2, Workers: 1})
	h3, _, _ := HOOI(ctx, x, [3]int{3, 3, 2}, TuckerOptions{MaxIter: 2, Workers: 3})
	if maxAbsDiff(h1.Core.Data, h3.Core.Data) != 0 {
		t.Error("HOOI depends on the number of workers")
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x := randomTensor(rand.New(rand.NewPCG(1, 1)), 20, 20, 4)
	if _, _, err := CPALS(ctx, x, 2, CPOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("CPALS: %v", err)
	}
	if _, _, err := HOOI(ctx, x, [3]int{2, 2, 2}, TuckerOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("HOOI: %v", err)
	}
}
