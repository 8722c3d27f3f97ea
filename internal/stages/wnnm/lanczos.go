package wnnm

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
)

// The eigenpairs Shrink needs. Only those of the Gram matrix G above the
// noise level survive the shrinkage, and a group of similar patches has
// few of them (1–3 for most groups of a natural scene, rarely over 20 of
// the 100–250 a group has), so a full eigendecomposition, or even the
// tridiagonal reduction of G (Dsytrd: level-2 BLAS, two thirds of the
// low-rank stage's time when it was used), does far more than is needed.
// Lanczos with full reorthogonalisation builds an orthonormal basis Q of
// the Krylov space of a fixed start vector, one product G·q per step, in
// which the leading eigenpairs converge first; the eigenpairs of the small
// tridiagonal T = QᵀGQ (Dsteqr) give the Ritz pairs (θ, Qs), each with the
// residual ‖G·Qs − θ·Qs‖ = β|s_m| known without forming it. The space
// grows by lanczosGrow steps until every Ritz value above the noise floor
// has a residual below residualTol and at least
// lanczosGuard Ritz values lie below the floor (doubling while fewer do);
// at g steps it is the whole space and the pairs are exact. The residuals
// are first predicted from the eigenvalues alone (ritzResidualsSmall), so
// the eigenvectors of T are computed once a group, not at every check. A Ritz value
// never exceeds the eigenvalue it approaches (Cauchy interlacing), so one
// above the floor always belongs to an eigenvalue above it.
//
// The price is paid by groups whose components nearly all survive (noise
// faint against the detail): they need all g steps, and then cost about
// 1.3 times the full eigendecomposition (`go test -bench Shrink/256x272`,
// 200 of 256 components). Groups that keep many but not most, as on the
// real satellite cube of docs/results.md at rank 17 of 17, still gain.
const (
	lanczosStart = 12
	lanczosGrow  = 12
	lanczosGuard = 4
	lanczosTol   = 1e-7
	// lanczosFloorTol: see residualTol.
	lanczosFloorTol = 1e-3
)

// residualTol is the residual a Ritz pair must reach: lanczosTol of the
// largest Ritz value theta, or lanczosFloorTol of the noise floor if that
// is larger. A pair is only needed to within a small part of the noise
// (its error moves the estimate by about residual/gap), and converging the
// components just above the floor, which sit next to the noise's own, to
// 1e-7 of a strong leading component cost 13–24 % more steps on the
// nonlocal method's groups at σ = 10 (256×256 crops of CAVE scenes) for
// no more than 0.001 dB.
func residualTol(theta, floor float64) float64 {
	return max(lanczosTol*math.Max(theta, 0), lanczosFloorTol*floor)
}

// lanczos fills ws.vals[:k] with the Ritz values of the Gram matrix of
// the centred group ws.yc in decreasing order and ws.z with their Ritz
// vectors (k of them, each g long), for the k Ritz values above floor once
// they have converged, and returns k.
func (s *Shrinker) lanczos(ws *Workspace, floor float64) int {
	g := s.g
	yc := blas64.General{Rows: s.n, Cols: s.d, Stride: s.d, Data: ws.yc}
	// The Gram product G·q is two matrix–vector products with Yc, 2·n·d
	// multiply–adds, rather than one with G formed: forming G alone costs
	// n·d·g/2, more than the products of the g/4 steps that are the most a
	// group of similar patches needs.
	inner, outer := blas.NoTrans, blas.Trans // G = YcᵀYc
	if s.n < s.d {
		inner, outer = blas.Trans, blas.NoTrans // G = YcYcᵀ
	}
	tmp := blas64.Vector{N: s.n + s.d - g, Inc: 1, Data: ws.tmp}
	q := ws.krylov // step j's vector at q[j*g:(j+1)*g]
	v := q[:g]
	nrm := 0.0
	for i := range v {
		v[i] = 1 + 0.1*math.Sin(float64(i)) // any start with components along every eigenvector
		nrm += v[i] * v[i]
	}
	blas64.Scal(1/math.Sqrt(nrm), vec(v))
	alpha, beta := ws.alpha, ws.beta
	impl := gonumlapack.Implementation{}
	m, target := 0, min(g, lanczosStart)
	for {
		exact := false
		for ; m < target; m++ {
			qj := q[m*g : (m+1)*g]
			w := ws.w
			blas64.Gemv(inner, 1, yc, vec(qj), 0, tmp)
			blas64.Gemv(outer, 1, yc, tmp, 0, vec(w))
			alpha[m] = blas64.Dot(vec(qj), vec(w))
			// Full reorthogonalisation, twice (classical Gram–Schmidt):
			// it keeps Q orthonormal to working precision, so no
			// spurious copies of converged Ritz values appear.
			basis := blas64.General{Rows: m + 1, Cols: g, Stride: g, Data: q[:(m+1)*g]}
			h := blas64.Vector{N: m + 1, Inc: 1, Data: ws.h}
			wv := vec(w)
			for range 2 {
				blas64.Gemv(blas.NoTrans, 1, basis, wv, 0, h)
				blas64.Gemv(blas.Trans, -1, basis, h, 1, wv)
			}
			b := blas64.Nrm2(vec(w))
			beta[m] = b
			if m+1 == g || b <= 1e-13*math.Abs(alpha[0])+1e-300 {
				// An invariant subspace: its Ritz pairs are exact.
				m++
				exact = true
				break
			}
			next := q[(m+1)*g : (m+2)*g]
			copy(next, w)
			blas64.Scal(1/b, vec(next))
		}
		// The Ritz values alone first (Dsterf, O(m²)): while too few of
		// them lie below the floor, the space must grow whatever the
		// residuals are, and the vectors (Dsteqr, O(m³)) would be wasted.
		d, e := ws.tdiag[:m], ws.toff[:max(m-1, 0)]
		copy(d, alpha[:m])
		copy(e, beta[:max(m-1, 0)])
		if !impl.Dsterf(m, d, e) {
			panic("lowrank: the Lanczos tridiagonal did not converge")
		}
		above := 0
		for above < m && d[m-1-above] > floor {
			above++
		}
		done := exact || m == g
		if !done && above+lanczosGuard > m {
			// Most of the space is above the floor: grow it
			// geometrically, as a group with many components needs
			// nearly all g steps.
			target = min(g, max(m+lanczosGrow, 2*m))
			continue
		}
		if !done && !ritzResidualsSmall(ws, m, above, floor) {
			target = min(g, m+lanczosGrow)
			continue
		}
		// Ritz pairs of T (m×m): eigenvalues ascending in d, vectors in
		// the columns of sv (row-major, m×m).
		sv := ws.ritz[:m*m]
		copy(d, alpha[:m])
		copy(e, beta[:max(m-1, 0)])
		if !impl.Dsteqr(lapack.EVTridiag, m, d, e, sv, m, ws.work) {
			panic("lowrank: the Lanczos tridiagonal did not converge")
		}
		converged := done
		if !converged {
			converged = true
			tol := residualTol(d[m-1], floor)
			for k := range above {
				if beta[m-1]*math.Abs(sv[(m-1)*m+m-1-k]) > tol {
					converged = false
					break
				}
			}
		}
		if converged {
			for k := range above {
				col := m - 1 - k
				ws.vals[k] = d[col]
				zk := ws.z[k*g : (k+1)*g]
				clear(zk)
				for j := range m {
					blas64.Axpy(sv[j*m+col], vec(q[j*g:(j+1)*g]), vec(zk))
				}
			}
			return above
		}
		target = min(g, m+lanczosGrow)
	}
}

// ritzResidualsSmall reports whether the residuals of the top above Ritz
// pairs of the m-step tridiagonal T (its eigenvalues ascending in
// ws.tdiag[:m], from Dsterf) are all within residualTol, as
// far as the eigenvalues of T and of its leading (m−1)×(m−1) block tell.
//
// Why: the residual of the Ritz pair (θ_k, Q·s_k) is β_m·|s_k(m)|, and the
// last component of an eigenvector of a tridiagonal matrix follows from
// the eigenvalues θ of T and μ of its leading block alone,
//
//	s_k(m)² = ∏_j (θ_k − μ_j) / ∏_{i≠k} (θ_k − θ_i),
//
// an O(m²) test that spares the O(m³) eigenvectors (Dsteqr) of every
// check at which the space must still grow: groups with many components
// check several times. By interlacing, θ_j ≤ μ_j ≤ θ_{j+1}, the product is
// taken as the factors (θ_k − μ_j)/(θ_k − θ_j) for j < k and
// (μ_j − θ_k)/(θ_{j+1} − θ_k) for j ≥ k, each in [0, 1], so it neither
// overflows nor loses the small values that matter. Rounding can make it
// wrong for clustered values; the caller confirms a positive answer with
// the eigenvectors, so an error costs time, never accuracy.
func ritzResidualsSmall(ws *Workspace, m, above int, floor float64) bool {
	theta := ws.tdiag[:m]
	mu, e := ws.lead[:m-1], ws.toff[:max(m-2, 0)]
	copy(mu, ws.alpha[:m-1])
	copy(e, ws.beta[:max(m-2, 0)])
	impl := gonumlapack.Implementation{}
	if !impl.Dsterf(m-1, mu, e) {
		panic("lowrank: the Lanczos tridiagonal did not converge")
	}
	tol := residualTol(theta[m-1], floor)
	b := ws.beta[m-1]
	for k := m - above; k < m; k++ {
		if b*math.Sqrt(lastComponentSq(theta, mu, k)) > tol {
			return false
		}
	}
	return true
}

// lastComponentSq returns the square of the last component of the unit
// eigenvector for theta[k] of a symmetric tridiagonal matrix whose
// eigenvalues, ascending, are theta and those of its leading block mu
// (one fewer), by the product of ritzResidualsSmall.
func lastComponentSq(theta, mu []float64, k int) float64 {
	s2 := 1.0
	for j, u := range mu {
		var f float64
		if j < k {
			f = ratio(theta[k]-u, theta[k]-theta[j])
		} else {
			f = ratio(u-theta[k], theta[j+1]-theta[k])
		}
		if s2 *= f; s2 == 0 {
			break
		}
	}
	return s2
}

// ratio returns a/b clamped to [0, 1], and 1 when b is not positive (equal
// Ritz values, where interlacing forces a = 0 too and the factor is
// undetermined).
func ratio(a, b float64) float64 {
	if !(b > 0) {
		return 1
	}
	return min(1, max(0, a/b))
}

// vec views x as a unit-stride BLAS vector.
func vec(x []float64) blas64.Vector { return blas64.Vector{N: len(x), Inc: 1, Data: x} }
