// Package tproducttest holds the brute-force forms of the t-product algebra
// that tests check the Fourier-domain code against (docs/model.md §1): the
// block-circulant matrix, unfolding and folding, and random tensors. It is
// written from the definitions and shares no code with package tproduct
// beyond the Tensor type.
package tproducttest

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/tproduct"
)

// Rand returns an m×n×k tensor of standard normal entries from rng.
func Rand(rng *rand.Rand, m, n, k int) *tproduct.Tensor {
	x := tproduct.NewTensor(m, n, k)
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	return x
}

// UnitAtoms returns Rand(rng, m, r, k) with every lateral slice (atom)
// scaled to unit Frobenius norm.
func UnitAtoms(rng *rand.Rand, m, r, k int) *tproduct.Tensor {
	d := Rand(rng, m, r, k)
	for j := range r {
		a := d.Lateral(j)
		var n2 float64
		for _, v := range a {
			n2 += v * v
		}
		s := 1 / math.Sqrt(n2)
		for i := range a {
			a[i] *= s
		}
	}
	return d
}

// Circ returns the mk×rk block-circulant matrix of d (m×r×k) of the
// paper's Lemma 1: block (i, j) is the frontal slice d^((i−j) mod k), so
// that unfold(d * b) = Circ(d)·Unfold(b).
func Circ(d *tproduct.Tensor) *mat.Dense {
	m, r, k := d.M, d.N, d.K
	c := mat.NewDense(m*k, r*k, nil)
	for bi := range k {
		for bj := range k {
			t := ((bi-bj)%k + k) % k
			for i := range m {
				for j := range r {
					c.Set(bi*m+i, bj*r+j, d.At(i, j, t))
				}
			}
		}
	}
	return c
}

// Unfold returns unfold(x): the frontal slices of x (m×n×k) stacked
// vertically, an mk×n matrix.
func Unfold(x *tproduct.Tensor) *mat.Dense {
	u := mat.NewDense(x.M*x.K, x.N, nil)
	for t := range x.K {
		for i := range x.M {
			for j := range x.N {
				u.Set(t*x.M+i, j, x.At(i, j, t))
			}
		}
	}
	return u
}

// Fold is the inverse of Unfold: the mk×n matrix u as an m×n×k tproduct.
func Fold(u *mat.Dense, m, n, k int) *tproduct.Tensor {
	x := tproduct.NewTensor(m, n, k)
	for t := range k {
		for i := range m {
			for j := range n {
				x.Set(i, j, t, u.At(t*m+i, j))
			}
		}
	}
	return x
}
