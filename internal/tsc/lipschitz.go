package tsc

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/tproduct"
)

// The Lipschitz constant of ∇f(B) = D†*D*B − D†*X is the largest eigenvalue
// of circ(D)ᵀcirc(D), which the DFT block-diagonalises into the Gram slices
// Ĝ^(ℓ) = D̂^(ℓ)ᴴD̂^(ℓ): L = max_ℓ λ_max(Ĝ^(ℓ)). Each Hermitian Ĝ^(ℓ) is
// handled through its real symmetric embedding [[Re, −Im], [Im, Re]], whose
// spectrum is that of Ĝ^(ℓ) with every eigenvalue doubled.

// maxEigenSym returns the largest eigenvalue of the symmetric w×w row-major
// matrix a (only its upper triangle is read).
func maxEigenSym(a []float64, w int) (float64, error) {
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(w, a), false) {
		return 0, fmt.Errorf("tsc: eigenvalue decomposition of a %d×%d Gram slice did not converge", w, w)
	}
	vals := eig.Values(nil)
	return vals[len(vals)-1], nil
}

// lipschitz returns max_ℓ λ_max of the Gram slices in gram.
func lipschitz(gram *tproduct.SliceMats) (float64, error) {
	var l float64
	for s := range tproduct.Stored(gram.K) {
		g, w, _ := gram.Mat(s)
		v, err := maxEigenSym(g, w)
		if err != nil {
			return 0, err
		}
		l = max(l, v)
	}
	return l, nil
}
