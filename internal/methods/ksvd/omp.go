package ksvd

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// Coder sparse-codes signals over one dictionary by Batch-OMP (Rubinstein,
// Zibulevsky and Elad 2008, the error-constrained variant). It holds the
// scratch memory of one coding at a time, so Code allocates nothing; it is
// not safe for concurrent use: keep one Coder per worker. The Gram matrix
// may be shared between Coders.
//
// OMP picks, one at a time, the atom most correlated with the residual and
// refits all coefficients by least squares on the chosen support I. Batch-OMP
// does the same without forming the residual: with α⁰ = Dᵀx and G = DᵀD,
// the least-squares coefficients on I solve G_II γ = α⁰_I, the correlations
// of the residual are α = α⁰ − G_{:,I}γ, and its energy is ‖x‖² − γᵀα⁰_I.
// G_II = LLᵀ is factored progressively: adding atom k appends the row
// (w, √(G_kk − wᵀw)) with Lw = G_{I,k}.
type Coder struct {
	gram     []float64 // G, K×K row-major
	size     int       // K
	maxAtoms int

	chol  []float64 // L, maxAtoms×maxAtoms lower triangular, row-major
	alpha []float64 // correlations of the residual with every atom
	rhs   []float64 // α⁰ on the support
	gamma []float64 // least-squares coefficients on the support
	w     []float64 // new row of L
	taken []uint32  // taken[k] == stamp: atom k is in (or barred from) the support
	stamp uint32
}

// NewCoder returns a Coder for a dictionary of size atoms with Gram matrix
// gram (size×size, from Dictionary.Gram; not copied, not modified) that
// stops after at most maxAtoms atoms.
func NewCoder(gram []float64, size, maxAtoms int) *Coder {
	if len(gram) != size*size || maxAtoms < 1 {
		panic(fmt.Sprintf("ksvd: NewCoder: Gram of %d values for %d atoms, at most %d atoms", len(gram), size, maxAtoms))
	}
	maxAtoms = min(maxAtoms, size)
	return &Coder{
		gram: gram, size: size, maxAtoms: maxAtoms,
		chol:  make([]float64, maxAtoms*maxAtoms),
		alpha: make([]float64, size),
		rhs:   make([]float64, maxAtoms),
		gamma: make([]float64, maxAtoms),
		w:     make([]float64, maxAtoms),
		taken: make([]uint32, size),
	}
}

// MaxAtoms returns the largest support Code returns.
func (c *Coder) MaxAtoms() int { return c.maxAtoms }

// Code codes the signal x given its correlations dtx = Dᵀx (length K) and
// its energy xx = ‖x‖²: atoms are added until the residual energy
// ‖x − Dα‖² is at most eps2, or MaxAtoms atoms are in use, or no atom
// reduces the residual any more. The support goes to idx and the
// coefficients to coef, in the order the atoms were chosen (both need room
// for MaxAtoms values); Code returns the number of atoms and the residual
// energy. dtx is not modified.
func (c *Coder) Code(idx []int, coef []float64, dtx []float64, xx, eps2 float64) (atoms int, residual float64) {
	k, L, m := c.size, c.chol, c.maxAtoms
	c.stamp++
	if c.stamp == 0 { // wrapped: forget every old stamp
		clear(c.taken)
		c.stamp = 1
	}
	copy(c.alpha, dtx[:k])
	residual = xx
	n := 0
	// An atom whose correlation is below this bound cannot lower the
	// residual by more than round-off.
	tiny := 1e-14 * math.Sqrt(math.Max(xx, 0))
	for residual > eps2 && n < m {
		best, bestAbs := -1, tiny
		for j, a := range c.alpha {
			if math.Abs(a) > bestAbs && c.taken[j] != c.stamp {
				best, bestAbs = j, math.Abs(a)
			}
		}
		if best < 0 {
			break
		}
		c.taken[best] = c.stamp
		gk := c.gram[best*k : (best+1)*k]
		// New row of L: forward substitution L w = G_{I,best}.
		wsq := 0.0
		for i := range n {
			s := gk[idx[i]]
			row := L[i*m : i*m+i]
			for j, l := range row {
				s -= l * c.w[j]
			}
			s /= L[i*m+i]
			c.w[i] = s
			wsq += s * s
		}
		diag := gk[best] - wsq
		if diag <= 1e-10*gk[best] {
			// The atom is (numerically) in the span of the support: it
			// cannot help, and it stays barred from this signal.
			continue
		}
		copy(L[n*m:n*m+n], c.w[:n])
		L[n*m+n] = math.Sqrt(diag)
		idx[n] = best
		c.rhs[n] = dtx[best]
		n++
		// γ: solve L z = α⁰_I, then Lᵀ γ = z.
		g := c.gamma[:n]
		for i := range n {
			s := c.rhs[i]
			for j := range i {
				s -= L[i*m+j] * g[j]
			}
			g[i] = s / L[i*m+i]
		}
		for i := n - 1; i >= 0; i-- {
			s := g[i]
			for j := i + 1; j < n; j++ {
				s -= L[j*m+i] * g[j]
			}
			g[i] = s / L[i*m+i]
		}
		// α = α⁰ − G_{:,I} γ (G symmetric: its rows I are its columns I).
		copy(c.alpha, dtx[:k])
		for i, gi := range g {
			floats.AddScaled(c.alpha, -gi, c.gram[idx[i]*k:(idx[i]+1)*k])
		}
		fit := 0.0
		for i, gi := range g {
			fit += gi * c.rhs[i]
		}
		residual = xx - fit
	}
	copy(coef[:n], c.gamma[:n])
	return n, residual
}
