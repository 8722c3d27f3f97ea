package tsc

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/algebra/tproduct/tproducttest"
)

// encSmoothPatches returns n mean-removed patches (p²×n×q) cut at random
// places from a smooth random field of 64×64 pixels and q+8 bands, plus
// Gaussian noise of deviation sigma: data shaped like the MSI patches of the
// tool.
func encSmoothPatches(rng *rand.Rand, p, q, n int, sigma float64) *tproduct.Tensor {
	type wave struct{ fx, fy, fb, phase, amp float64 }
	waves := make([]wave, 6)
	for i := range waves {
		waves[i] = wave{rng.Float64() * 0.3, rng.Float64() * 0.3, rng.Float64() * 0.4, rng.Float64() * 2 * math.Pi, 20 + 40*rng.Float64()}
	}
	x := tproduct.NewTensor(p*p, n, q)
	for j := range n {
		y0, x0, b0 := rng.IntN(64-p), rng.IntN(64-p), rng.IntN(9)
		col := x.Lateral(j)
		var mean float64
		for t := range q {
			for dy := range p {
				for dx := range p {
					var v float64
					for _, w := range waves {
						v += w.amp * math.Sin(w.fx*float64(x0+dx)+w.fy*float64(y0+dy)+w.fb*float64(b0+t)+w.phase)
					}
					v += sigma * rng.NormFloat64()
					col[t*p*p+dy*p+dx] = v
					mean += v
				}
			}
		}
		mean /= float64(len(col))
		for i := range col {
			col[i] -= mean
		}
	}
	return x
}

// encDictionary returns r atoms drawn from x (random columns plus a little
// noise so no two coincide), each scaled to unit Frobenius norm.
func encDictionary(rng *rand.Rand, x *tproduct.Tensor, r int) *tproduct.Tensor {
	d := tproduct.NewTensor(x.M, r, x.K)
	for q := range r {
		a := d.Lateral(q)
		copy(a, x.Lateral(rng.IntN(x.N)))
		var s float64
		for i := range a {
			a[i] += 0.1 * rng.NormFloat64()
			s += a[i] * a[i]
		}
		for i := range a {
			a[i] /= math.Sqrt(s)
		}
	}
	return d
}

// encRandomAtoms returns r Gaussian atoms of unit Frobenius norm.
func encRandomAtoms(rng *rand.Rand, m, r, k int) *tproduct.Tensor {
	d := tproducttest.Rand(rng, m, r, k)
	for q := range r {
		a := d.Lateral(q)
		var s float64
		for _, v := range a {
			s += v * v
		}
		for i := range a {
			a[i] /= math.Sqrt(s)
		}
	}
	return d
}

func encMustEncoder(t testing.TB, d *tproduct.Tensor, opt EncodeOptions, path codePath) *Encoder {
	t.Helper()
	e, err := NewEncoder(d, opt)
	if err != nil {
		t.Fatal(err)
	}
	e.path = path
	return e
}

func encCode(e *Encoder, x *tproduct.Tensor, b *tproduct.Tensor, warm bool) (*tproduct.Tensor, int) {
	if b == nil {
		b = tproduct.NewTensor(e.r, x.N, e.k)
	}
	it := e.Encode(e.NewWorkspace(x.N), b, x, warm)
	return b, it
}

var encPaths = []struct {
	name string
	path codePath
}{{"auto", pathAuto}, {"dense", pathDense}, {"sparse", pathSparse}, {"full", pathFull}}

// directObjective returns ½‖X − D*B‖_F² + β‖B‖₁ for the dictionary d
// (M×R×K), codes b (R×N×K) and patches x (M×N×K), from the product D*B
// itself: the check on the objectives that the package computes from
// statistics. It panics if the sizes do not match.
func directObjective(d, b, x *tproduct.Tensor, beta float64) float64 {
	if x.M != d.M || x.N != b.N || x.K != d.K {
		panic(fmt.Sprintf("directObjective of patches %d×%d×%d for a product %d×%d×%d",
			x.M, x.N, x.K, d.M, b.N, d.K))
	}
	rec := tproduct.NewTensor(d.M, b.N, d.K)
	tproduct.Product(rec, d, b)
	var fit, l1 float64
	for i, v := range x.Data {
		r := v - rec.Data[i]
		fit += r * r
	}
	for _, v := range b.Data {
		l1 += math.Abs(v)
	}
	return 0.5*fit + beta*l1
}

// encGradFD returns the gradient of ½‖X − D*B‖² by central differences.
func encGradFD(d, b, x *tproduct.Tensor) *tproduct.Tensor {
	g := tproduct.NewTensor(b.M, b.N, b.K)
	bb := tproduct.NewTensor(b.M, b.N, b.K)
	copy(bb.Data, b.Data)
	const h = 1e-4
	for i, v := range b.Data {
		bb.Data[i] = v + h
		fp := directObjective(d, bb, x, 0)
		bb.Data[i] = v - h
		fm := directObjective(d, bb, x, 0)
		bb.Data[i] = v
		g.Data[i] = (fp - fm) / (2 * h)
	}
	return g
}

func TestGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for _, k := range []int{1, 2, 4, 5, 6} {
		m, r, n := 4, 3, 2
		d := encRandomAtoms(rng, m, r, k)
		b := tproducttest.Rand(rng, r, n, k)
		x := tproducttest.Rand(rng, m, n, k)
		fd := encGradFD(d, b, x)

		// Closed form D†*(D*B − X).
		res := tproduct.NewTensor(m, n, k)
		tproduct.Product(res, d, b)
		for i := range res.Data {
			res.Data[i] -= x.Data[i]
		}
		dt := tproduct.NewTensor(r, m, k)
		tproduct.Transpose(dt, d)
		grad := tproduct.NewTensor(r, n, k)
		tproduct.Product(grad, dt, res)
		for i, v := range fd.Data {
			if math.Abs(grad.Data[i]-v) > 1e-6*(1+math.Abs(v)) {
				t.Fatalf("k=%d: D†*(D*B−X) element %d = %v, finite differences %v", k, i, grad.Data[i], v)
			}
		}

		// One FISTA iteration with β = 0 from B_0 = B is the gradient step
		// B − ∇f(B)/L, on both evaluation paths.
		for _, p := range encPaths[1:] {
			e := encMustEncoder(t, d, EncodeOptions{MaxIter: 1}, p.path)
			got := tproduct.NewTensor(r, n, k)
			copy(got.Data, b.Data)
			encCode(e, x, got, true)
			for i, v := range fd.Data {
				want := b.Data[i] - v/e.lip
				if math.Abs(got.Data[i]-want) > 1e-6*(1+math.Abs(want)) {
					t.Fatalf("k=%d %s: gradient step element %d = %v, want %v", k, p.name, i, got.Data[i], want)
				}
			}
		}
	}
}

// encDenseLipschitz returns A = circ(D) and the Lipschitz constant
// λ_max(AᵀA) of the vectorised problem, from gonum's eigensolver.
func encDenseLipschitz(t *testing.T, d *tproduct.Tensor) (*mat.Dense, float64) {
	a := tproducttest.Circ(d)
	var ata mat.SymDense
	ata.SymOuterK(1, a.T())
	var eig mat.EigenSym
	if !eig.Factorize(&ata, false) {
		t.Fatal("eigen decomposition failed")
	}
	vals := eig.Values(nil)
	return a, vals[len(vals)-1]
}

// encVectorISTA minimises Σ_j ½‖x_j − A b_j‖² + β‖b_j‖₁ (A = circ(D),
// x_j = unfold(X)(:, j)) with plain ISTA on the dense vectorised problem,
// run until the iterates stop moving, and returns the objective.
func encVectorISTA(t *testing.T, d, x *tproduct.Tensor, beta float64) float64 {
	a, lip := encDenseLipschitz(t, d)
	step := 1 / lip
	rows, cols := a.Dims()
	xu := tproducttest.Unfold(x)
	var obj float64
	for j := range x.N {
		xj := mat.NewVecDense(rows, mat.Col(nil, j, xu))
		bj := mat.NewVecDense(cols, nil)
		var res, grad mat.VecDense
		converged := false
		for range 2_000_000 {
			res.MulVec(a, bj)
			res.SubVec(&res, xj)
			grad.MulVec(a.T(), &res)
			var change float64
			for i := range cols {
				v := bj.AtVec(i) - step*grad.AtVec(i)
				v = math.Copysign(math.Max(math.Abs(v)-step*beta, 0), v)
				change = math.Max(change, math.Abs(v-bj.AtVec(i)))
				bj.SetVec(i, v)
			}
			if change < 1e-15 {
				converged = true
				break
			}
		}
		if !converged {
			t.Fatal("vectorised ISTA did not converge")
		}
		res.MulVec(a, bj)
		res.SubVec(&res, xj)
		obj += 0.5 * mat.Dot(&res, &res)
		for i := range cols {
			obj += beta * math.Abs(bj.AtVec(i))
		}
	}
	return obj
}

func TestFISTAMatchesVectorisedISTA(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 2))
	for _, c := range []struct{ m, r, k, iters int }{
		{7, 5, 1, 3000}, {7, 5, 4, 3000}, {6, 4, 5, 3000}, {4, 6, 3, 20000}, {5, 3, 8, 3000},
	} {
		d := encRandomAtoms(rng, c.m, c.r, c.k)
		x := tproducttest.Rand(rng, c.m, 3, c.k)
		// β at a fifth of the largest correlation: sparse, non-zero codes.
		dt := tproduct.NewTensor(c.r, c.m, c.k)
		tproduct.Transpose(dt, d)
		corr := tproduct.NewTensor(c.r, 3, c.k)
		tproduct.Product(corr, dt, x)
		var cmax float64
		for _, v := range corr.Data {
			cmax = math.Max(cmax, math.Abs(v))
		}
		beta := cmax / 5
		want := encVectorISTA(t, d, x, beta)
		for _, p := range encPaths {
			e := encMustEncoder(t, d, EncodeOptions{Beta: beta, MaxIter: c.iters}, p.path)
			b, _ := encCode(e, x, nil, false)
			got := directObjective(d, b, x, beta)
			if math.Abs(got-want) > 1e-8*want {
				t.Errorf("m=%d r=%d k=%d %s: FISTA objective %.15g, vectorised ISTA %.15g", c.m, c.r, c.k, p.name, got, want)
			}
		}
	}
}

// encGramSlices returns the Gram slices Ĝ^(ℓ) = D̂^(ℓ)ᴴD̂^(ℓ) (R×R,
// row-major) computed from the FTensor of d.
func encGramSlices(d *tproduct.Tensor) [][]complex128 {
	m, r, k := d.M, d.N, d.K
	fd := tproduct.NewFTensor(m, r, k)
	tproduct.NewDFT(k).Forward(fd, d)
	out := make([][]complex128, tproduct.Stored(k))
	for l := range out {
		s := fd.Slice(l)
		g := make([]complex128, r*r)
		for p := range r {
			for q := range r {
				var v complex128
				for i := range m {
					v += cmplx.Conj(s[i*r+p]) * s[i*r+q]
				}
				g[p*r+q] = v
			}
		}
		out[l] = g
	}
	return out
}

func TestLipschitzExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, k := range []int{1, 2, 3, 4, 5, 6, 8} {
		m, r := 2+rng.IntN(8), 2+rng.IntN(8)
		d := encRandomAtoms(rng, m, r, k)
		e := encMustEncoder(t, d, EncodeOptions{MaxIter: 1}, pathAuto)
		var ata mat.SymDense
		ata.SymOuterK(1, tproducttest.Circ(d).T())
		var eig mat.EigenSym
		if !eig.Factorize(&ata, false) {
			t.Fatal("eigen decomposition failed")
		}
		vals := eig.Values(nil)
		want := vals[len(vals)-1]
		if math.Abs(e.lip-want) > 1e-10*want {
			t.Errorf("k=%d: L = %.15g, λ_max(circ(D)ᵀcirc(D)) = %.15g", k, e.lip, want)
		}
		var bound float64
		for l, g := range encGramSlices(d) {
			var f float64
			for _, z := range g {
				f += real(z)*real(z) + imag(z)*imag(z)
			}
			bound += tproduct.Weight(l, k) * math.Sqrt(f)
		}
		if e.lip > bound*(1+1e-12) {
			t.Errorf("k=%d: L = %v above the bound Σ_ℓ‖Ĝ^(ℓ)‖_F = %v", k, e.lip, bound)
		}
	}
}

func TestLipschitzExactBeatsPaperBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := encSmoothPatches(rng, 5, 5, 200, 20)
	d := encDictionary(rng, x, 30)
	var bound float64
	for l, g := range encGramSlices(d) {
		var f float64
		for _, z := range g {
			f += real(z)*real(z) + imag(z)*imag(z)
		}
		bound += tproduct.Weight(l, d.K) * math.Sqrt(f)
	}
	const beta = 40
	for _, p := range encPaths {
		exact := encMustEncoder(t, d, EncodeOptions{Beta: beta, MaxIter: 30}, p.path)
		loose := encMustEncoder(t, d, EncodeOptions{Beta: beta, MaxIter: 30}, p.path)
		loose.setLipschitz(bound)
		be, _ := encCode(exact, x, nil, false)
		bl, _ := encCode(loose, x, nil, false)
		fe, fl := directObjective(d, be, x, beta), directObjective(d, bl, x, beta)
		t.Logf("%s: L = %.4g, bound %.4g; objective after 30 iterations %.8g (exact L), %.8g (bound)",
			p.name, exact.lip, bound, fe, fl)
		if !(fe < fl) {
			t.Errorf("%s: objective with the exact L %v, not below %v with the paper's bound", p.name, fe, fl)
		}
	}
}

func TestDenseEqualsSparse(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, c := range []struct{ p, k, r int }{{5, 5, 30}, {4, 8, 24}, {4, 1, 20}, {3, 6, 12}, {4, 16, 64}} {
		x := encSmoothPatches(rng, c.p, c.k, 60, 10)
		d := encDictionary(rng, x, c.r)
		for _, beta := range []float64{1, 30} {
			opt := EncodeOptions{Beta: beta, MaxIter: 40}
			bd, _ := encCode(encMustEncoder(t, d, opt, pathDense), x, nil, false)
			bs, _ := encCode(encMustEncoder(t, d, opt, pathSparse), x, nil, false)
			var scale, nnz float64
			for _, v := range bd.Data {
				scale = math.Max(scale, math.Abs(v))
				if v != 0 {
					nnz++
				}
			}
			for i, v := range bd.Data {
				if math.Abs(bs.Data[i]-v) > 1e-10*scale {
					t.Fatalf("%v β=%v: sparse path element %d = %v, dense %v", c, beta, i, bs.Data[i], v)
				}
			}
			t.Logf("%v β=%v: %.2f%% non-zeros", c, beta, 100*nnz/float64(len(bd.Data)))
		}
	}
}

func TestReconstructMatchesProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 6))
	for _, k := range []int{1, 4, 5, 8} {
		d := encRandomAtoms(rng, 9, 12, k)
		b := tproducttest.Rand(rng, 12, 7, k)
		for i := range b.Data {
			if rng.Float64() < 0.8 {
				b.Data[i] = 0
			}
		}
		want := tproduct.NewTensor(9, 7, k)
		tproduct.Product(want, d, b)
		for _, p := range encPaths {
			e := encMustEncoder(t, d, EncodeOptions{MaxIter: 1}, p.path)
			ws := e.NewWorkspace(10)
			got := tproduct.NewTensor(9, 7, k)
			for i := range got.Data {
				got.Data[i] = math.NaN()
			}
			e.Reconstruct(ws, got, b)
			for i, v := range want.Data {
				if math.Abs(got.Data[i]-v) > 1e-12*float64(k*12) {
					t.Fatalf("k=%d %s: Reconstruct element %d = %v, D*B %v", k, p.name, i, got.Data[i], v)
				}
			}
		}
	}
}

func TestEncoderWarmStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 7))
	x := encSmoothPatches(rng, 5, 5, 40, 20)
	d := encDictionary(rng, x, 30)
	const beta = 20
	for _, p := range encPaths {
		short := encMustEncoder(t, d, EncodeOptions{Beta: beta, MaxIter: 15}, p.path)
		b15, _ := encCode(short, x, nil, false)
		f15 := directObjective(d, b15, x, beta)
		// 15 more iterations from B_15 go further than 15 from zero.
		warm := tproduct.NewTensor(d.N, x.N, d.K)
		copy(warm.Data, b15.Data)
		encCode(short, x, warm, true)
		fw := directObjective(d, warm, x, beta)
		if !(fw < f15) {
			t.Errorf("%s: warm start from 15 iterations gives %v, not below %v", p.name, fw, f15)
		}
		// Started at the minimiser, the codes stay there and Tol stops at once.
		long := encMustEncoder(t, d, EncodeOptions{Beta: 4 * beta, MaxIter: 20000, Tol: 1e-13}, p.path)
		opt, _ := encCode(long, x, nil, false)
		check := encMustEncoder(t, d, EncodeOptions{Beta: 4 * beta, MaxIter: 100, Tol: 1e-6}, p.path)
		again := tproduct.NewTensor(d.N, x.N, d.K)
		copy(again.Data, opt.Data)
		it := check.Encode(check.NewWorkspace(x.N), again, x, true)
		if it > 2 {
			t.Errorf("%s: warm start at the minimiser took %d iterations", p.name, it)
		}
		fo, fa := directObjective(d, opt, x, 4*beta), directObjective(d, again, x, 4*beta)
		if math.Abs(fa-fo) > 1e-10*fo {
			t.Errorf("%s: warm start at the minimiser moved the objective from %v to %v", p.name, fo, fa)
		}
	}
}

func TestEncoderTolStopsEarly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 8))
	x := encSmoothPatches(rng, 5, 5, 80, 20)
	d := encDictionary(rng, x, 30)
	const beta, maxIter = 80, 3000
	for _, p := range encPaths {
		full := encMustEncoder(t, d, EncodeOptions{Beta: beta, MaxIter: maxIter}, p.path)
		bf, itf := encCode(full, x, nil, false)
		if itf != maxIter {
			t.Errorf("%s: Tol 0 ran %d iterations, want %d", p.name, itf, maxIter)
		}
		early := encMustEncoder(t, d, EncodeOptions{Beta: beta, MaxIter: maxIter, Tol: 1e-4}, p.path)
		ws := early.NewWorkspace(x.N)
		be := tproduct.NewTensor(d.N, x.N, d.K)
		ite := early.Encode(ws, be, x, false)
		if ite >= maxIter || ite < 2 {
			t.Errorf("%s: Tol 1e-4 ran %d iterations of at most %d", p.name, ite, maxIter)
		}
		// Each patch stopped on its own, at most at the reported count.
		var fewer int
		for j := range x.N {
			if int(ws.iters[j]) < ite {
				fewer++
			}
		}
		if fewer == 0 {
			t.Errorf("%s: every patch ran the same %d iterations", p.name, ite)
		}
		ff, fe := directObjective(d, bf, x, beta), directObjective(d, be, x, beta)
		if fe < ff*(1-1e-12) || fe > ff*(1+1e-3) {
			t.Errorf("%s: objective %v after stopping early, %v after %d iterations", p.name, fe, ff, maxIter)
		}
	}
}

func TestEncodeAllThreadInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	d := encDictionary(rng, encSmoothPatches(rng, 5, 5, 100, 20), 30)
	e := encMustEncoder(t, d, EncodeOptions{Beta: 15, MaxIter: 25, Tol: 1e-4}, pathAuto)
	n := 5*e.batchSize()/2 + 3
	x := encSmoothPatches(rng, 5, 5, n, 20)
	var ref *tproduct.Tensor
	var refIt int
	for _, threads := range []int{1, 2, 3, 0} {
		b := tproduct.NewTensor(30, n, 5)
		it := e.encodeAll(t.Context(), b, x, false, threads)
		if ref == nil {
			ref, refIt = b, it
			continue
		}
		if it != refIt {
			t.Errorf("threads=%d: %d iterations, %d with one thread", threads, it, refIt)
		}
		for i, v := range ref.Data {
			if math.Float64bits(b.Data[i]) != math.Float64bits(v) {
				t.Fatalf("threads=%d: element %d = %v, %v with one thread", threads, i, b.Data[i], v)
			}
		}
	}
	// The same as coding the batches one by one.
	ws := e.NewWorkspace(e.batchSize())
	b := tproduct.NewTensor(30, n, 5)
	for j0 := 0; j0 < n; j0 += e.batchSize() {
		j1 := min(n, j0+e.batchSize())
		e.Encode(ws, b.Slice(j0, j1), x.Slice(j0, j1), false)
	}
	for i, v := range ref.Data {
		if math.Float64bits(b.Data[i]) != math.Float64bits(v) {
			t.Fatalf("EncodeAll element %d = %v, batch by batch %v", i, v, b.Data[i])
		}
	}
	// Warm start through EncodeAll continues from b.
	before := directObjective(d, ref, x, 15)
	e.encodeAll(t.Context(), ref, x, true, 2)
	if after := directObjective(d, ref, x, 15); !(after < before) {
		t.Errorf("warm EncodeAll: objective %v, not below %v", after, before)
	}
}

func TestEncodeAllocatesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 10))
	x := encSmoothPatches(rng, 5, 5, 64, 20)
	d := encDictionary(rng, x, 30)
	for _, p := range encPaths {
		e := encMustEncoder(t, d, EncodeOptions{Beta: 10, MaxIter: 10, Tol: 1e-3}, p.path)
		ws := e.NewWorkspace(x.N)
		b := tproduct.NewTensor(30, x.N, 5)
		rec := tproduct.NewTensor(25, x.N, 5)
		if a := testing.AllocsPerRun(5, func() { e.Encode(ws, b, x, false) }); a != 0 {
			t.Errorf("%s: Encode allocates %v times per call", p.name, a)
		}
		if a := testing.AllocsPerRun(5, func() { e.Encode(ws, b, x, true) }); a != 0 {
			t.Errorf("%s: warm Encode allocates %v times per call", p.name, a)
		}
		if a := testing.AllocsPerRun(5, func() { e.Reconstruct(ws, rec, b) }); a != 0 {
			t.Errorf("%s: Reconstruct allocates %v times per call", p.name, a)
		}
	}
}

func TestNewEncoderRejects(t *testing.T) {
	good := encRandomAtoms(rand.New(rand.NewPCG(3, 11)), 4, 3, 5)
	nan := tproduct.NewTensor(4, 3, 5)
	copy(nan.Data, good.Data)
	nan.Data[7] = math.NaN()
	for name, c := range map[string]struct {
		d   *tproduct.Tensor
		opt EncodeOptions
	}{
		"negative β":    {good, EncodeOptions{Beta: -1, MaxIter: 1}},
		"NaN β":         {good, EncodeOptions{Beta: math.NaN(), MaxIter: 1}},
		"no iterations": {good, EncodeOptions{MaxIter: 0}},
		"negative Tol":  {good, EncodeOptions{MaxIter: 1, Tol: -1}},
		"zero atoms":    {tproduct.NewTensor(4, 3, 5), EncodeOptions{MaxIter: 1}},
		"NaN atom":      {nan, EncodeOptions{MaxIter: 1}},
		"nil":           {nil, EncodeOptions{MaxIter: 1}},
	} {
		if _, err := NewEncoder(c.d, c.opt); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestEncodePanicsOnSizeMismatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 12))
	e := encMustEncoder(t, encRandomAtoms(rng, 4, 3, 5), EncodeOptions{MaxIter: 1}, pathAuto)
	ws := e.NewWorkspace(4)
	for name, f := range map[string]func(){
		"too many patches": func() { e.Encode(ws, tproduct.NewTensor(3, 5, 5), tproduct.NewTensor(4, 5, 5), false) },
		"patch size":       func() { e.Encode(ws, tproduct.NewTensor(3, 2, 5), tproduct.NewTensor(5, 2, 5), false) },
		"code size":        func() { e.Encode(ws, tproduct.NewTensor(4, 2, 5), tproduct.NewTensor(4, 2, 5), false) },
		"bands":            func() { e.Encode(ws, tproduct.NewTensor(3, 2, 4), tproduct.NewTensor(4, 2, 4), false) },
		"reconstruct":      func() { e.Reconstruct(ws, tproduct.NewTensor(4, 3, 5), tproduct.NewTensor(3, 2, 5)) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			f()
		})
	}
}

func ExampleEncoder() {
	// Two atoms of 2 pixels × 3 bands; the patch is 2·atom 0 (unit norm),
	// so its code is 2 − β on atom 0 and zero elsewhere.
	d := tproduct.NewTensor(2, 2, 3)
	copy(d.Lateral(0), []float64{0.5, 0.5, 0.5, 0.5, 0, 0})
	copy(d.Lateral(1), []float64{0, 0, 0, 0, 1, 0})
	x := tproduct.NewTensor(2, 1, 3)
	copy(x.Data, []float64{1, 1, 1, 1, 0, 0})
	e, err := NewEncoder(d, EncodeOptions{Beta: 0.01, MaxIter: 500})
	if err != nil {
		panic(err)
	}
	b := tproduct.NewTensor(2, 1, 3)
	e.Encode(e.NewWorkspace(1), b, x, false)
	fmt.Printf("B(0,0,0) = %.3f, others ≈ 0: %v\n", b.At(0, 0, 0), math.Abs(b.At(1, 0, 0))+math.Abs(b.At(0, 0, 1)) < 1e-3)
	// Output: B(0,0,0) = 1.990, others ≈ 0: true
}

// TestAccumulateMatchesPasses checks accumulate against its definition for
// 0 to 9 runs: w copied from src, then one pass per group of four, two and
// one runs, each adding the group's sum; bit for bit, and with the list of
// positions above τ equal to a scan of the result (NaN counting as above).
// The runs have an even and an odd length (the SSE2 kernels do pairs).
func TestAccumulateMatchesPasses(t *testing.T) {
	for _, rows := range []int{6, 5} {
		t.Run(fmt.Sprint("rows=", rows), func(t *testing.T) { testAccumulate(t, rows) })
	}
}

// randomDoubledColumns is the doubledColumns table of a random
// rows×cols×k tensor.
func randomDoubledColumns(rng *rand.Rand, rows, cols, k int) ([]float64, []int32) {
	tensor := make([]float64, rows*cols*k)
	for i := range tensor {
		tensor[i] = rng.NormFloat64()
	}
	return doubledColumns(tensor, rows, cols, k)
}

func testAccumulate(t *testing.T, rows int) {
	const cols, k = 5, 3
	rng := rand.New(rand.NewPCG(5, 3))
	tab, off := randomDoubledColumns(rng, rows, cols, k)
	n := rows * k
	tau := 1.5
	tb := math.Float64bits(tau)
	for runs := 0; runs <= 9; runs++ {
		src := make([]float64, n)
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		src[3] = math.NaN()
		idx, val := make([]int32, runs), make([]float64, runs)
		for s, p := range rng.Perm(cols * k)[:runs] {
			idx[s], val[s] = int32(p), rng.NormFloat64()
		}
		want := append([]float64(nil), src...)
		for s := 0; s < runs; {
			g := min(4, runs-s)
			if g == 3 {
				g = 2
			}
			for i := range want {
				var sum float64
				for r := s; r < s+g; r++ {
					sum += float64(val[r] * tab[int(off[idx[r]])+i])
				}
				want[i] += sum
			}
			s += g
		}
		var wantAbove []int32
		for i, v := range want {
			if !(math.Abs(v) <= tau) {
				wantAbove = append(wantAbove, int32(i))
			}
		}
		for _, list := range []bool{false, true} {
			w := make([]float64, n)
			var above []int32
			if list {
				above = make([]int32, n)
			}
			na := accumulate(w, src, tab, off, idx, val, tb, above)
			for i := range w {
				if math.Float64bits(w[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%d runs, list %v: w[%d] = %v, want %v", runs, list, i, w[i], want[i])
				}
			}
			if !list {
				continue
			}
			if fmt.Sprint(above[:na]) != fmt.Sprint(wantAbove) {
				t.Errorf("%d runs: above %v, want %v", runs, above[:na], wantAbove)
			}
		}
		// In place (src = w), as Reconstruct uses it.
		w := append([]float64(nil), src...)
		accumulate(w, w, tab, off, idx, val, 0, nil)
		for i := range w {
			if math.Float64bits(w[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%d runs in place: w[%d] = %v, want %v", runs, i, w[i], want[i])
			}
		}
	}
}

// encVectorFISTA runs exactly iters iterations of FISTA (docs/model.md §3)
// from zero on the dense vectorised problem of every patch, with A =
// circ(D) and L = λ_max(AᵀA) from gonum's eigensolver, and returns the codes
// as a R×N×K tproduct.
func encVectorFISTA(t *testing.T, d, x *tproduct.Tensor, beta float64, iters int) *tproduct.Tensor {
	a, lip := encDenseLipschitz(t, d)
	rows, cols := a.Dims()
	xu := tproducttest.Unfold(x)
	codes := mat.NewDense(cols, x.N, nil)
	for j := range x.N {
		xj := mat.NewVecDense(rows, mat.Col(nil, j, xu))
		prev := mat.NewVecDense(cols, nil) // B_{p−1}
		cur := mat.NewVecDense(cols, nil)  // B_p
		c := mat.NewVecDense(cols, nil)    // C_p
		tp := 1.0
		var res, grad mat.VecDense
		for range iters {
			res.MulVec(a, c)
			res.SubVec(&res, xj)
			grad.MulVec(a.T(), &res)
			prev.CopyVec(cur)
			for i := range cols {
				v := c.AtVec(i) - grad.AtVec(i)/lip
				cur.SetVec(i, math.Copysign(math.Max(math.Abs(v)-beta/lip, 0), v))
			}
			tn := (1 + math.Sqrt(1+4*tp*tp)) / 2
			for i := range cols {
				c.SetVec(i, cur.AtVec(i)+(tp-1)/tn*(cur.AtVec(i)-prev.AtVec(i)))
			}
			tp = tn
		}
		codes.SetCol(j, cur.RawVector().Data)
	}
	return tproducttest.Fold(codes, d.N, x.N, d.K)
}

// TestFISTATrajectory compares the codes after a fixed number of iterations
// (no tolerance) with the dense vectorised FISTA, so that a fault in the
// momentum or the step shows at once and not only in the converged result
// (which any convergent scheme reaches).
func TestFISTATrajectory(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 4))
	for _, c := range []struct{ m, r, k int }{{7, 5, 1}, {6, 4, 5}, {5, 6, 4}} {
		d := encRandomAtoms(rng, c.m, c.r, c.k)
		x := tproducttest.Rand(rng, c.m, 4, c.k)
		const beta = 0.05
		for _, iters := range []int{1, 2, 3, 8, 25} {
			want := encVectorFISTA(t, d, x, beta, iters)
			for _, p := range encPaths {
				e := encMustEncoder(t, d, EncodeOptions{Beta: beta, MaxIter: iters}, p.path)
				got, n := encCode(e, x, nil, false)
				if n != iters {
					t.Errorf("m=%d r=%d k=%d %s: %d iterations, want %d", c.m, c.r, c.k, p.name, n, iters)
				}
				for i := range want.Data {
					if math.Abs(got.Data[i]-want.Data[i]) > 1e-9*(1+math.Abs(want.Data[i])) {
						t.Errorf("m=%d r=%d k=%d %s, %d iterations: code %d is %.15g, want %.15g",
							c.m, c.r, c.k, p.name, iters, i, got.Data[i], want.Data[i])
						break
					}
				}
			}
		}
	}
}
