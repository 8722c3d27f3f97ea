// Package subspace projects the spectra of a cube onto a low-dimensional
// spectral subspace and back: the "global" stage of nonlocal denoisers such
// as NGmeet (He et al., CVPR 2019).
//
// The spectra of a natural scene lie close to a subspace of dimension 3–10.
// With μ the mean spectrum and E (B×k, orthonormal columns) the top-k
// eigenvectors of the spectral covariance C = (1/N) Σ (y−μ)(y−μ)ᵀ over the N
// pixels y, the eigen-images are Z = (Y − μ)E (k bands) and Y ≈ ZEᵀ + μ.
// Because E has orthonormal columns, i.i.d. Gaussian noise of standard
// deviation σ in Y stays i.i.d. with the same σ in Z, so a denoiser made
// for white noise applies to the k eigen-images unchanged, at k/B of the
// cost.
//
// Conventions: eigenvectors are sorted by decreasing eigenvalue, and each
// is signed so that its entry of largest magnitude is positive (the first
// such entry on a tie), so the basis does not depend on the eigensolver's
// sign choice. Sums over pixels run in a fixed order: the result is
// deterministic.
package subspace

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
)

// Basis is a spectral subspace of a cube with Bands bands: the mean
// spectrum and K orthonormal directions.
type Basis struct {
	Bands, K int
	// Mean is the mean spectrum μ (Bands values).
	Mean []float64
	// E holds the directions as columns, row-major Bands×K: E[b*K+i] is
	// entry b of direction i.
	E []float64
	// Eigenvalues are the covariance's eigenvalues, all Bands of them in
	// decreasing order (the K kept first).
	Eigenvalues []float64
}

// MeanSpectrum returns the mean over the pixels of every band of c.
func MeanSpectrum(c *msi.Cube) []float64 {
	mean := make([]float64, c.Bands)
	for b := range mean {
		s := 0.0
		for _, v := range c.Band(b) {
			s += v
		}
		mean[b] = s / float64(c.Height*c.Width)
	}
	return mean
}

// Fit returns the basis of the top k eigenvectors of the spectral second
// moment of c about mean, C = (1/N) Σ (y−μ)(y−μ)ᵀ, and μ = mean as the
// basis's mean; a nil mean is c's own (MeanSpectrum), which makes C the
// covariance. A denoiser passes the noisy cube's mean with a pilot estimate
// as c: noise has mean zero, so the noisy mean is an unbiased estimate of
// the clean one, which a pilot need not be. It returns an error if k is not
// in 1..c.Bands, the mean's length is not c.Bands or the eigensolver fails.
func Fit(c *msi.Cube, mean []float64, k int) (*Basis, error) {
	B := c.Bands
	if k < 1 || k > B {
		return nil, fmt.Errorf("subspace: dimension %d is not in 1..%d (the bands)", k, B)
	}
	if mean == nil {
		mean = MeanSpectrum(c)
	} else if len(mean) != B {
		return nil, fmt.Errorf("subspace: mean of %d bands for a cube of %d", len(mean), B)
	}
	mean = append([]float64(nil), mean...)
	n := c.Height * c.Width
	// Covariance a block of pixels at a time: the block's centred bands
	// are the rows of a B×m matrix A, and C accumulates AAᵀ (a rank-m
	// update, BLAS's Syrk).
	const block = 4096
	cov := mat.NewSymDense(B, nil)
	centred := make([]float64, B*block)
	for p0 := 0; p0 < n; p0 += block {
		m := min(block, n-p0)
		for i := range B {
			row := centred[i*m : (i+1)*m]
			for p, v := range c.Band(i)[p0 : p0+m] {
				row[p] = v - mean[i]
			}
		}
		cov.SymRankK(cov, 1, mat.NewDense(B, m, centred[:B*m]))
	}
	cov.ScaleSym(1/float64(n), cov)
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, fmt.Errorf("subspace: the eigendecomposition of the spectral covariance did not converge")
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	bs := &Basis{Bands: B, K: k, Mean: mean, E: make([]float64, B*k), Eigenvalues: make([]float64, B)}
	for i := range B {
		bs.Eigenvalues[i] = vals[B-1-i]
	}
	for i := range k {
		col := B - 1 - i
		sign, big := 1.0, -1.0
		for b := range B {
			if a := math.Abs(vecs.At(b, col)); a > big {
				big = a
				sign = math.Copysign(1, vecs.At(b, col))
			}
		}
		for b := range B {
			bs.E[b*k+i] = sign * vecs.At(b, col)
		}
	}
	return bs, nil
}

// Leading returns the basis of the first k directions of bs, with its
// mean and eigenvalues: the basis Fit returns for k from the same cube. It
// panics if k is not in 1..bs.K.
func (bs *Basis) Leading(k int) *Basis {
	if k < 1 || k > bs.K {
		panic(fmt.Sprintf("subspace: Leading: %d directions of a basis of %d", k, bs.K))
	}
	out := &Basis{Bands: bs.Bands, K: k, Mean: bs.Mean, E: make([]float64, bs.Bands*k), Eigenvalues: bs.Eigenvalues}
	for b := range bs.Bands {
		copy(out.E[b*k:(b+1)*k], bs.E[b*bs.K:])
	}
	return out
}

// Project returns the k eigen-images Z = (Y − μ)E of y as a cube of K
// bands. It panics if y does not have Bands bands.
func (bs *Basis) Project(y *msi.Cube) *msi.Cube {
	if y.Bands != bs.Bands {
		panic(fmt.Sprintf("subspace: Project: cube has %d bands, basis %d", y.Bands, bs.Bands))
	}
	z := msi.NewCube(y.Height, y.Width, bs.K)
	// Every eigen-image is its own sum over the bands, on its own core.
	parallel.Each(bs.K, func(i int) {
		zi := z.Band(i)
		for b := range bs.Bands {
			e, mu := bs.E[b*bs.K+i], bs.Mean[b]
			for p, v := range y.Band(b) {
				zi[p] += (v - mu) * e
			}
		}
	})
	return z
}

// Reconstruct returns ZEᵀ + μ, a cube of Bands bands, from eigen-images z.
// It panics if z does not have K bands.
func (bs *Basis) Reconstruct(z *msi.Cube) *msi.Cube {
	if z.Bands != bs.K {
		panic(fmt.Sprintf("subspace: Reconstruct: cube has %d bands, basis dimension %d", z.Bands, bs.K))
	}
	y := msi.NewCube(z.Height, z.Width, bs.Bands)
	parallel.Each(bs.Bands, func(b int) {
		yb := y.Band(b)
		for p := range yb {
			yb[p] = bs.Mean[b]
		}
		for i := range bs.K {
			e := bs.E[b*bs.K+i]
			for p, v := range z.Band(i) {
				yb[p] += v * e
			}
		}
	})
	return y
}

// SignalPower returns, for each direction eᵢ of the basis, the power of
// y's spectra along it beyond white noise of standard deviation sigma:
// (1/N) Σ ((y − μ)·eᵢ)² − σ² over the N pixels. For a basis fitted on an
// estimate of the clean cube and y the noisy cube, it estimates the clean
// signal's power along eᵢ with a standard error of about σ²·√(2/N), so it
// tells the directions that hold signal from those that hold only noise. It
// panics if y does not have Bands bands.
func (bs *Basis) SignalPower(y *msi.Cube, sigma float64) []float64 {
	z := bs.Project(y)
	power := make([]float64, bs.K)
	for i := range power {
		s := 0.0
		for _, v := range z.Band(i) {
			s += v * v
		}
		power[i] = s/float64(y.Height*y.Width) - sigma*sigma
	}
	return power
}
