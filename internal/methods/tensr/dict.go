package tensr

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/tproduct"
)

// Dictionary is the separable dictionary of TenSR: one matrix per mode,
// D[n] of Size[n]×Atoms[n] (row-major, D[n][i*Atoms[n]+k] is row i of
// atom k). The dictionary of the vectorised problem is the Kronecker
// product D[2]⊗D[1]⊗D[0] (Size[0]·Size[1]·Size[2] rows, one column per
// core entry); it is never formed.
type Dictionary struct {
	Size  [3]int       // pₙ: the patch's extent along mode n
	Atoms [3]int       // rₙ: the atoms of mode n
	D     [3][]float64 // Dₙ, pₙ×rₙ row-major
}

// NewDCTDictionary returns the overcomplete DCT dictionary of the given
// size: in every mode, atom k of rₙ samples cos(π·k·i/rₙ) at i = 0..pₙ−1,
// with its mean removed for k > 0 and scaled to unit norm. It is the usual
// deterministic starting point of dictionary learning for image patches
// (Elad and Aharon 2006); atom 0 is the constant.
func NewDCTDictionary(size, atoms [3]int) *Dictionary {
	d := &Dictionary{Size: size, Atoms: atoms}
	for n := range 3 {
		p, r := size[n], atoms[n]
		m := make([]float64, p*r)
		for k := range r {
			mean := 0.0
			for i := range p {
				v := math.Cos(math.Pi * float64(k*i) / float64(r))
				m[i*r+k] = v
				mean += v
			}
			mean /= float64(p)
			norm := 0.0
			for i := range p {
				if k > 0 {
					m[i*r+k] -= mean
				}
				norm += m[i*r+k] * m[i*r+k]
			}
			if norm == 0 {
				// A single-row mode leaves nothing after the mean: keep the
				// constant rather than a zero atom.
				for i := range p {
					m[i*r+k] = 1
				}
				norm = float64(p)
			}
			s := 1 / math.Sqrt(norm)
			for i := range p {
				m[i*r+k] *= s
			}
		}
		d.D[n] = m
	}
	return d
}

// Clone returns a deep copy of d.
func (d *Dictionary) Clone() *Dictionary {
	c := &Dictionary{Size: d.Size, Atoms: d.Atoms}
	for n := range 3 {
		c.D[n] = append([]float64(nil), d.D[n]...)
	}
	return c
}

// PatchLen returns p₁p₂p₃, the number of values of a patch.
func (d *Dictionary) PatchLen() int { return d.Size[0] * d.Size[1] * d.Size[2] }

// CoreLen returns r₁r₂r₃, the number of coefficients of a core.
func (d *Dictionary) CoreLen() int { return d.Atoms[0] * d.Atoms[1] * d.Atoms[2] }

// check returns an error unless the matrices have the declared sizes.
func (d *Dictionary) check() error {
	for n := range 3 {
		if d.Size[n] < 1 || d.Atoms[n] < 1 {
			return fmt.Errorf("tensr: mode %d of the dictionary is %d×%d", n+1, d.Size[n], d.Atoms[n])
		}
		if len(d.D[n]) != d.Size[n]*d.Atoms[n] {
			return fmt.Errorf("tensr: mode %d dictionary holds %d values, want %d×%d", n+1, len(d.D[n]), d.Size[n], d.Atoms[n])
		}
	}
	return nil
}

// Lipschitz returns the Lipschitz constant of the gradient of
// ½‖X − B×₁D₁×₂D₂×₃D₃‖² in B: the squared spectral norm of the Kronecker
// dictionary, which is the product of the squared spectral norms of the
// factors (the singular values of a Kronecker product are the products of
// the factors' singular values), each the largest eigenvalue of the r×r
// Gram matrix DₙᵀDₙ.
func (d *Dictionary) Lipschitz() float64 {
	l := 1.0
	for n := range 3 {
		l *= largestEigen(gram(d.D[n], d.Size[n], d.Atoms[n]), d.Atoms[n])
	}
	return l
}

// gram returns DᵀD (r×r, row-major) for the p×r row-major matrix d.
func gram(d []float64, p, r int) []float64 {
	g := make([]float64, r*r)
	for i := range p {
		row := d[i*r : (i+1)*r]
		for a, va := range row {
			for b, vb := range row {
				g[a*r+b] += va * vb
			}
		}
	}
	return g
}

// largestEigen returns the largest eigenvalue of the symmetric r×r
// row-major matrix g.
func largestEigen(g []float64, r int) float64 {
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(r, append([]float64(nil), g...)), false) {
		// EigenSym fails only on NaN or Inf input; a bound that is never
		// too small keeps FISTA's step safe.
		s := 0.0
		for _, v := range g {
			s += v * v
		}
		return math.Sqrt(s)
	}
	vals := eig.Values(nil)
	return vals[len(vals)-1]
}

// transpose returns the r×p row-major transpose of the p×r row-major m.
func transpose(m []float64, p, r int) []float64 {
	t := make([]float64, len(m))
	for i := range p {
		for k := range r {
			t[k*p+i] = m[i*r+k]
		}
	}
	return t
}

// Multilinear sets dst = src ×₁ A₁ ×₂ A₂ ×₃ A₃ for a k₁×k₂×k₃ tensor src
// and matrices Aₙ of rows[n]×k[n] (row-major). Tensors are stored with
// mode 1 fastest: element (i₁, i₂, i₃) at (i₃·n₂ + i₂)·n₁ + i₁, which is
// the column-major vectorisation of the Kronecker form, so that
// vec(dst) = (A₃⊗A₂⊗A₁)·vec(src).
//
// Each mode product is one matrix product that contracts the fastest index
// and puts the new index slowest (out = A·Tᵀ with T the tensor seen as a
// (rest)×kₙ matrix): three of them rotate the layout (k₃,k₂,k₁) →
// (i₁,k₃,k₂) → (i₂,i₁,k₃) → (i₃,i₂,i₁) back to mode 1 fastest, with no
// transposition. s1 and s2 are scratch of at least rows[0]·k[1]·k[2] and
// rows[0]·rows[1]·k[2] values; dst must hold rows[0]·rows[1]·rows[2] and
// must not overlap src, s1 or s2.
func Multilinear(dst, src []float64, k, rows [3]int, a [3][]float64, s1, s2 []float64) {
	// mode 1: (k₃k₂)×k₁ → i₁ × (k₃k₂)
	rest := k[2] * k[1]
	tproduct.GemmNT(rows[0], rest, k[0], a[0], k[0], src, k[0], s1, rest)
	// mode 2: (i₁k₃)×k₂ → i₂ × (i₁k₃)
	rest = rows[0] * k[2]
	tproduct.GemmNT(rows[1], rest, k[1], a[1], k[1], s1, k[1], s2, rest)
	// mode 3: (i₂i₁)×k₃ → i₃ × (i₂i₁)
	rest = rows[1] * rows[0]
	tproduct.GemmNT(rows[2], rest, k[2], a[2], k[2], s2, k[2], dst, rest)
}

// scratchLen returns the scratch length that Multilinear needs for sizes
// k → rows.
func scratchLen(k, rows [3]int) (int, int) {
	return rows[0] * k[1] * k[2], rows[0] * rows[1] * k[2]
}
