package twodsc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/algebra/tproduct/tproducttest"
	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/testenv/cubetest"
	"tdsc/internal/tsc"
)

func readCrop(t *testing.T) *msi.Cube {
	t.Helper()
	c, err := formats.Open("../../../testdata/balloons_crop128")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// noiseAndDenoise adds σ = sigma noise (seed 1) to clean and denoises it
// with Defaults(sigma), learning the dictionary from the noisy cube.
func noiseAndDenoise(t *testing.T, clean *msi.Cube, sigma float64) (noisy, out *msi.Cube) {
	t.Helper()
	noisy = noise.Add(nil, clean, sigma, 1)
	o := Defaults(sigma)
	res, err := Train(context.Background(), noisy, o)
	if err != nil {
		t.Fatal(err)
	}
	out, err = Reconstruct(context.Background(), noisy, res.Dict, o)
	if err != nil {
		t.Fatal(err)
	}
	return noisy, out
}

// TestDenoiseCrop is the end-to-end check on real data: σ = 30 noise on the
// balloons crop, default settings, at least 10 dB gained.
func TestDenoiseCrop(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the whole pipeline on a crop")
	}
	clean := readCrop(t)
	noisy, out := noiseAndDenoise(t, clean, 30)
	before, after := cubetest.PSNR(t, clean, noisy), cubetest.PSNR(t, clean, out)
	t.Logf("PSNR %.2f dB → %.2f dB", before, after)
	if after < before+10 {
		t.Errorf("denoising gained %.2f dB, want at least 10", after-before)
	}
}

// TestThreadsBitIdentical checks that the output does not depend on the
// number of workers.
func TestThreadsBitIdentical(t *testing.T) {
	clean := readCrop(t)
	small := msi.NewCube(40, 33, 9)
	for b := 0; b < small.Bands; b++ {
		for y := 0; y < small.Height; y++ {
			for x := 0; x < small.Width; x++ {
				small.Set(y, x, b, clean.At(y+40, x+50, b+10))
			}
		}
	}
	noisy := noise.Add(nil, small, 20, 3)
	o := Defaults(20)
	o.Samples, o.TrainIters, o.Stride = 2000, 4, 1
	var outs [2]*msi.Cube
	for i, th := range []int{1, 2} {
		o.Threads = th
		res, err := Train(context.Background(), noisy, o)
		if err != nil {
			t.Fatal(err)
		}
		outs[i], err = Reconstruct(context.Background(), noisy, res.Dict, o)
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range outs[0].Data {
		if outs[0].Data[i] != outs[1].Data[i] {
			t.Fatalf("voxel %d differs between 1 and 2 threads: %v vs %v", i, outs[0].Data[i], outs[1].Data[i])
		}
	}
}

func TestCancelled(t *testing.T) {
	clean := readCrop(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o := Defaults(10)
	if _, err := Train(ctx, clean, o); !errors.Is(err, context.Canceled) {
		t.Errorf("Train with a cancelled context: got %v", err)
	}
}

// TestTrainTooFewPatches checks that learning more atoms than there are
// training patches fails and blames the right setting: the sample size when
// the image has positions to spare, the image otherwise.
func TestTrainTooFewPatches(t *testing.T) {
	clean := readCrop(t)
	o := Defaults(10)
	o.Atoms, o.Samples = 30, 29
	_, err := Train(context.Background(), clean, o)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d training samples are fewer than the %d atoms", o.Samples, o.Atoms)) {
		t.Errorf("%d samples, %d atoms: got %v", o.Samples, o.Atoms, err)
	}
	// A 6×6×5 image has (6−5+1)² = 4 positions of a 5×5×5 patch at step 2
	// (the last row and column windows are included).
	small := msi.NewCube(6, 6, 5)
	copy(small.Data, clean.Data)
	o = Defaults(10)
	o.Patch, o.Depth, o.Stride, o.Atoms = 5, 5, 2, 30
	_, err = Train(context.Background(), small, o)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the image has 4 patch positions, fewer than the %d atoms", o.Atoms)) {
		t.Errorf("6×6×5 image, %d atoms: got %v", o.Atoms, err)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Options)
		h    int
	}{
		{"patch", func(o *Options) { o.Patch = 0 }, 20},
		{"depth", func(o *Options) { o.Depth = 0 }, 20},
		{"stride", func(o *Options) { o.Stride = 0 }, 20},
		{"stride larger than patch", func(o *Options) { o.Stride = 6 }, 20},
		{"atoms", func(o *Options) { o.Atoms = 0 }, 20},
		{"beta", func(o *Options) { o.Beta = -1 }, 20},
		{"samples", func(o *Options) { o.Samples = 0 }, 20},
		{"iterations", func(o *Options) { o.CodeIters = 0 }, 20},
		{"image smaller than the patch", func(o *Options) {}, 4},
	}
	for _, c := range cases {
		o := Defaults(10)
		c.edit(&o)
		if err := o.Validate(c.h, 20, 31); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	o := Defaults(10)
	if err := o.Validate(5, 5, 5); err != nil {
		t.Errorf("defaults on a 5×5×5 image: %v", err)
	}
}

// TestSparsityWeightingOracle checks Reconstruct's weighted average against
// a direct evaluation: every window of the grid (spatial step 2 plus the
// last row and column, spectral step 1) cut out by hand, coded on its own,
// reconstructed, and added to every voxel it covers with weight
// 1/(1 + number of non-zero coefficients).
func TestSparsityWeightingOracle(t *testing.T) {
	clean := readCrop(t)
	const h, w, bands, p, q, step = 13, 12, 8, 5, 5, 2
	small := msi.NewCube(h, w, bands)
	for b := 0; b < bands; b++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				small.Set(y, x, b, clean.At(y+30, x+40, b+5))
			}
		}
	}
	noisy := noise.Add(nil, small, 20, 7)
	o := Defaults(20)
	o.Samples, o.TrainIters, o.Atoms, o.Stride, o.Threads = 300, 3, 12, step, 2
	o.Weighting = Sparsity
	res, err := Train(context.Background(), noisy, o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Reconstruct(context.Background(), noisy, res.Dict, o)
	if err != nil {
		t.Fatal(err)
	}

	enc, err := tsc.NewEncoder(res.Dict, tsc.EncodeOptions{Beta: o.Beta, MaxIter: o.CodeIters, Tol: o.CodeTol})
	if err != nil {
		t.Fatal(err)
	}
	ws := enc.NewWorkspace(1)
	x, code, rec := tproduct.NewTensor(p*p, 1, q), tproduct.NewTensor(o.Atoms, 1, q), tproduct.NewTensor(p*p, 1, q)
	starts := func(n int) []int {
		var s []int
		for v := 0; v+p < n; v += step {
			s = append(s, v)
		}
		return append(s, n-p)
	}
	sum, wsum := make([]float64, h*w*bands), make([]float64, h*w*bands)
	seen := 0
	for b0 := 0; b0+q <= bands; b0++ {
		for _, y0 := range starts(h) {
			for _, x0 := range starts(w) {
				mean := 0.0
				for t2 := 0; t2 < q; t2++ {
					for i := 0; i < p*p; i++ {
						v := noisy.At(y0+i/p, x0+i%p, b0+t2)
						x.Set(i, 0, t2, v)
						mean += v
					}
				}
				mean /= p * p * q
				for i := range x.Data {
					x.Data[i] -= mean
				}
				enc.Encode(ws, code, x, false)
				enc.Reconstruct(ws, rec, code)
				nnz := 0
				for _, v := range code.Data {
					if v != 0 {
						nnz++
					}
				}
				wt := 1 / float64(1+nnz)
				for t2 := 0; t2 < q; t2++ {
					for i := 0; i < p*p; i++ {
						k := ((b0+t2)*h+y0+i/p)*w + x0 + i%p
						sum[k] += wt * (rec.At(i, 0, t2) + mean)
						wsum[k] += wt
					}
				}
				seen++
			}
		}
	}
	if seen < 50 {
		t.Fatalf("only %d windows", seen)
	}
	worst := 0.0
	for k := range sum {
		worst = math.Max(worst, math.Abs(sum[k]/wsum[k]-got.Data[k]))
	}
	if worst > 1e-8 {
		t.Errorf("weighted reconstruction differs from the direct evaluation by up to %g", worst)
	}
	// And the weights matter: the plain mean is a different cube.
	o.Weighting = Uniform
	plain, err := Reconstruct(context.Background(), noisy, res.Dict, o)
	if err != nil {
		t.Fatal(err)
	}
	diff := 0.0
	for k := range plain.Data {
		diff = math.Max(diff, math.Abs(plain.Data[k]-got.Data[k]))
	}
	if diff < 1e-3 {
		t.Errorf("uniform and sparsity weighting differ by only %g", diff)
	}
}

// TestVectorisedOracle checks the vectorised (sc) path of Reconstruct
// against a direct evaluation: every window cut out by hand as a p²q-vector
// in band-then-pixel order, its mean removed, the lasso
// min ½‖x − Db‖² + β‖b‖₁ solved by a dense ISTA written here over the
// (p²q)×m matrix D, and the reconstructions Db + mean averaged. D has fewer
// columns than rows, so the lasso has one minimiser and both converge to it.
func TestVectorisedOracle(t *testing.T) {
	const h, w, bands, p, q, m = 8, 7, 4, 3, 2, 8
	rng := rand.New(rand.NewPCG(5, 6))
	noisy := msi.NewCube(h, w, bands)
	for i := range noisy.Data {
		noisy.Data[i] = 100 + 40*rng.NormFloat64()
	}
	d := tproducttest.UnitAtoms(rng, p*p*q, m, 1)
	o := Options{Patch: p, Depth: q, Stride: p, Atoms: m, Beta: 15, Samples: 1, TrainIters: 1, InnerIters: 1,
		CodeIters: 20000, CodeTol: 1e-15, Weighting: Uniform, Vectorised: true, Threads: 2}.Resolve(30)
	got, err := Reconstruct(context.Background(), noisy, d, o)
	if err != nil {
		t.Fatal(err)
	}

	n := p * p * q
	dm := mat.NewDense(n, m, nil)
	for j := 0; j < m; j++ {
		for i := 0; i < n; i++ {
			dm.Set(i, j, d.At(i, j, 0))
		}
	}
	var gram mat.SymDense
	gram.SymOuterK(1, dm.T())
	var eig mat.EigenSym
	if !eig.Factorize(&gram, false) {
		t.Fatal("eigendecomposition failed")
	}
	lip := slices.Max(eig.Values(nil))
	lasso := func(x []float64) []float64 {
		b, grad := mat.NewVecDense(m, nil), mat.NewVecDense(m, nil)
		r := mat.NewVecDense(n, nil)
		xv := mat.NewVecDense(n, x)
		for range 20000 {
			r.MulVec(dm, b)
			r.SubVec(r, xv)
			grad.MulVec(dm.T(), r)
			for j := 0; j < m; j++ {
				v := b.AtVec(j) - grad.AtVec(j)/lip
				b.SetVec(j, math.Copysign(math.Max(math.Abs(v)-o.Beta/lip, 0), v))
			}
		}
		r.MulVec(dm, b)
		return r.RawVector().Data
	}
	starts := func(size int) []int {
		var s []int
		for v := 0; v+p < size; v += p {
			s = append(s, v)
		}
		return append(s, size-p)
	}
	sum, count := make([]float64, h*w*bands), make([]float64, h*w*bands)
	x := make([]float64, n)
	for b0 := 0; b0+q <= bands; b0++ {
		for _, y0 := range starts(h) {
			for _, x0 := range starts(w) {
				mean := 0.0
				for t2 := 0; t2 < q; t2++ {
					for i := 0; i < p*p; i++ {
						x[t2*p*p+i] = noisy.At(y0+i/p, x0+i%p, b0+t2)
						mean += x[t2*p*p+i]
					}
				}
				mean /= float64(n)
				for i := range x {
					x[i] -= mean
				}
				rec := lasso(x)
				for t2 := 0; t2 < q; t2++ {
					for i := 0; i < p*p; i++ {
						k := ((b0+t2)*h+y0+i/p)*w + x0 + i%p
						sum[k] += rec[t2*p*p+i] + mean
						count[k]++
					}
				}
			}
		}
	}
	worst := 0.0
	for k := range sum {
		worst = math.Max(worst, math.Abs(sum[k]/count[k]-got.Data[k]))
	}
	if worst > 1e-6 {
		t.Errorf("vectorised reconstruction differs from the direct lasso by up to %g", worst)
	}
}
