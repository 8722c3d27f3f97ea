package lrta

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/multilinear"
)

// Filters are the mode filters Hₙ = Vₙ diag(Gainsₙ) Vₙᵀ of a multiway
// Wiener filter (package comment); a nil Vₙ is the identity.
type Filters struct {
	V     [3]*mat.Dense
	Gains [3][]float64
	// SURE is Stein's unbiased estimate of ‖X − X̂‖² before the first
	// sweep (all filters identities: Nσ²) and after every sweep.
	SURE []float64
}

// trace returns tr Hₙ = Σ gains, or dim for the identity.
func (f *Filters) trace(n, dim int) float64 {
	if f.V[n] == nil {
		return float64(dim)
	}
	s := 0.0
	for _, g := range f.Gains[n] {
		s += g
	}
	return s
}

// FitWiener finds the multiway Wiener filters of y for white noise of
// standard deviation sigma with the subspace dimensions ranks, by at most
// iters sweeps of alternating updates (package comment).
func FitWiener(ctx context.Context, y *multilinear.Tensor, ranks [3]int, sigma float64, iters, workers int) (*Filters, error) {
	for n, r := range ranks {
		if r < 1 || r > y.Dims[n] {
			return nil, fmt.Errorf("lrta: rank %d of mode %d is not in [1, %d]", r, n, y.Dims[n])
		}
	}
	total := float64(y.Len())
	noise := sigma * sigma
	norm2 := y.SquaredNorm()
	f := &Filters{SURE: []float64{total * noise}}
	for sweep := 0; sweep < iters; sweep++ {
		var sure float64
		for n := range 3 {
			var err error
			if sure, err = f.update(ctx, y, n, ranks[n], noise, norm2, total, workers); err != nil {
				return nil, err
			}
		}
		prev := f.SURE[len(f.SURE)-1]
		f.SURE = append(f.SURE, sure)
		if prev-sure < sureTol*total*noise {
			break
		}
	}
	return f, nil
}

// update replaces the mode-n filter by the Wiener filter for the other two
// and returns SURE of the result.
func (f *Filters) update(ctx context.Context, y *multilinear.Tensor, n, rank int, noise, norm2, total float64, workers int) (float64, error) {
	// P = Y ×ₘ Vₘᵀ over the other modes m; the half and full weightings of
	// its other-mode indices by the gains give γ and Γ as mode-n Gram
	// matrices.
	var proj [3]mat.Matrix
	for m := range 3 {
		if m != n && f.V[m] != nil {
			proj[m] = f.V[m].T()
		}
	}
	p, err := multilinear.MultiplyModes(ctx, y, proj, workers)
	if err != nil {
		return 0, err
	}
	var half, full [3][]float64
	trQ := 1.0
	for m := range 3 {
		if m == n {
			continue
		}
		trQ *= f.trace(m, y.Dims[m])
		if f.V[m] == nil {
			continue
		}
		half[m] = make([]float64, len(f.Gains[m]))
		for i, g := range f.Gains[m] {
			half[m][i] = math.Sqrt(g)
		}
		full[m] = f.Gains[m]
	}
	gamma, err := multilinear.Gram(ctx, scaleModes(p, half), n, workers)
	if err != nil {
		return 0, err
	}
	bigGamma, err := multilinear.Gram(ctx, scaleModes(p, full), n, workers)
	if err != nil {
		return 0, err
	}
	vals, vecs, _, err := multilinear.TopEigen(gamma, rank)
	if err != nil {
		return 0, err
	}
	gains := make([]float64, rank)
	cross, power, trH := 0.0, 0.0, 0.0
	var gv mat.VecDense
	for i := range gains {
		v := vecs.ColView(i)
		gv.MulVec(bigGamma, v)
		d := mat.Dot(v, &gv)
		if d > 0 {
			gains[i] = math.Max(0, (vals[i]-noise*trQ)/d)
		}
		cross += gains[i] * vals[i]
		power += gains[i] * gains[i] * d
		trH += gains[i]
	}
	f.V[n], f.Gains[n] = vecs, gains
	// ‖Y − X̂‖² = ‖Y‖² − 2⟨Y, X̂⟩ + ‖X̂‖², ⟨Y, X̂⟩ = Σ gᵢvᵢᵀγvᵢ, ‖X̂‖² = Σ gᵢ²vᵢᵀΓvᵢ.
	return norm2 - 2*cross + power - total*noise + 2*noise*trH*trQ, nil
}

// scaleModes returns t with element (i, j, k) multiplied by w[0][i]·w[1][j]·
// w[2][k], a nil w[m] counting as ones; with all nil it returns t itself.
func scaleModes(t *multilinear.Tensor, w [3][]float64) *multilinear.Tensor {
	if w[0] == nil && w[1] == nil && w[2] == nil {
		return t
	}
	out := t.Clone()
	i0, i1, i2 := t.Dims[0], t.Dims[1], t.Dims[2]
	for k := 0; k < i2; k++ {
		wk := 1.0
		if w[2] != nil {
			wk = w[2][k]
		}
		for i := 0; i < i0; i++ {
			wi := wk
			if w[0] != nil {
				wi *= w[0][i]
			}
			row := out.Data[(k*i0+i)*i1:][:i1]
			for j := range row {
				if w[1] != nil {
					row[j] *= wi * w[1][j]
				} else {
					row[j] *= wi
				}
			}
		}
	}
	return out
}

// Apply returns y ×₀ H₀ ×₁ H₁ ×₂ H₂: projections onto the subspaces, the
// gains, and back.
func (f *Filters) Apply(ctx context.Context, y *multilinear.Tensor, workers int) (*multilinear.Tensor, error) {
	var proj, back [3]mat.Matrix
	var gains [3][]float64
	for m := range 3 {
		if f.V[m] != nil {
			proj[m], back[m], gains[m] = f.V[m].T(), f.V[m], f.Gains[m]
		}
	}
	p, err := multilinear.MultiplyModes(ctx, y, proj, workers)
	if err != nil {
		return nil, err
	}
	return multilinear.MultiplyModes(ctx, scaleModes(p, gains), back, workers)
}
