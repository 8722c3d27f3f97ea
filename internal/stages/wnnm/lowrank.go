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
// Algorithm: the singular values and vectors come from the leading
// eigenpairs of the smaller Gram matrix, G = YcᵀYc (d×d) when d ≤ n, else
// YcYcᵀ (n×n): with G = V diag(s²) Vᵀ, X = 1μᵀ + Yc·V·diag(x/s)·Vᵀ (or
// U·diag(x/s)·Uᵀ·Yc), which needs no U. Only the eigenpairs above the
// noise level matter, and Lanczos finds them without G formed (see
// lanczos.go). Working with G squares the condition number, but only the
// components with sᵢ above the noise level survive, and those are resolved
// to a relative accuracy far below σ (the tests compare with a full SVD).
package wnnm

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
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

// Workspace is the scratch memory of Shrink.
type Workspace struct {
	mean   []float64
	yc     []float64 // centred group, n×d
	tmp    []float64 // Yc·v or Ycᵀ·u, the inner half of a Gram product
	work   []float64 // LAPACK workspace
	krylov []float64 // Lanczos basis, one g-vector per step
	alpha  []float64 // Lanczos diagonal
	beta   []float64 // Lanczos off-diagonal
	w      []float64 // Lanczos step vector
	h      []float64 // its coefficients on the basis
	tdiag  []float64 // Ritz values, ascending
	toff   []float64 // scratch off-diagonal of Dsterf and Dsteqr
	lead   []float64 // eigenvalues of the tridiagonal's leading block
	ritz   []float64 // eigenvectors of the Lanczos tridiagonal
	vals   []float64 // the Ritz values above the noise, descending
	z      []float64 // their Ritz vectors, one g-vector each
	scale  []float64 // x/s of every kept component
	proj   []float64 // n×r (d ≤ n) or r×d (n < d) coefficients
	basis  []float64 // g×r kept eigenvectors
}

// NewWorkspace returns a workspace for Shrink.
func (s *Shrinker) NewWorkspace() *Workspace {
	g := s.g
	return &Workspace{
		mean:   make([]float64, s.d),
		yc:     make([]float64, s.n*s.d),
		tmp:    make([]float64, max(s.n, s.d)),
		work:   make([]float64, max(1, 2*g-2)),
		krylov: make([]float64, g*g),
		alpha:  make([]float64, g),
		beta:   make([]float64, g),
		w:      make([]float64, g),
		h:      make([]float64, g),
		tdiag:  make([]float64, g),
		toff:   make([]float64, g),
		lead:   make([]float64, g),
		ritz:   make([]float64, g*g),
		vals:   make([]float64, g),
		z:      make([]float64, g*g),
		scale:  make([]float64, g),
		proj:   make([]float64, s.n*s.d),
		basis:  make([]float64, g*g),
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
	noise := (math.Sqrt(float64(n)) + math.Sqrt(float64(d))) * sigma
	noise2 := noise * noise
	vals := ws.vals
	for q := range s.lanczos(ws, noise2) {
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
	for k := range rank {
		for i := range g {
			ws.basis[i*g+k] = ws.z[k*g+i]
		}
	}
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
