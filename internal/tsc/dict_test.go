package tsc

import (
	"context"
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/algebra/tproduct/tproducttest"
)

// The helpers of this file are written from the definitions of docs/model.md §1
// (circular convolution, block-circulant matrix) and share no code with the
// Fourier-domain implementation they check.

// dictSparseCoefficients returns r×n×k coefficients in which each tube is
// zero with probability pZero and N(0, 1) otherwise.
func dictSparseCoefficients(rng *rand.Rand, r, n, k int, pZero float64) *tproduct.Tensor {
	b := tproduct.NewTensor(r, n, k)
	for j := range n {
		for q := range r {
			if rng.Float64() < pZero {
				continue
			}
			for t := range k {
				b.Set(q, j, t, rng.NormFloat64())
			}
		}
	}
	return b
}

// dictNaiveProduct returns D*B by the definition: X(i,j,:) =
// Σ_q D(i,q,:) ⊛ B(q,j,:) with ⊛ the circular convolution.
func dictNaiveProduct(d, b *tproduct.Tensor) *tproduct.Tensor {
	m, r, k, n := d.M, d.N, d.K, b.N
	x := tproduct.NewTensor(m, n, k)
	for j := range n {
		for i := range m {
			for t := range k {
				var v float64
				for q := range r {
					for s := range k {
						v += d.At(i, q, s) * b.At(q, j, (t-s+k)%k)
					}
				}
				x.Set(i, j, t, v)
			}
		}
	}
	return x
}

// dictNaiveData returns ½‖X − D*B‖_F² by the definition.
func dictNaiveData(d, b, x *tproduct.Tensor) float64 {
	p := dictNaiveProduct(d, b)
	var s float64
	for i, v := range x.Data {
		e := v - p.Data[i]
		s += e * e
	}
	return s / 2
}

// dictAtomNorm2 returns ‖D(:,j,:)‖_F².
func dictAtomNorm2(d *tproduct.Tensor, j int) float64 {
	var s float64
	for _, v := range d.Lateral(j) {
		s += v * v
	}
	return s
}

// dictProjectedGradient solves min_D ½‖unfold(X) − circ(D)·unfold(B)‖² s.t.
// ‖D(:,j,:)‖² ≤ 1 by projected gradient descent on the block-circulant
// matrix form (Lemma 1), with the exact Lipschitz constant of the explicit
// linear map vec(D) ↦ vec(circ(D)·unfold(B)), run until the iterates stop
// moving. It returns D and its objective.
func dictProjectedGradient(t *testing.T, x, b *tproduct.Tensor, r int) (*tproduct.Tensor, float64) {
	m, k := x.M, x.K
	nv := m * r * k
	u := tproducttest.Unfold(b)
	y := tproducttest.Unfold(x)
	rows := m * k * x.N
	a := mat.NewDense(rows, nv, nil)
	unit := tproduct.NewTensor(m, r, k)
	var cu mat.Dense
	for v := range nv {
		clear(unit.Data)
		unit.Data[v] = 1
		cu.Mul(tproducttest.Circ(unit), u)
		for i := range m * k {
			for j := range x.N {
				a.Set(i*x.N+j, v, cu.At(i, j))
			}
		}
	}
	yv := mat.NewVecDense(rows, nil)
	for i := range m * k {
		for j := range x.N {
			yv.SetVec(i*x.N+j, y.At(i, j))
		}
	}
	var ata mat.SymDense
	ata.SymOuterK(1, a.T())
	var eig mat.EigenSym
	if !eig.Factorize(&ata, false) {
		t.Fatal("eigendecomposition failed")
	}
	vals := eig.Values(nil)
	lip := vals[len(vals)-1]
	aty := mat.NewVecDense(nv, nil)
	aty.MulVec(a.T(), yv)

	d := tproduct.NewTensor(m, r, k)
	grad := mat.NewVecDense(nv, nil)
	dv := mat.NewVecDense(nv, d.Data)
	prev := make([]float64, nv)
	for it := 0; it < 200000; it++ {
		copy(prev, d.Data)
		grad.MulVec(&ata, dv)
		grad.SubVec(grad, aty)
		for i := range d.Data {
			d.Data[i] -= grad.AtVec(i) / lip
		}
		for j := range r {
			if n2 := dictAtomNorm2(d, j); n2 > 1 {
				s := 1 / math.Sqrt(n2)
				for i := range d.Lateral(j) {
					d.Lateral(j)[i] *= s
				}
			}
		}
		var change, size float64
		for i, v := range d.Data {
			change = max(change, math.Abs(v-prev[i]))
			size = max(size, math.Abs(v))
		}
		if change <= 1e-15*size {
			break
		}
	}
	var res mat.VecDense
	res.MulVec(a, dv)
	res.SubVec(&res, yv)
	return d, mat.Dot(&res, &res) / 2
}

// dictProblem draws patches X = D₀*B + noise with atoms of D₀ of norms
// between 0.3 and 3, so that some norm constraints are active at the
// optimum and some are not.
func dictProblem(rng *rand.Rand, m, r, k, n int, pZero float64) (x, b *tproduct.Tensor) {
	d0 := tproducttest.Rand(rng, m, r, k)
	for j := range r {
		s := (0.3 + 2.7*rng.Float64()) / math.Sqrt(dictAtomNorm2(d0, j))
		for i := range d0.Lateral(j) {
			d0.Lateral(j)[i] *= s
		}
	}
	b = dictSparseCoefficients(rng, r, n, k, pZero)
	// Keep every atom alive.
	for q := range r {
		b.Set(q, q, 0, 1+rng.Float64())
	}
	x = dictNaiveProduct(d0, b)
	for i := range x.Data {
		x.Data[i] += 0.1 * rng.NormFloat64()
	}
	return x, b
}

// statsOf returns the statistics of the patches x and their codes b, as
// accumulate gathers them for the dictionary step.
func (u *dictUpdater) statsOf(x, b *tproduct.Tensor) *dictStats {
	st := new(dictStats)
	st.init(u.m, u.r, u.k)
	if err := u.accumulate(context.Background(), st, x, b); err != nil {
		panic(err) // the context is never done
	}
	return st
}

// update runs one dictionary step on d for the patches x and their codes
// b, as learn does after a coding step: the statistics, then the solve.
func (u *dictUpdater) update(d, x, b *tproduct.Tensor) (updateInfo, error) {
	return u.solve(context.Background(), d, u.statsOf(x, b), x, b)
}

func TestDictUpdateMatchesProjectedGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{1, 2, 4, 5, 6} {
		for trial := range 3 {
			m := 2 + rng.IntN(4)
			r := 2 + rng.IntN(3)
			n := 3*r + rng.IntN(20)
			x, b := dictProblem(rng, m, r, k, n, 0.3)
			d := tproducttest.UnitAtoms(rng, m, r, k)
			u := newDictUpdater(m, r, k, 1)
			info, err := u.update(d, x, b)
			if err != nil {
				t.Fatalf("k=%d trial %d: %v", k, trial, err)
			}
			_, want := dictProjectedGradient(t, x, b, r)
			got := dictNaiveData(d, b, x)
			if math.Abs(got-want) > 1e-6*want {
				t.Errorf("k=%d m=%d r=%d n=%d: dual objective %.12g, projected gradient %.12g (rel %.2g)",
					k, m, r, n, got, want, (got-want)/want)
			}
			if math.Abs(info.Objective-got) > 1e-9*got {
				t.Errorf("k=%d: reported objective %.12g, direct %.12g", k, info.Objective, got)
			}
			if !info.Converged || info.Dead != 0 {
				t.Errorf("k=%d: info %+v", k, info)
			}
			for j := range r {
				if n2 := dictAtomNorm2(d, j); n2 > 1+1e-9 {
					t.Errorf("k=%d: atom %d has squared norm %.15g", k, j, n2)
				}
			}
		}
	}
}

// dictLoadedDual returns a dual solver loaded with random statistics of all
// r atoms.
func dictLoadedDual(rng *rand.Rand, m, r, k, n int) *dictUpdater {
	x, b := dictProblem(rng, m, r, k, n, 0.2)
	u := newDictUpdater(m, r, k, 1)
	st := u.statsOf(x, b)
	live := make([]int, r)
	for q := range live {
		live[q] = q
	}
	u.dual.load(st, live)
	return u
}

func TestDualGradientFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{1, 4, 5} {
		m, r := 4, 3
		u := dictLoadedDual(rng, m, r, k, 25)
		ds := &u.dual
		lambda := make([]float64, r)
		for a := range lambda {
			lambda[a] = 5 + 20*rng.Float64()
		}
		var p, q dualPoint
		p.init(r)
		q.init(r)
		if !ds.eval(&p, lambda) {
			t.Fatal("eval failed")
		}
		h := 1e-4
		for a := range r {
			lp := slices.Clone(lambda)
			lm := slices.Clone(lambda)
			lp[a] += h
			lm[a] -= h
			ds.eval(&q, lp)
			gp := q.val
			ds.eval(&q, lm)
			fd := (gp - q.val) / (2 * h)
			if math.Abs(fd-p.grad[a]) > 1e-6*(1+math.Abs(p.grad[a])) {
				t.Errorf("k=%d: ∂g/∂λ_%d = %.10g, central difference %.10g", k, a, p.grad[a], fd)
			}
		}
	}
}

func TestDualHessianFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{1, 4, 5, 7} {
		m, r := 5, 4
		u := dictLoadedDual(rng, m, r, k, 30)
		ds := &u.dual
		lambda := make([]float64, r)
		for a := range lambda {
			lambda[a] = 2 + 10*rng.Float64()
		}
		var p, q dualPoint
		p.init(r)
		q.init(r)
		if !ds.eval(&p, lambda) {
			t.Fatal("eval failed")
		}
		// The formula without the transposed index, −2 Σ w Re[(D̂ᴴD̂)_ij (A⁻¹)_ij],
		// evaluated at the same point: it must be told apart on complex slices.
		wrong := make([]float64, r*r)
		for l := range ds.s {
			w := tproduct.Weight(l, k)
			for a := range r {
				for b := range r {
					var z complex128
					for i := range m {
						z += cmplx.Conj(ds.dt[l][a*m+i]) * ds.dt[l][b*m+i]
					}
					wrong[a*r+b] += -2 * w * real(z*ds.inv[l][a*r+b])
				}
			}
		}
		h := 1e-5
		var worstRight, worstWrong float64
		for a := range r {
			lp := slices.Clone(lambda)
			lm := slices.Clone(lambda)
			lp[a] += h
			lm[a] -= h
			ds.eval(&q, lp)
			gp := slices.Clone(q.grad)
			ds.eval(&q, lm)
			for b := range r {
				fd := (gp[b] - q.grad[b]) / (2 * h)
				scale := 1e-3 + math.Abs(fd)
				worstRight = max(worstRight, math.Abs(p.hess[b*r+a]-fd)/scale)
				worstWrong = max(worstWrong, math.Abs(wrong[b*r+a]-fd)/scale)
			}
		}
		if worstRight > 1e-5 {
			t.Errorf("k=%d: Hessian differs from central differences by %.3g relative", k, worstRight)
		}
		if k > 2 && worstWrong < 1e-3 {
			t.Errorf("k=%d: the untransposed Hessian formula is not told apart (%.3g)", k, worstWrong)
		}
	}
}

func TestDualStrongDuality(t *testing.T) {
	// At the dual optimum g(λ*) = K‖X − D*B‖² with D = D(λ*) and every
	// constraint satisfied with complementary slackness.
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{1, 3, 5} {
		m, r, n := 4, 4, 40
		x, b := dictProblem(rng, m, r, k, n, 0.2)
		u := newDictUpdater(m, r, k, 1)
		u.dual.load(u.statsOf(x, b), []int{0, 1, 2, 3})
		_, converged, ok := u.dual.maximise()
		if !ok || !converged {
			t.Fatalf("k=%d: dual not solved (ok=%v converged=%v)", k, ok, converged)
		}
		d := tproduct.NewTensor(m, r, k)
		u.dual.writeAtoms(d, []int{0, 1, 2, 3}, tproduct.NewDFT(k))
		primal := dictNaiveData(d, b, x)
		dual := u.dual.cur.val / float64(2*k)
		if math.Abs(primal-dual) > 1e-8*primal {
			t.Errorf("k=%d: primal %.12g, dual %.12g", k, primal, dual)
		}
		for a, lam := range u.dual.lambda {
			n2 := dictAtomNorm2(d, a)
			if lam > 0 && math.Abs(n2-1) > 1e-8 || lam == 0 && n2 > 1+1e-8 {
				t.Errorf("k=%d: atom %d: λ=%g, ‖d‖²=%.12g", k, a, lam, n2)
			}
		}
	}
}

func TestDictUpdateDeadAtoms(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, k := range []int{1, 5} {
		m, r, n := 6, 5, 60
		x, b := dictProblem(rng, m, r, k, n, 0.2)
		dead := []int{1, 3}
		for _, q := range dead {
			for j := range n {
				for t := range k {
					b.Set(q, j, t, 0)
				}
			}
		}
		d := tproducttest.UnitAtoms(rng, m, r, k)
		u := newDictUpdater(m, r, k, 2)
		info, err := u.update(d, x, b)
		if err != nil {
			t.Fatal(err)
		}
		if info.Dead != len(dead) {
			t.Errorf("k=%d: %d dead atoms reported, want %d", k, info.Dead, len(dead))
		}
		// The residuals under the updated dictionary: the dead atoms have no
		// coefficients, so their new values do not enter.
		p := dictNaiveProduct(d, b)
		type patchRes struct {
			j   int
			res float64
		}
		var rs []patchRes
		for j := range n {
			var e float64
			for i, v := range x.Lateral(j) {
				e += (v - p.Lateral(j)[i]) * (v - p.Lateral(j)[i])
			}
			rs = append(rs, patchRes{j, e})
		}
		slices.SortStableFunc(rs, func(a, b patchRes) int {
			switch {
			case a.res > b.res:
				return -1
			case a.res < b.res:
				return 1
			}
			return 0
		})
		for rank, q := range dead {
			j := rs[rank].j
			xn := math.Sqrt(dictAtomNorm2(x, j))
			for i, v := range d.Lateral(q) {
				if math.Abs(v-x.Lateral(j)[i]/xn) > 1e-12 {
					t.Fatalf("k=%d: dead atom %d is not patch %d normalised", k, q, j)
				}
			}
			if n2 := dictAtomNorm2(d, q); math.Abs(n2-1) > 1e-12 {
				t.Errorf("k=%d: re-seeded atom %d has squared norm %.15g", k, q, n2)
			}
		}
		for j := range r {
			if n2 := dictAtomNorm2(d, j); n2 > 1+1e-9 {
				t.Errorf("k=%d: atom %d has squared norm %.15g", k, j, n2)
			}
		}
	}
}

func TestDictUpdateAllCoefficientsZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	m, r, k, n := 4, 3, 5, 20
	x := tproducttest.Rand(rng, m, n, k)
	b := tproduct.NewTensor(r, n, k)
	d := tproducttest.UnitAtoms(rng, m, r, k)
	u := newDictUpdater(m, r, k, 1)
	info, err := u.update(d, x, b)
	if err != nil {
		t.Fatal(err)
	}
	if info.Dead != r {
		t.Errorf("%d dead atoms reported, want %d", info.Dead, r)
	}
	want := dictNaiveData(d, b, x)
	if math.Abs(info.Objective-want) > 1e-12*want {
		t.Errorf("objective %.15g, want ½‖X‖² = %.15g", info.Objective, want)
	}
	// With no coefficients the residuals are the patches: the atoms are the
	// r patches of largest norm, in decreasing order.
	idx := make([]int, n)
	for j := range idx {
		idx[j] = j
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		na, nb := dictAtomNorm2(x, a), dictAtomNorm2(x, b)
		switch {
		case na > nb:
			return -1
		case na < nb:
			return 1
		}
		return 0
	})
	for q := range r {
		j := idx[q]
		xn := math.Sqrt(dictAtomNorm2(x, j))
		for i, v := range d.Lateral(q) {
			if math.Abs(v-x.Lateral(j)[i]/xn) > 1e-12 {
				t.Fatalf("atom %d is not patch %d normalised", q, j)
			}
		}
	}
}

func TestDictUpdateNeverIncreasesObjective(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 20 {
		k := 1 + rng.IntN(6)
		m, r := 2+rng.IntN(5), 1+rng.IntN(6)
		n := 1 + rng.IntN(30)
		x := tproducttest.Rand(rng, m, n, k)
		b := dictSparseCoefficients(rng, r, n, k, 0.6)
		d := tproducttest.UnitAtoms(rng, m, r, k)
		before := dictNaiveData(d, b, x)
		u := newDictUpdater(m, r, k, 1)
		info, err := u.update(d, x, b)
		if err != nil {
			t.Fatal(err)
		}
		after := dictNaiveData(d, b, x)
		if after > before*(1+1e-12)+1e-12 {
			t.Errorf("trial %d (m=%d r=%d k=%d n=%d): objective rose from %.15g to %.15g (%+v)",
				trial, m, r, k, n, before, after, info)
		}
		if math.Abs(info.Previous-before) > 1e-9*(1+before) || math.Abs(info.Objective-after) > 1e-9*(1+after) {
			t.Errorf("trial %d: reported %g → %g, direct %g → %g", trial, info.Previous, info.Objective, before, after)
		}
		for j := range r {
			if n2 := dictAtomNorm2(d, j); n2 > 1+1e-9 {
				t.Errorf("trial %d: atom %d has squared norm %.15g", trial, j, n2)
			}
		}
	}
}

func TestDictUpdateThreadCountInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	m, r, k, n := 9, 6, 5, 5000 // several chunks
	x, b := dictProblem(rng, m, r, k, n, 0.7)
	d0 := tproducttest.UnitAtoms(rng, m, r, k)
	var first []float64
	for _, threads := range []int{1, 2, 3} {
		d := &tproduct.Tensor{M: m, N: r, K: k, Data: slices.Clone(d0.Data)}
		if _, err := newDictUpdater(m, r, k, threads).update(d, x, b); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = d.Data
		} else if !slices.Equal(first, d.Data) {
			t.Errorf("%d threads give a different dictionary than 1", threads)
		}
	}
}

func TestDictUpdateRejectsNonFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	m, r, k, n := 3, 2, 4, 10
	for _, bad := range []float64{math.NaN(), math.Inf(1)} {
		for _, where := range []string{"x", "b"} {
			x, b := dictProblem(rng, m, r, k, n, 0)
			if where == "x" {
				x.Data[7] = bad
			} else {
				b.Data[5] = bad
			}
			d := tproducttest.UnitAtoms(rng, m, r, k)
			d0 := slices.Clone(d.Data)
			if _, err := newDictUpdater(m, r, k, 1).update(d, x, b); err == nil {
				t.Errorf("%g in %s accepted", bad, where)
			}
			if !slices.Equal(d0, d.Data) {
				t.Errorf("%g in %s: dictionary changed", bad, where)
			}
		}
	}
}

func TestDictStepStopsWhenCancelled(t *testing.T) {
	// Several chunks, and atom 0 dead so that solve re-seeds it.
	rng := rand.New(rand.NewPCG(21, 22))
	m, r, k, n := 4, 3, 5, 3000
	x, b := dictProblem(rng, m, r, k, n, 0.3)
	for j := range n {
		for tt := range k {
			b.Set(0, j, tt, 0)
		}
	}
	u := newDictUpdater(m, r, k, 2)
	st := u.statsOf(x, b)
	d := tproducttest.UnitAtoms(rng, m, r, k)
	d0 := slices.Clone(d.Data)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var again dictStats
	again.init(m, r, k)
	if err := u.accumulate(ctx, &again, x, b); !errors.Is(err, context.Canceled) {
		t.Errorf("accumulate with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := u.solve(ctx, d, st, x, b); !errors.Is(err, context.Canceled) {
		t.Errorf("solve with a cancelled context: %v, want context.Canceled", err)
	}
	if !slices.Equal(d0, d.Data) {
		t.Error("a cancelled solve changed the dictionary")
	}
}

func TestDictStatisticsMatchDirectProducts(t *testing.T) {
	// X̂B̂ᴴ and B̂B̂ᴴ of the sparse, chunked pass against products of the
	// full spectra, for a batch spanning several chunks.
	rng := rand.New(rand.NewPCG(19, 20))
	for _, k := range []int{1, 4, 5} {
		m, r, n := 7, 5, 2500
		x := tproducttest.Rand(rng, m, n, k)
		b := dictSparseCoefficients(rng, r, n, k, 0.8)
		u := newDictUpdater(m, r, k, 2)
		st := u.statsOf(x, b)
		p := tproduct.NewDFT(k)
		xh, bh := tproduct.NewFTensor(m, n, k), tproduct.NewFTensor(r, n, k)
		p.Forward(xh, x)
		p.Forward(bh, b)
		var scale float64
		for _, v := range st.bbh[0] {
			scale = max(scale, cmplx.Abs(v))
		}
		for l := range tproduct.Stored(k) {
			xs, bs := xh.Slice(l), bh.Slice(l)
			for q := range r {
				for i := range m {
					var z complex128
					for j := range n {
						z += xs[i*n+j] * cmplx.Conj(bs[q*n+j])
					}
					if cmplx.Abs(z-st.xbh[l][q*m+i]) > 1e-12*scale {
						t.Fatalf("k=%d ℓ=%d: (X̂B̂ᴴ)(%d,%d) = %v, want %v", k, l, i, q, st.xbh[l][q*m+i], z)
					}
				}
				for q2 := range r {
					var z complex128
					for j := range n {
						z += bs[q*n+j] * cmplx.Conj(bs[q2*n+j])
					}
					if cmplx.Abs(z-st.bbh[l][q*r+q2]) > 1e-12*scale {
						t.Fatalf("k=%d ℓ=%d: (B̂B̂ᴴ)(%d,%d) = %v, want %v", k, l, q, q2, st.bbh[l][q*r+q2], z)
					}
				}
			}
		}
		var l1 float64
		for _, v := range b.Data {
			l1 += math.Abs(v)
		}
		if xx := sumSquares(x.Data); math.Abs(st.xx-xx) > 1e-12*xx || math.Abs(st.l1-l1) > 1e-12*l1 {
			t.Errorf("k=%d: ‖X‖² %g (want %g), ‖B‖₁ %g (want %g)", k, st.xx, xx, st.l1, l1)
		}
		for q := range r {
			var e float64
			for j := range n {
				for tt := range k {
					e += b.At(q, j, tt) * b.At(q, j, tt)
				}
			}
			if math.Abs(st.rowEnergy[q]-e) > 1e-12*e {
				t.Errorf("k=%d: row energy of atom %d is %g, want %g", k, q, st.rowEnergy[q], e)
			}
		}
	}
}
