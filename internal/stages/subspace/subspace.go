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
	if mean == nil {
		mean = MeanSpectrum(c)
	} else if len(mean) != c.Bands {
		return nil, fmt.Errorf("subspace: mean of %d bands for a cube of %d", len(mean), c.Bands)
	}
	m := NewMoments(mean)
	m.Add(c)
	return FitMoment(m.SecondMoment(nil), mean, k)
}

// FitMoment returns the basis of the top k eigenvectors of the spectral
// second moment cov (about mean, which becomes the basis's mean), as Fit
// does for a cube's. It returns an error if k is not in 1..Bands, the
// mean's length is not cov's or the eigensolver fails.
func FitMoment(cov *mat.SymDense, mean []float64, k int) (*Basis, error) {
	B := cov.SymmetricDim()
	if k < 1 || k > B {
		return nil, fmt.Errorf("subspace: dimension %d is not in 1..%d (the bands)", k, B)
	}
	if len(mean) != B {
		return nil, fmt.Errorf("subspace: mean of %d bands for a second moment of %d", len(mean), B)
	}
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, fmt.Errorf("subspace: the eigendecomposition of the spectral covariance did not converge")
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	bs := &Basis{Bands: B, K: k, Mean: append([]float64(nil), mean...), E: make([]float64, B*k), Eigenvalues: make([]float64, B)}
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

// Moments accumulates the spectral mean and second moment of the pixels of
// cubes added one after the other (the windows of lines of a cube read in
// strips), in a fixed order, so that the result depends only on the cubes
// and the order they come in. Its sums are taken about a fixed spectrum,
// the shift: about a spectrum close to the mean, the second moment keeps
// the precision of its small eigenvalues, which sums of raw squares
// (values up to 255², the eigenvalues of interest near σ²) would lose.
type Moments struct {
	// N is the number of pixels added.
	N     int
	shift []float64
	sum   []float64     // Σ (y − shift)
	cross *mat.SymDense // Σ (y − shift)(y − shift)ᵀ
}

// NewMoments returns an empty accumulator for spectra of len(shift)
// bands, its sums taken about shift (any spectrum; the first window's
// mean keeps the most precision).
func NewMoments(shift []float64) *Moments {
	b := len(shift)
	return &Moments{shift: append([]float64(nil), shift...), sum: make([]float64, b), cross: mat.NewSymDense(b, nil)}
}

// momentBlock is the number of pixels whose centred spectra Add gathers
// into one rank update.
const momentBlock = 4096

// Add adds the pixels of c. It panics if c's bands are not the
// accumulator's.
func (m *Moments) Add(c *msi.Cube) {
	B := len(m.shift)
	if c.Bands != B {
		panic(fmt.Sprintf("subspace: Moments.Add: cube has %d bands, the moments %d", c.Bands, B))
	}
	n := c.Height * c.Width
	// A block of pixels at a time: the block's centred bands are the rows
	// of a B×m matrix A, and the sum accumulates AAᵀ (a rank-m update,
	// BLAS's Syrk).
	centred := make([]float64, B*min(n, momentBlock))
	for p0 := 0; p0 < n; p0 += momentBlock {
		k := min(momentBlock, n-p0)
		for i := range B {
			row := centred[i*k : (i+1)*k]
			for p, v := range c.Band(i)[p0 : p0+k] {
				row[p] = v - m.shift[i]
				m.sum[i] += row[p]
			}
		}
		m.cross.SymRankK(m.cross, 1, mat.NewDense(B, k, centred[:B*k]))
	}
	m.N += n
}

// Mean returns the mean spectrum of the pixels added. It panics if none
// were.
func (m *Moments) Mean() []float64 {
	if m.N == 0 {
		panic("subspace: Moments.Mean of no pixels")
	}
	mean := make([]float64, len(m.shift))
	for i, s := range m.sum {
		mean[i] = m.shift[i] + s/float64(m.N)
	}
	return mean
}

// SecondMoment returns the second moment of the pixels added about the
// spectrum about, (1/N) Σ (y − about)(y − about)ᵀ, or about the shift when
// about is nil. It panics if no pixels were added or about's length is not
// the bands'.
func (m *Moments) SecondMoment(about []float64) *mat.SymDense {
	B := len(m.shift)
	if m.N == 0 || (about != nil && len(about) != B) {
		panic(fmt.Sprintf("subspace: SecondMoment of %d pixels about %d bands (the moments have %d)", m.N, len(about), B))
	}
	cov := mat.NewSymDense(B, nil)
	cov.ScaleSym(1/float64(m.N), m.cross)
	if about == nil {
		return cov
	}
	// Σ(y−a)(y−a)ᵀ = Σ(y−s)(y−s)ᵀ − d·Σ(y−s)ᵀ − Σ(y−s)·dᵀ + N·ddᵀ, d = a − s.
	n := float64(m.N)
	for i := range B {
		di := about[i] - m.shift[i]
		for j := i; j < B; j++ {
			dj := about[j] - m.shift[j]
			cov.SetSym(i, j, cov.At(i, j)-(di*m.sum[j]+m.sum[i]*dj)/n+di*dj)
		}
	}
	return cov
}

// Power returns, for each direction eᵢ of the basis, eᵢᵀ C eᵢ − σ² for
// the second moment C (about the basis's mean) of spectra with white
// noise of standard deviation sigma: what SignalPower returns for the
// cube of those spectra. It panics if C does not have Bands rows.
func (bs *Basis) Power(cov *mat.SymDense, sigma float64) []float64 {
	if cov.SymmetricDim() != bs.Bands {
		panic(fmt.Sprintf("subspace: Power: second moment of %d bands, basis %d", cov.SymmetricDim(), bs.Bands))
	}
	power := make([]float64, bs.K)
	e := mat.NewDense(bs.Bands, bs.K, bs.E)
	for i := range power {
		power[i] = mat.Inner(e.ColView(i), cov, e.ColView(i)) - sigma*sigma
	}
	return power
}

// Project returns the k eigen-images Z = (Y − μ)E of y as a cube of K
// bands. It panics if y does not have Bands bands.
func (bs *Basis) Project(y *msi.Cube) *msi.Cube {
	if y.Bands != bs.Bands {
		panic(fmt.Sprintf("subspace: Project: cube has %d bands, basis %d", y.Bands, bs.Bands))
	}
	z := msi.NewCube(y.Height, y.Width, bs.K)
	n := y.Height * y.Width
	// Blocks of pixels, each on its own core, whose K eigen-images stay in
	// the core's cache while every band adds to them, in the bands'
	// order: the sums of one eigen-image at a time, as this did at first,
	// are the same, but read all of y once per eigen-image, and strips
	// project every window of lines of several passes (a twelfth of the
	// CPU of a 256×256×224 cube in strips; BenchmarkProject).
	parallel.Each((n+projectBlock-1)/projectBlock, func(k int) {
		p0, p1 := k*projectBlock, min(n, (k+1)*projectBlock)
		for b := range bs.Bands {
			yb, mu := y.Band(b)[p0:p1], bs.Mean[b]
			for i, e := range bs.E[b*bs.K : (b+1)*bs.K] {
				zi := z.Band(i)[p0:p1]
				for p, v := range yb {
					zi[p] += (v - mu) * e
				}
			}
		}
	})
	return z
}

// projectBlock is the pixels of a block of Project: its eigen-images, 16
// KiB each, stay in a core's cache (for a basis of tens of them, its L2:
// blocks of 256, 512 and 2048 pixels took 0.78, 0.66 and 0.59 of the
// time of one eigen-image at a time in BenchmarkProject).
const projectBlock = 2048

// Reconstruct returns ZEᵀ + μ, a cube of Bands bands, from eigen-images z.
// It panics if z does not have K bands.
func (bs *Basis) Reconstruct(z *msi.Cube) *msi.Cube {
	if z.Bands != bs.K {
		panic(fmt.Sprintf("subspace: Reconstruct: cube has %d bands, basis dimension %d", z.Bands, bs.K))
	}
	y := msi.NewCube(z.Height, z.Width, bs.Bands)
	n := z.Height * z.Width
	// In Project's blocks of pixels, for the same reason: z is read once.
	parallel.Each((n+projectBlock-1)/projectBlock, func(k int) {
		p0, p1 := k*projectBlock, min(n, (k+1)*projectBlock)
		for b := range bs.Bands {
			yb := y.Band(b)[p0:p1]
			for p := range yb {
				yb[p] = bs.Mean[b]
			}
			for i, e := range bs.E[b*bs.K : (b+1)*bs.K] {
				for p, v := range z.Band(i)[p0:p1] {
					yb[p] += v * e
				}
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
