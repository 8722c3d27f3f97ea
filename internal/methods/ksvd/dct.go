package ksvd

import (
	"fmt"
	"math"
)

// OvercompleteDCT returns the 1-D overcomplete DCT with k atoms of length n
// (k ≥ n, or k = n = 1): atom j is cos(π·j·(2t+1)/(2k)), t = 0..n−1, with
// its mean removed for j > 0 and scaled to unit norm, so atom 0 is the
// constant 1/√n.
//
// The cosines are those of the DCT-II at k frequencies, so k = n gives the
// orthonormal DCT-II (its atoms already have zero mean). The reference
// toolbox samples cos(π·j·t/k) instead, whose square case is not
// orthogonal; the two span the same kind of oscillations.
func OvercompleteDCT(n, k int) (*Dictionary, error) {
	if n < 1 || k < n || (n == 1 && k != 1) {
		return nil, fmt.Errorf("ksvd: overcomplete DCT of %d atoms of length %d: need k ≥ n ≥ 1 (k = 1 when n = 1)", k, n)
	}
	d := NewDictionary(n, k)
	for j := range k {
		a := d.Atom(j)
		if j == 0 {
			for t := range a {
				a[t] = 1
			}
		} else {
			mean := 0.0
			for t := range a {
				a[t] = math.Cos(math.Pi * float64(j*(2*t+1)) / float64(2*k))
				mean += a[t]
			}
			mean /= float64(n)
			for t := range a {
				a[t] -= mean
			}
		}
		normalise(a)
	}
	return d, nil
}

// Kronecker returns the dictionary whose atoms are the Kronecker products
// a_i ⊗ b_j of the atoms of a and b, atom i·b.Size + j, entry s·b.Dim + t =
// a_i[s]·b_j[t]: a's axis varies slowest. Products of unit atoms are unit
// atoms; they are normalised again so that round-off does not build up.
func Kronecker(a, b *Dictionary) *Dictionary {
	d := NewDictionary(a.Dim*b.Dim, a.Size*b.Size)
	for i := range a.Size {
		ai := a.Atom(i)
		for j := range b.Size {
			bj := b.Atom(j)
			atom := d.Atom(i*b.Size + j)
			for s, as := range ai {
				row := atom[s*b.Dim : (s+1)*b.Dim]
				for t, bt := range bj {
					row[t] = as * bt
				}
			}
			normalise(atom)
		}
	}
	return d
}

// PatchDCT returns the separable overcomplete DCT for p×p×depth patches in
// the layout of the package comment: the Kronecker product of the 1-D
// overcomplete DCTs of the band axis (depthAtoms atoms of length depth),
// the row axis and the column axis (sideAtoms atoms of length p each), so
// depthAtoms·sideAtoms² atoms in all, atom 0 the constant. A grey patch has
// depth = depthAtoms = 1: the 2-D DCT of Elad and Aharon (8×8 patches,
// 16×16 = 256 atoms).
func PatchDCT(p, sideAtoms, depth, depthAtoms int) (*Dictionary, error) {
	side, err := OvercompleteDCT(p, sideAtoms)
	if err != nil {
		return nil, err
	}
	band, err := OvercompleteDCT(depth, depthAtoms)
	if err != nil {
		return nil, err
	}
	return Kronecker(band, Kronecker(side, side)), nil
}

// normalise scales v to unit Euclidean norm (a zero v stays zero).
func normalise(v []float64) {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	if s == 0 {
		return
	}
	s = 1 / math.Sqrt(s)
	for i := range v {
		v[i] *= s
	}
}
