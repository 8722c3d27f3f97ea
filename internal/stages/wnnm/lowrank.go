// Package wnnm estimates a group of similar patches by weighted
// nuclear-norm shrinkage of its singular values: the collaborative estimate
// of WNNM (Gu, Zhang, Zuo, Feng, CVPR 2014) as NGmeet (He et al., CVPR
// 2019) applies it to groups of spectral eigen-image patches.
//
// A group is an n×d matrix Y, row-major: n similar patches of d values each,
// every value with i.i.d. noise of standard deviation σ. With μ the mean
// patch (the column means) and Yc = Y − 1μᵀ = U diag(s) Vᵀ:
//
//	ŝᵢ = √max(sᵢ² − (√n + √d)²σ², 0)   the clean singular values, estimated
//	wᵢ = c·√n·σ² / (ŝᵢ + ε)             the weights, ε = 1e−8
//	xᵢ = max(sᵢ − wᵢ, 0)                the shrunk singular values
//	X  = U diag(x) Vᵀ + 1μᵀ
//
// (√n + √d)σ is the largest singular value of an n×d matrix of pure noise,
// so components below it are dropped whatever c is.
//
// Algorithm: the singular values and vectors come from the eigenvectors of
// the smaller Gram matrix, G = YcᵀYc (d×d) when d ≤ n, else YcYcᵀ (n×n):
// with G = V diag(s²) Vᵀ, X = 1μᵀ + Yc·V·diag(x/s)·Vᵀ (or U·diag(x/s)·Uᵀ·Yc),
// which needs no U. Forming G squares the condition number, but only the
// components with sᵢ above the noise level survive, and those are resolved
// to a relative accuracy far below σ (the tests compare with a full SVD).
package wnnm

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	gonumlapack "gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Shrinker is the plan for n×d groups. It is immutable and safe for
// concurrent use; each goroutine needs its own Workspace.
type Shrinker struct {
	n, d int
	g    int // side of the Gram matrix: min(n, d)
}

// New returns the plan for n×d groups. It panics if n or d is not
// positive.
func New(n, d int) *Shrinker {
	if n < 1 || d < 1 {
		panic(fmt.Sprintf("lowrank: group size %d×%d is not positive", n, d))
	}
	return &Shrinker{n: n, d: d, g: min(n, d)}
}

// lwork is the optimal LAPACK workspace length for the Gram matrix.
func (s *Shrinker) lwork() int {
	var q [1]float64
	a := blas64.Symmetric{N: s.g, Stride: s.g, Uplo: blas.Upper, Data: make([]float64, s.g*s.g)}
	lapack64.Syev(lapack.EVCompute, a, make([]float64, s.g), q[:], -1)
	return max(int(q[0]), 3*s.g-1)
}

// Workspace is the scratch memory of Shrink.
type Workspace struct {
	mean  []float64
	yc    []float64 // centred group, n×d
	gram  []float64 // Gram matrix, then the reflectors of its tridiagonal form (g×g)
	work  []float64 // LAPACK workspace
	diag  []float64 // T's diagonal
	off   []float64 // T's off-diagonal
	tau   []float64 // Householder scalars of the tridiagonal reduction
	z     []float64 // eigenvectors of T, g×rank
	tri   *tridiagSolver
	vals  []float64 // eigenvalues of the Gram matrix, ascending
	scale []float64 // x/s of every kept component
	proj  []float64 // n×r (d ≤ n) or r×d (n < d) coefficients
	basis []float64 // g×r kept eigenvectors
}

// NewWorkspace returns a workspace for Shrink.
func (s *Shrinker) NewWorkspace() *Workspace {
	return &Workspace{
		mean:  make([]float64, s.d),
		yc:    make([]float64, s.n*s.d),
		gram:  make([]float64, s.g*s.g),
		work:  make([]float64, s.lwork()),
		vals:  make([]float64, s.g),
		diag:  make([]float64, s.g),
		off:   make([]float64, s.g),
		tau:   make([]float64, s.g),
		z:     make([]float64, s.g*s.g),
		tri:   newTridiagSolver(s.g),
		scale: make([]float64, s.g),
		proj:  make([]float64, s.n*s.d),
		basis: make([]float64, s.g*s.g),
	}
}

// Shrink writes the estimate X of the group y (n×d, row-major) into dst
// (which may be y) and returns its rank before the mean is added back.
// sigma ≥ 0 is the noise level and c > 0 scales the weights. It panics if a
// length is not n·d.
func (s *Shrinker) Shrink(dst, y []float64, sigma, c float64, ws *Workspace) (rank int) {
	n, d, g := s.n, s.d, s.g
	if len(dst) != n*d || len(y) != n*d {
		panic(fmt.Sprintf("lowrank: Shrink: dst %d and y %d long for a %d×%d group", len(dst), len(y), n, d))
	}
	clear(ws.mean)
	for i := range n {
		for j, v := range y[i*d : (i+1)*d] {
			ws.mean[j] += v
		}
	}
	for j := range ws.mean {
		ws.mean[j] /= float64(n)
	}
	for i := range n {
		row := y[i*d : (i+1)*d]
		out := ws.yc[i*d : (i+1)*d]
		for j, v := range row {
			out[j] = v - ws.mean[j]
		}
	}
	yc := blas64.General{Rows: n, Cols: d, Stride: d, Data: ws.yc}
	// The lower triangle: the reduction's reflectors then stand as Dormqr
	// applies them (eigenvectors).
	gram := blas64.Symmetric{N: g, Stride: g, Uplo: blas.Lower, Data: ws.gram}
	if d <= n {
		blas64.Syrk(blas.Trans, 1, yc, 0, gram) // YcᵀYc
	} else {
		blas64.Syrk(blas.NoTrans, 1, yc, 0, gram) // YcYcᵀ
	}
	// Eigenvalues first (tridiagonal reduction and the root-free QR of
	// Dsterf, no vectors): most of the work of a full eigendecomposition is
	// in the vectors, and only the few kept ones are needed.
	impl := gonumlapack.Implementation{}
	impl.Dsytrd(blas.Lower, g, ws.gram, g, ws.diag, ws.off[:max(g-1, 0)], ws.tau[:max(g-1, 0)], ws.work, len(ws.work))
	vals := ws.vals
	copy(vals, ws.diag)
	copy(ws.z, ws.off[:max(g-1, 0)]) // Dsterf overwrites the off-diagonal
	if !impl.Dsterf(g, vals, ws.z[:max(g-1, 0)]) {
		panic("lowrank: the eigenvalues of a Gram matrix did not converge")
	}
	noise := (math.Sqrt(float64(n)) + math.Sqrt(float64(d))) * sigma
	noise2 := noise * noise
	for q := g - 1; q >= 0; q-- {
		s2 := max(vals[q], 0)
		sv := math.Sqrt(s2)
		est := math.Sqrt(max(s2-noise2, 0))
		w := c * math.Sqrt(float64(n)) * sigma * sigma / (est + 1e-8)
		x := sv - w
		if x <= 0 {
			break
		}
		ws.scale[rank] = x / sv
		rank++
	}
	for i := range n {
		copy(dst[i*d:(i+1)*d], ws.mean)
	}
	if rank == 0 {
		return 0
	}
	s.eigenvectors(ws, rank)
	scale := ws.scale
	basis := blas64.General{Rows: g, Cols: rank, Stride: g, Data: ws.basis}
	out := blas64.General{Rows: n, Cols: d, Stride: d, Data: dst}
	if d <= n {
		// X = μ + Yc·V·diag(x/s)·Vᵀ: P = Yc·V (n×rank), then P·diag·Vᵀ.
		p := blas64.General{Rows: n, Cols: rank, Stride: rank, Data: ws.proj[:n*rank]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, yc, basis, 0, p)
		for i := range n {
			for q := range rank {
				p.Data[i*rank+q] *= scale[q]
			}
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, p, basis, 1, out)
	} else {
		// X = μ + U·diag(x/s)·Uᵀ·Yc: P = Uᵀ·Yc (rank×d), then U·diag·P.
		p := blas64.General{Rows: rank, Cols: d, Stride: d, Data: ws.proj[:rank*d]}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, basis, yc, 0, p)
		for q := range rank {
			for j := range d {
				p.Data[q*d+j] *= scale[q]
			}
		}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, basis, p, 1, out)
	}
	return rank
}

// eigenvectors fills the first rank columns of ws.basis with the
// eigenvectors of the Gram matrix for its rank largest eigenvalues: inverse
// iteration on the tridiagonal T (three solves from a fixed start, each
// vector orthogonalised against the earlier ones whose eigenvalue is close,
// as LAPACK's dstein does within clusters), then back to the Gram matrix's
// basis through the reflectors of the reduction.
func (s *Shrinker) eigenvectors(ws *Workspace, rank int) {
	g := s.g
	vals := ws.vals
	norm := 0.0
	for i := range g {
		r := math.Abs(ws.diag[i])
		if i > 0 {
			r += math.Abs(ws.off[i-1])
		}
		if i < g-1 {
			r += math.Abs(ws.off[i])
		}
		norm = max(norm, r)
	}
	tiny := max(norm, 1e-300) * 1e-15
	cluster := 1e-3 * norm
	z := ws.z
	for k := range rank {
		lambda := vals[g-1-k]
		ws.tri.factor(ws.diag, ws.off[:max(g-1, 0)], lambda, tiny)
		v := z[k*g : (k+1)*g]
		for i := range v {
			v[i] = 1 + 0.1*math.Sin(float64(i*(k+1))) // any start with components along every eigenvector
		}
		for range 3 {
			ws.tri.solve(v)
			for j := range k {
				if math.Abs(vals[g-1-j]-lambda) > cluster {
					continue
				}
				u := z[j*g : (j+1)*g]
				dot := 0.0
				for i, x := range v {
					dot += x * u[i]
				}
				for i := range v {
					v[i] -= dot * u[i]
				}
			}
			nrm := 0.0
			for _, x := range v {
				nrm += x * x
			}
			nrm = math.Sqrt(nrm)
			for i := range v {
				v[i] /= nrm
			}
		}
	}
	// basis (g×rank, stride g) = Q·Z, Z stored rank×g: the reflectors of the
	// reduction applied to the rank vectors, 2g²·rank operations, rather
	// than Q formed whole (Dorgtr, 4g³/3) and multiplied.
	for k := range rank {
		for i := range g {
			ws.basis[i*g+k] = z[k*g+i]
		}
	}
	// Q = diag(1, Q′), Q′ the product of the g−1 reflectors stored below the
	// subdiagonal from row 1 (LAPACK's dormtr for the lower triangle; gonum
	// has no Dormtr).
	if g > 1 {
		impl := gonumlapack.Implementation{}
		impl.Dormqr(blas.Left, blas.NoTrans, g-1, rank, g-1, ws.gram[g:], g, ws.tau[:g-1], ws.basis[g:], g, ws.work, len(ws.work))
	}
}
