package multilinear

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randomTensor(rng *rand.Rand, i0, i1, i2 int) *Tensor {
	t := New(i0, i1, i2)
	for i := range t.Data {
		t.Data[i] = rng.NormFloat64()
	}
	return t
}

func randomMatrix(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.NormFloat64())
		}
	}
	return m
}

func maxAbsDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// TestUnfoldFold checks every unfolding entry against the index formula of
// the package comment, written out as a direct loop, and that Fold undoes
// Unfold.
func TestUnfoldFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randomTensor(rng, 4, 5, 3)
	for n := range 3 {
		u := x.Unfold(n)
		for i := 0; i < 4; i++ {
			for j := 0; j < 5; j++ {
				for k := 0; k < 3; k++ {
					var row, col int
					switch n {
					case 0:
						row, col = i, j+k*5
					case 1:
						row, col = j, i+k*4
					case 2:
						row, col = k, i+j*4
					}
					if u.At(row, col) != x.At(i, j, k) {
						t.Fatalf("mode %d: unfolding at (%d,%d) is %g, element (%d,%d,%d) is %g", n, row, col, u.At(row, col), i, j, k, x.At(i, j, k))
					}
				}
			}
		}
		if back := Fold(u, n, x.Dims); maxAbsDiff(back.Data, x.Data) != 0 {
			t.Fatalf("mode %d: Fold(Unfold) differs", n)
		}
	}
}

// directModeProduct is the definition of t ×ₙ A as a loop.
func directModeProduct(x *Tensor, n int, a *mat.Dense) *Tensor {
	r, _ := a.Dims()
	dims := x.Dims
	dims[n] = r
	out := New(dims[0], dims[1], dims[2])
	for i := 0; i < dims[0]; i++ {
		for j := 0; j < dims[1]; j++ {
			for k := 0; k < dims[2]; k++ {
				s := 0.0
				for l := 0; l < x.Dims[n]; l++ {
					idx := [3]int{i, j, k}
					row := idx[n]
					idx[n] = l
					s += a.At(row, l) * x.At(idx[0], idx[1], idx[2])
				}
				out.Set(i, j, k, s)
			}
		}
	}
	return out
}

// TestModeProduct compares ModeProduct with the direct loop and with
// Fold(A·X₍ₙ₎), on sizes that cross the internal block sizes.
func TestModeProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := randomTensor(rng, 70, 61, 5)
	for n := range 3 {
		a := randomMatrix(rng, 7, x.Dims[n])
		got, err := ModeProduct(context.Background(), x, n, a, 3)
		if err != nil {
			t.Fatal(err)
		}
		want := directModeProduct(x, n, a)
		if d := maxAbsDiff(got.Data, want.Data); d > 1e-12 {
			t.Errorf("mode %d: differs from the direct loop by %g", n, d)
		}
		var au mat.Dense
		au.Mul(a, x.Unfold(n))
		if d := maxAbsDiff(got.Data, Fold(&au, n, got.Dims).Data); d > 1e-12 {
			t.Errorf("mode %d: differs from Fold(A·X₍ₙ₎) by %g", n, d)
		}
	}
}

// TestGram compares Gram with X₍ₙ₎X₍ₙ₎ᵀ on a tensor whose modes cross the
// block sizes.
func TestGram(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := randomTensor(rng, 90, 40, 3)
	x2 := randomTensor(rng, 64, 70, 4)
	for _, x := range []*Tensor{x, x2} {
		for n := range 3 {
			g, err := Gram(context.Background(), x, n, 2)
			if err != nil {
				t.Fatal(err)
			}
			u := x.Unfold(n)
			var want mat.Dense
			want.Mul(u, u.T())
			if !mat.EqualApprox(g, &want, 1e-10) {
				t.Errorf("dims %v mode %d: Gram differs from X₍ₙ₎X₍ₙ₎ᵀ", x.Dims, n)
			}
		}
	}
}

// lowRankTucker returns a random tensor of multilinear rank ranks and size
// dims.
func lowRankTucker(rng *rand.Rand, dims, ranks [3]int) *Tensor {
	core := randomTensor(rng, ranks[0], ranks[1], ranks[2])
	var ms [3]mat.Matrix
	for n := range 3 {
		ms[n] = randomMatrix(rng, dims[n], ranks[n])
	}
	x, err := MultiplyModes(context.Background(), core, ms, 1)
	if err != nil {
		panic(err)
	}
	return x
}

// TestHOSVDRecoversMultilinearRank: the truncated HOSVD of a tensor of
// multilinear rank (r₀, r₁, r₂) at those ranks reproduces it to round-off,
// and so does HOOI.
func TestHOSVDRecoversMultilinearRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := 0; trial < 5; trial++ {
		dims := [3]int{10 + rng.IntN(20), 10 + rng.IntN(20), 5 + rng.IntN(10)}
		ranks := [3]int{1 + rng.IntN(5), 1 + rng.IntN(5), 1 + rng.IntN(4)}
		x := lowRankTucker(rng, dims, ranks)
		model, err := HOSVD(context.Background(), x, ranks, 2)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := model.Reconstruct(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		scale := math.Sqrt(x.SquaredNorm())
		if d := maxAbsDiff(rec.Data, x.Data); d > 1e-10*scale {
			t.Errorf("dims %v ranks %v: HOSVD reconstruction off by %g (‖X‖ = %g)", dims, ranks, d, scale)
		}
		hooi, res, err := HOOI(context.Background(), x, ranks, TuckerOptions{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		rec, _ = hooi.Reconstruct(context.Background(), 2)
		if d := maxAbsDiff(rec.Data, x.Data); d > 1e-10*scale {
			t.Errorf("dims %v ranks %v: HOOI reconstruction off by %g, residuals %v", dims, ranks, d, res)
		}
	}
}

// TestHOOIResidualNonIncreasing runs HOOI on random (full-rank) tensors at
// low ranks and checks the residual after every sweep against the one
// before, and the last one against the residual computed directly.
func TestHOOIResidualNonIncreasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := 0; trial < 5; trial++ {
		x := randomTensor(rng, 15, 12, 9)
		ranks := [3]int{3, 4, 2}
		model, res, err := HOOI(context.Background(), x, ranks, TuckerOptions{MaxIter: 30, Tol: 1e-15, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) < 3 {
			t.Fatalf("only %d residuals", len(res))
		}
		for i := 1; i < len(res); i++ {
			if res[i] > res[i-1]*(1+1e-12) {
				t.Errorf("trial %d: residual rose at sweep %d: %g → %g", trial, i, res[i-1], res[i])
			}
		}
		if res[len(res)-1] >= res[0] {
			t.Errorf("trial %d: HOOI did not improve on the HOSVD: %v", trial, res)
		}
		rec, _ := model.Reconstruct(context.Background(), 1)
		direct := 0.0
		for i, v := range x.Data {
			direct += (v - rec.Data[i]) * (v - rec.Data[i])
		}
		if last := res[len(res)-1]; math.Abs(direct-last) > 1e-9*x.SquaredNorm() {
			t.Errorf("trial %d: reported residual %g, direct %g", trial, last, direct)
		}
	}
}

// TestCentreSlices checks that every mode-2 slice has mean 0 afterwards,
// that the returned means are the slices' means computed directly, and that
// AddSliceMeans puts them back.
func TestCentreSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	x := New(5, 4, 3)
	for i := range x.Data {
		x.Data[i] = 50 + 20*rng.NormFloat64()
	}
	orig := x.Clone()
	means := x.CentreSlices()
	for k := range 3 {
		direct, after := 0.0, 0.0
		for i := range 5 {
			for j := range 4 {
				direct += orig.At(i, j, k) / 20
				after += x.At(i, j, k) / 20
			}
		}
		if math.Abs(means[k]-direct) > 1e-12 || math.Abs(after) > 1e-12 {
			t.Errorf("slice %d: mean %v (direct %v), %v after centring", k, means[k], direct, after)
		}
	}
	x.AddSliceMeans(means)
	for i := range x.Data {
		if math.Abs(x.Data[i]-orig.Data[i]) > 1e-12 {
			t.Fatalf("element %d: %v after the round trip, was %v", i, x.Data[i], orig.Data[i])
		}
	}
}
