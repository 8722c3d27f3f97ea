package ksvd

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"tdsc/internal/testenv/cubetest"
)

// randomDictionary returns k random unit atoms of length n.
func randomDictionary(rng *rand.Rand, n, k int) *Dictionary {
	d := NewDictionary(n, k)
	for i := range d.Atoms {
		d.Atoms[i] = rng.NormFloat64()
	}
	for j := range k {
		normalise(d.Atom(j))
	}
	return d
}

// orthonormalDictionary returns a random n×n orthonormal dictionary (the
// Q of a QR factorisation of a Gaussian matrix).
func orthonormalDictionary(rng *rand.Rand, n int) *Dictionary {
	q := cubetest.Orthonormal(rng, n, n)
	d := NewDictionary(n, n)
	for j := range n {
		for i := range n {
			d.Atoms[j*n+i] = q.At(i, j)
		}
	}
	return d
}

func randomVector(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// leastSquares returns the coefficients γ minimising ‖x − Σ γᵢ d_{support[i]}‖
// and the residual energy, by gonum's QR solve.
func leastSquares(d *Dictionary, support []int, x []float64) ([]float64, float64) {
	a := mat.NewDense(d.Dim, len(support), nil)
	for j, k := range support {
		for i, v := range d.Atom(k) {
			a.Set(i, j, v)
		}
	}
	var g mat.VecDense
	if err := g.SolveVec(a, mat.NewVecDense(d.Dim, append([]float64(nil), x...))); err != nil {
		panic(err)
	}
	coef := append([]float64(nil), g.RawVector().Data...)
	return coef, residualEnergy(d, support, coef, x)
}

// residualEnergy returns ‖x − Σ coefᵢ d_{support[i]}‖², formed explicitly.
func residualEnergy(d *Dictionary, support []int, coef, x []float64) float64 {
	r := append([]float64(nil), x...)
	for i, k := range support {
		floats.AddScaled(r, -coef[i], d.Atom(k))
	}
	return floats.Dot(r, r)
}

// plainOMP is textbook OMP: it keeps the residual vector, picks the atom
// with the largest |⟨d, r⟩| not yet chosen, and refits every coefficient by
// a QR least-squares solve; it stops as Coder.Code does.
func plainOMP(d *Dictionary, x []float64, eps2 float64, maxAtoms int) ([]int, []float64, float64) {
	r := append([]float64(nil), x...)
	var support []int
	var coef []float64
	energy := floats.Dot(x, x)
	for energy > eps2 && len(support) < maxAtoms {
		best, bestAbs := -1, 0.0
		for k := range d.Size {
			if c := math.Abs(floats.Dot(d.Atom(k), r)); c > bestAbs && !contains(support, k) {
				best, bestAbs = k, c
			}
		}
		if best < 0 {
			break
		}
		support = append(support, best)
		coef, energy = leastSquares(d, support, x)
		copy(r, x)
		for i, k := range support {
			floats.AddScaled(r, -coef[i], d.Atom(k))
		}
	}
	return support, coef, energy
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// batchOMP codes x with a fresh Coder over d.
func batchOMP(d *Dictionary, x []float64, eps2 float64, maxAtoms int) ([]int, []float64, float64) {
	c := NewCoder(d.Gram(nil), d.Size, maxAtoms)
	dtx := make([]float64, d.Size)
	d.Correlate(dtx, x, 1)
	idx, coef := make([]int, maxAtoms), make([]float64, maxAtoms)
	n, res := c.Code(idx, coef, dtx, floats.Dot(x, x), eps2)
	return idx[:n], coef[:n], res
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func assertClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !closeTo(got[i], want[i], tol) {
			t.Fatalf("%s[%d] = %.15g, want %.15g", what, i, got[i], want[i])
		}
	}
}
