package wnnm

import "math"

// tridiagSolver solves (T − λI)x = b for a symmetric tridiagonal T by
// Gaussian elimination with partial pivoting (the factorisation of LAPACK's
// dlagtf, written here because gonum has neither it nor dstein): it is the
// inner step of inverse iteration, which finds the eigenvector of T for an
// eigenvalue λ known to machine precision in O(g) per solve, where the QR
// sweeps of Dsteqr would cost O(g²) per eigenvector and compute all g.
type tridiagSolver struct {
	u0, u1, u2 []float64 // the three diagonals of U
	mult       []float64 // elimination multipliers
	swap       []bool    // whether step i exchanged rows i and i+1
}

func newTridiagSolver(g int) *tridiagSolver {
	return &tridiagSolver{
		u0: make([]float64, g), u1: make([]float64, g), u2: make([]float64, g),
		mult: make([]float64, g), swap: make([]bool, g),
	}
}

// factor factorises T − λI, T with diagonal d and off-diagonal e; a zero
// pivot becomes tiny, the usual perturbation of inverse iteration.
func (s *tridiagSolver) factor(d, e []float64, lambda, tiny float64) {
	g := len(d)
	r0, r1, r2 := d[0]-lambda, 0.0, 0.0
	if g > 1 {
		r1 = e[0]
	}
	for i := 0; i < g-1; i++ {
		c, a, b := e[i], d[i+1]-lambda, 0.0
		if i+1 < g-1 {
			b = e[i+1]
		}
		if math.Abs(r0) >= math.Abs(c) {
			if r0 == 0 {
				r0 = tiny
			}
			m := c / r0
			s.u0[i], s.u1[i], s.u2[i], s.mult[i], s.swap[i] = r0, r1, r2, m, false
			r0, r1, r2 = a-m*r1, b-m*r2, 0
		} else {
			m := r0 / c
			s.u0[i], s.u1[i], s.u2[i], s.mult[i], s.swap[i] = c, a, b, m, true
			r0, r1, r2 = r1-m*a, r2-m*b, 0
		}
	}
	if r0 == 0 {
		r0 = tiny
	}
	s.u0[g-1] = r0
}

// solve overwrites x (the right-hand side) with the solution.
func (s *tridiagSolver) solve(x []float64) {
	g := len(x)
	for i := 0; i < g-1; i++ {
		if s.swap[i] {
			x[i], x[i+1] = x[i+1], x[i]
		}
		x[i+1] -= s.mult[i] * x[i]
	}
	x[g-1] /= s.u0[g-1]
	if g > 1 {
		x[g-2] = (x[g-2] - s.u1[g-2]*x[g-1]) / s.u0[g-2]
	}
	for i := g - 3; i >= 0; i-- {
		x[i] = (x[i] - s.u1[i]*x[i+1] - s.u2[i]*x[i+2]) / s.u0[i]
	}
}
