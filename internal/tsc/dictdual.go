package tsc

import (
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/tproduct"
)

// dualSolver maximises the Lagrange dual of the dictionary step over the
// multipliers of the live atoms (see dictUpdater). Sizes: M pixels, K bands,
// n live atoms (n ≤ R); every matrix is row-major.
type dualSolver struct {
	m, k, s int
	n       int // live atoms
	// Problem data of the live atoms, per stored slice.
	e [][]complex128 // X̂B̂ᴴ transposed, n×M: column of atom a at [a*M:(a+1)*M]
	g [][]complex128 // B̂B̂ᴴ, n×n
	// xx is K‖X‖_F² = Σ_ℓ w_ℓ‖X̂^(ℓ)‖², the constant of the dual.
	xx float64
	// ridge is added to the diagonal of B̂B̂ᴴ + Λ (see ridgeRel).
	ridge float64

	// Evaluation workspace, per stored slice.
	chol [][]complex128 // Cholesky factor L of B̂B̂ᴴ + Λ (lower), then L⁻¹
	inv  [][]complex128 // (B̂B̂ᴴ + Λ)⁻¹
	dt   [][]complex128 // D̂ transposed, n×M, as e
	ddh  []complex128   // D̂ᴴD̂ of one slice, n×n

	lambda, trial, dir []float64
	cur, next          dualPoint
	free               []int
	sym, rhs, sol      []float64 // reduced Newton system
	tube               []float64
	spec               []complex128
}

// dualPoint is the dual function, its gradient and its Hessian (n×n) at a
// point.
type dualPoint struct {
	val        float64
	grad, hess []float64
}

func (p *dualPoint) init(r int) {
	p.grad = make([]float64, r)
	p.hess = make([]float64, r*r)
}

func (p *dualPoint) resize(n int) {
	p.grad = p.grad[:n]
	p.hess = p.hess[:n*n]
}

func (ds *dualSolver) init(m, r, k int) {
	s := tproduct.Stored(k)
	ds.m, ds.k, ds.s = m, k, s
	alloc := func(size int) [][]complex128 {
		v := make([][]complex128, s)
		for l := range v {
			v[l] = make([]complex128, size)
		}
		return v
	}
	ds.e, ds.dt = alloc(r*m), alloc(r*m)
	ds.g, ds.chol, ds.inv = alloc(r*r), alloc(r*r), alloc(r*r)
	ds.ddh = make([]complex128, r*r)
	ds.lambda = make([]float64, r)
	ds.trial = make([]float64, r)
	ds.dir = make([]float64, r)
	ds.cur.init(r)
	ds.next.init(r)
	ds.free = make([]int, 0, r)
	ds.sym = make([]float64, r*r)
	ds.rhs = make([]float64, r)
	ds.sol = make([]float64, r)
	ds.tube = make([]float64, k)
	ds.spec = make([]complex128, s)
}

// load copies the statistics of the live atoms (indices into 0..R-1) and
// sets the ridge.
func (ds *dualSolver) load(st *dictStats, live []int) {
	m, r, n := ds.m, st.r, len(live)
	ds.n = n
	var diag float64
	for l := range ds.s {
		e, g := ds.e[l][:n*m], ds.g[l][:n*n]
		for a, q := range live {
			copy(e[a*m:(a+1)*m], st.xbh[l][q*m:(q+1)*m])
			for b, q2 := range live {
				g[a*n+b] = st.bbh[l][q*r+q2]
			}
			diag = max(diag, real(g[a*n+a]))
		}
	}
	ds.xx = float64(ds.k) * st.xx
	ds.ridge = ridgeRel * diag
	ds.lambda = ds.lambda[:n]
	ds.trial = ds.trial[:n]
	ds.dir = ds.dir[:n]
	ds.cur.resize(n)
	ds.next.resize(n)
}

// eval sets p to the dual function, gradient and Hessian at lambda (len n),
// and leaves D̂(λ) in ds.dt:
//
//	g(λ)          = Σ_ℓ w_ℓ [‖X̂‖² − tr(E A⁻¹ Eᴴ)] − K Σ_j λ_j,
//	∂g/∂λ_j       = Σ_ℓ w_ℓ ‖D̂(:,j)‖² − K,
//	∂²g/∂λ_i∂λ_j  = −2 Σ_ℓ w_ℓ Re[(D̂ᴴD̂)_ij ((A⁻¹)_ji)],
//
// with E = X̂B̂ᴴ, A = B̂B̂ᴴ + Λ (+ ridge·I) and D̂ = E A⁻¹. The transposed index
// of A⁻¹ matters on the complex slices. It returns false if A is not
// numerically positive definite.
func (ds *dualSolver) eval(p *dualPoint, lambda []float64) bool {
	m, n, k := ds.m, ds.n, ds.k
	clear(p.grad)
	clear(p.hess)
	var trace float64
	for l := range ds.s {
		w := tproduct.Weight(l, k)
		c, inv := ds.chol[l][:n*n], ds.inv[l][:n*n]
		copy(c, ds.g[l][:n*n])
		for a := range n {
			c[a*n+a] += complex(lambda[a]+ds.ridge, 0)
		}
		if !invertHPD(inv, c, n) {
			return false
		}
		// D̂ᵀ = (A⁻¹)ᵀ Eᵀ: row a of dt is Σ_b (A⁻¹)_ba e_b.
		e, dt := ds.e[l][:n*m], ds.dt[l][:n*m]
		clear(dt)
		for a := range n {
			da := dt[a*m : (a+1)*m]
			for b := range n {
				z := inv[b*n+a]
				if z == 0 {
					continue
				}
				for i, v := range e[b*m : (b+1)*m] {
					da[i] += z * v
				}
			}
		}
		var tr float64
		for a := range n {
			da, ea := dt[a*m:(a+1)*m], e[a*m:(a+1)*m]
			var nrm float64
			for i, v := range da {
				tr += real(v)*real(ea[i]) + imag(v)*imag(ea[i]) // Re(v·conj(e))
				nrm += real(v)*real(v) + imag(v)*imag(v)
			}
			p.grad[a] += w * nrm
		}
		trace += w * tr
		// Hessian: D̂ᴴD̂ is Hermitian, so is the sum; compute a ≤ b.
		for a := range n {
			da := dt[a*m : (a+1)*m]
			for b := a; b < n; b++ {
				var z complex128
				for i, v := range dt[b*m : (b+1)*m] {
					z += cmplx.Conj(da[i]) * v
				}
				h := -2 * w * real(z*inv[b*n+a])
				p.hess[a*n+b] += h
				if b != a {
					p.hess[b*n+a] += h
				}
			}
		}
	}
	var sumLambda float64
	for a, v := range lambda {
		sumLambda += v
		p.grad[a] -= float64(k)
	}
	p.val = ds.xx - trace - float64(k)*sumLambda
	return !math.IsNaN(p.val)
}

// invertHPD sets inv to the inverse of the n×n Hermitian positive definite
// matrix a, overwriting a with scratch. It returns false if a is not
// numerically positive definite.
func invertHPD(inv, a []complex128, n int) bool {
	// Cholesky a = L Lᴴ, L lower, in place.
	for j := range n {
		d := real(a[j*n+j])
		for p := range j {
			v := a[j*n+p]
			d -= real(v)*real(v) + imag(v)*imag(v)
		}
		if !(d > 0) {
			return false
		}
		ljj := math.Sqrt(d)
		a[j*n+j] = complex(ljj, 0)
		for i := j + 1; i < n; i++ {
			z := a[i*n+j]
			for p := range j {
				z -= a[i*n+p] * cmplx.Conj(a[j*n+p])
			}
			a[i*n+j] = z / complex(ljj, 0)
		}
	}
	// L⁻¹ in place (lower triangular).
	for j := range n {
		a[j*n+j] = 1 / a[j*n+j]
		for i := j + 1; i < n; i++ {
			var z complex128
			for p := j; p < i; p++ {
				z += a[i*n+p] * a[p*n+j]
			}
			a[i*n+j] = -z / a[i*n+i]
		}
	}
	// A⁻¹ = L⁻ᴴ L⁻¹: (A⁻¹)_ij = Σ_{p ≥ max(i,j)} conj(L⁻¹_pi) L⁻¹_pj.
	for i := range n {
		for j := i; j < n; j++ {
			var z complex128
			for p := j; p < n; p++ {
				z += cmplx.Conj(a[p*n+i]) * a[p*n+j]
			}
			inv[i*n+j] = z
			inv[j*n+i] = cmplx.Conj(z)
		}
		inv[i*n+i] = complex(real(inv[i*n+i]), 0)
	}
	return true
}

// startLambda sets ds.lambda to a diagonal estimate: the multiplier each
// atom would need if B̂B̂ᴴ were diagonal, i.e. the root of
// Σ_ℓ w_ℓ ‖E_ℓ(:,a)‖²/(G_ℓ,aa + λ)² = K, or 0 when the atom is within the
// unit ball at λ = 0.
func (ds *dualSolver) startLambda() {
	m, n, k := ds.m, ds.n, float64(ds.k)
	for a := range n {
		f := func(lam float64) (v, dv float64) {
			for l := range ds.s {
				var en float64
				for _, z := range ds.e[l][a*m : (a+1)*m] {
					en += real(z)*real(z) + imag(z)*imag(z)
				}
				den := real(ds.g[l][a*n+a]) + lam + ds.ridge
				w := tproduct.Weight(l, ds.k)
				v += w * en / (den * den)
				dv -= 2 * w * en / (den * den * den)
			}
			return v - k, dv
		}
		// f is convex and decreasing: Newton from the left approaches the
		// root monotonically.
		lam := 0.0
		for range 50 {
			v, dv := f(lam)
			if v <= 1e-6*k || dv == 0 {
				break
			}
			lam -= v / dv
		}
		ds.lambda[a] = lam
	}
}

// maximise runs projected Newton from startLambda and leaves D̂ at the final
// multipliers in ds.dt. It returns the number of Newton steps, whether the
// projected gradient reached dualGradTol·K, and false in ok if the dual
// could not be evaluated at all (ds.dt is then meaningless).
func (ds *dualSolver) maximise() (iters int, converged, ok bool) {
	k := float64(ds.k)
	ds.startLambda()
	if !ds.evalRobust(&ds.cur, ds.lambda) {
		return 0, false, false
	}
	for iters = 0; iters < dualMaxIter; iters++ {
		if projGrad(ds.cur.grad, ds.lambda) <= dualGradTol*k {
			converged = true
			break
		}
		if !ds.direction() {
			break
		}
		if !ds.lineSearch() {
			break
		}
	}
	// Leave D̂ of the final multipliers in ds.dt.
	ok = ds.evalRobust(&ds.cur, ds.lambda)
	return iters, converged, ok
}

// evalRobust is eval, retrying with a larger ridge if the factorisation
// breaks down.
func (ds *dualSolver) evalRobust(p *dualPoint, lambda []float64) bool {
	for range 8 {
		if ds.eval(p, lambda) {
			return true
		}
		ds.ridge = max(ds.ridge*100, math.SmallestNonzeroFloat64)
	}
	return false
}

// direction sets ds.dir to the projected Newton ascent direction at
// ds.lambda (Bertsekas 1982): multipliers at or near zero whose gradient
// pushes them down take a diagonally scaled gradient step (to be clipped at
// zero); the others a Newton step on the reduced Hessian.
func (ds *dualSolver) direction() bool {
	n := ds.n
	p := &ds.cur
	// ε: distance moved by a diagonally scaled projected gradient step.
	var eps float64
	for a, gr := range p.grad {
		h := max(-p.hess[a*n+a], 1e-300)
		step := max(ds.lambda[a]+gr/h, 0) - ds.lambda[a]
		eps += step * step
	}
	eps = math.Sqrt(eps)
	ds.free = ds.free[:0]
	for a, gr := range p.grad {
		if ds.lambda[a] <= eps && gr < 0 {
			ds.dir[a] = gr / max(-p.hess[a*n+a], 1e-300)
		} else {
			ds.free = append(ds.free, a)
		}
	}
	nf := len(ds.free)
	if nf == 0 {
		return true
	}
	sym, rhs, sol := ds.sym[:nf*nf], ds.rhs[:nf], ds.sol[:nf]
	var diag float64
	for a, i := range ds.free {
		for b, j := range ds.free {
			sym[a*nf+b] = -p.hess[i*n+j]
		}
		rhs[a] = p.grad[i]
		diag = max(diag, sym[a*nf+a])
	}
	if !(diag > 0) {
		diag = 1
	}
	// −H is positive semidefinite; shift it slightly if it is singular.
	var chol mat.Cholesky
	shift := 0.0
	for range 12 {
		s := mat.NewSymDense(nf, append([]float64(nil), sym...))
		for a := range nf {
			s.SetSym(a, a, s.At(a, a)+shift)
		}
		if chol.Factorize(s) {
			x := mat.NewVecDense(nf, sol)
			if err := chol.SolveVecTo(x, mat.NewVecDense(nf, rhs)); err == nil {
				for a, i := range ds.free {
					ds.dir[i] = sol[a]
				}
				return true
			}
		}
		shift = max(shift*100, 1e-12*diag)
	}
	return false
}

// lineSearch backtracks along the projected path λ(α) = max(λ + α·dir, 0)
// until the Armijo condition g(λ(α)) ≥ g(λ) + σ ∇gᵀ(λ(α) − λ) holds (and g
// does not decrease), then moves there. Near the optimum the predicted gain
// falls below the round-off of g, which can then no longer rank the points;
// there the full step is taken if it lowers the projected gradient. It
// returns false if no step is accepted.
func (ds *dualSolver) lineSearch() bool {
	const sigma = 1e-4
	alpha := 1.0
	for try := range 40 {
		var pred float64
		moved := false
		for a, v := range ds.lambda {
			t := max(v+alpha*ds.dir[a], 0)
			ds.trial[a] = t
			pred += ds.cur.grad[a] * (t - v)
			moved = moved || t != v
		}
		if !moved {
			return false
		}
		if !ds.eval(&ds.next, ds.trial) {
			alpha /= 2
			continue
		}
		accept := ds.next.val >= ds.cur.val && ds.next.val-ds.cur.val >= sigma*pred
		if try == 0 && pred <= 1e-13*math.Abs(ds.cur.val) {
			accept = projGrad(ds.next.grad, ds.trial) < projGrad(ds.cur.grad, ds.lambda)
			if !accept {
				return false
			}
		}
		if accept {
			copy(ds.lambda, ds.trial)
			ds.cur, ds.next = ds.next, ds.cur
			return true
		}
		alpha /= 2
	}
	return false
}

// projGrad returns the largest entry of the projected gradient of the dual
// at lambda: |∂g/∂λ_j| where λ_j > 0, max(∂g/∂λ_j, 0) at the bound.
func projGrad(grad, lambda []float64) float64 {
	var pg float64
	for a, gr := range grad {
		if lambda[a] > 0 {
			pg = max(pg, math.Abs(gr))
		} else {
			pg = max(pg, gr)
		}
	}
	return pg
}

// writeAtoms sets the live atoms (indices into 0..R-1) of d to the inverse
// DFT of D̂ in ds.dt.
func (ds *dualSolver) writeAtoms(d *tproduct.Tensor, live []int, p *tproduct.DFT) {
	m := ds.m
	for a, q := range live {
		col := d.Lateral(q)
		for i := range m {
			for l := range ds.s {
				ds.spec[l] = ds.dt[l][a*m+i]
			}
			p.InverseTube(ds.tube, ds.spec)
			for t, v := range ds.tube {
				col[t*m+i] = v
			}
		}
	}
}
