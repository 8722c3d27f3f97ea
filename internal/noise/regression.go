package noise

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"tdsc/internal/msi"
	"tdsc/internal/option"
)

// Estimators of EstimateBands, in the spelling of the command line.
const (
	// MAD is the spatial estimator of Estimate: the robust median absolute
	// deviation of the finest diagonal wavelet band, band by band.
	MAD = "mad"
	// Regression is the spectral estimator of EstimateRegression (HySime's
	// noise estimation step).
	Regression = "regression"
	// Smaller takes, band by band, the smaller of the MAD and Regression
	// estimates. Both err upward, for different reasons (texture for the
	// MAD, signal the other bands cannot predict for the regression), so
	// the smaller is the closer: on CAVE scenes it is the MAD estimate at
	// moderate noise and improves on it on textured, nearly clean bands.
	Smaller = "min"
)

// Estimators lists the names EstimateBands takes, for help, errors and
// shell completion.
var Estimators = []string{MAD, Regression, Smaller}

// CheckEstimator returns nil for a name of Estimators, else an error that
// names the flag it was given with and the names it takes.
func CheckEstimator(flag, name string) error {
	if slices.Contains(Estimators, name) {
		return nil
	}
	return fmt.Errorf("--%s must be %s, %s or %s, got %q", flag, MAD, Regression, Smaller, name)
}

// EstimateBands returns the noise standard deviation of every band of c by
// the named estimator, MAD, Regression or Smaller. An unknown name is an
// *option.Error for the flag "sigma-estimator".
func EstimateBands(c *msi.Cube, estimator string) ([]float64, error) {
	switch estimator {
	case MAD:
		return Estimate(c), nil
	case Regression:
		return EstimateRegression(c)
	case Smaller:
		sigmas, err := EstimateRegression(c)
		if err != nil {
			return nil, err
		}
		for b, s := range Estimate(c) {
			sigmas[b] = min(sigmas[b], s)
		}
		return sigmas, nil
	}
	return nil, option.Errorf("sigma-estimator", estimator, "noise estimator must be %s, %s or %s, got %q", MAD, Regression, Smaller, estimator)
}

// regressionChunk is the number of pixels whose centred spectra are
// gathered at once to accumulate the scatter matrix: it bounds the scratch
// memory (chunk × bands values) whatever the cube's size.
const regressionChunk = 4096

// EstimateRegression returns the noise standard deviation of every band of
// c by multiple linear regression across the spectrum, the noise estimation
// step of HySime (J. M. Bioucas-Dias and J. M. P. Nascimento,
// "Hyperspectral subspace identification", IEEE TGRS 46(8), 2008).
//
// Neighbouring bands of a natural scene are strongly correlated while
// sensor noise is not, so each band is well predicted by a linear
// combination of the others and the residual of that prediction is mostly
// the band's own noise. Every pixel is a sample: band b is regressed on all
// the other bands and a constant (least squares over the Height·Width
// pixels), and σ_b² is the residual sum of squares divided by the degrees of
// freedom N − B (N pixels, B − 1 regressors and the intercept).
//
// All B regressions come from one matrix, as in HySime: with C the B×B
// scatter matrix of the centred spectra (C = Σ_p (y_p − ȳ)(y_p − ȳ)ᵀ), the
// residual sum of squares of band b on the others is 1/(C⁻¹)_bb. C is
// scaled to unit diagonal before its Cholesky factorisation, which keeps
// the inverse accurate when the bands are nearly collinear (a nearly clean
// cube); if C is still numerically singular (a constant band, two equal
// bands) a ridge of 10⁻¹² times the unit diagonal is added, growing tenfold
// until the factorisation succeeds, and a band with no variance at all
// gets σ = 0.
//
// The estimate is biased up by the part of a band's signal that the other
// (noisy) bands cannot predict linearly; the spatial MAD estimator is
// biased up by texture instead. The package's documentation of its
// measurements compares them.
//
// It returns an error if c has fewer than 2 bands, no more pixels than
// bands, or a missing (NaN) voxel: a pixel's whole spectrum is a sample.
func EstimateRegression(c *msi.Cube) ([]float64, error) {
	nb, n := c.Bands, c.Height*c.Width
	if nb < 2 {
		return nil, fmt.Errorf("noise: the regression estimate needs at least 2 bands, the cube has %d", nb)
	}
	if k := c.Missing(); k > 0 {
		return nil, fmt.Errorf("noise: the regression estimate needs every voxel, and %d are missing (no data): use the mad estimator", k)
	}
	if n <= nb {
		return nil, fmt.Errorf("noise: the regression estimate needs more pixels than bands, the cube is %s", c.Size())
	}
	scatter := centredScatter(c)

	// Scale to unit diagonal: R = D^{-1/2} C D^{-1/2}, so (C⁻¹)_bb = (R⁻¹)_bb / C_bb.
	scale := make([]float64, nb)
	for b := range nb {
		if d := scatter.At(b, b); d > 0 {
			scale[b] = 1 / math.Sqrt(d)
		}
	}
	corr := mat.NewSymDense(nb, nil)
	for i := range nb {
		for j := i; j < nb; j++ {
			corr.SetSym(i, j, scatter.At(i, j)*scale[i]*scale[j])
		}
		if scale[i] == 0 {
			// A constant band: keep R positive definite; its σ is set to 0 below.
			corr.SetSym(i, i, 1)
		}
	}
	inv, err := invertSPD(corr)
	if err != nil {
		return nil, err
	}
	sigmas := make([]float64, nb)
	dof := float64(n - nb)
	for b := range nb {
		if scale[b] == 0 {
			continue
		}
		rss := scatter.At(b, b) / inv.At(b, b)
		sigmas[b] = math.Sqrt(max(rss, 0) / dof)
	}
	return sigmas, nil
}

// centredScatter returns Σ_p (y_p − ȳ)(y_p − ȳ)ᵀ over the pixels p of c,
// accumulated chunk by chunk of pixels in a fixed order.
func centredScatter(c *msi.Cube) *mat.SymDense {
	nb, n := c.Bands, c.Height*c.Width
	means := make([]float64, nb)
	for b := range nb {
		s := 0.0
		for _, v := range c.Band(b) {
			s += v
		}
		means[b] = s / float64(n)
	}
	chunk := make([]float64, nb*regressionChunk)
	acc := blas64.Symmetric{Uplo: blas.Upper, N: nb, Stride: nb, Data: make([]float64, nb*nb)}
	for p0 := 0; p0 < n; p0 += regressionChunk {
		m := min(regressionChunk, n-p0)
		// Rows are bands: the chunk is a B×m matrix of centred values.
		for b := range nb {
			row := chunk[b*m : (b+1)*m]
			for i, v := range c.Data[b*n+p0 : b*n+p0+m] {
				row[i] = v - means[b]
			}
		}
		y := blas64.General{Rows: nb, Cols: m, Stride: m, Data: chunk[:nb*m]}
		blas64.Syrk(blas.NoTrans, 1, y, 1, acc)
	}
	return mat.NewSymDense(nb, acc.Data)
}

// invertSPD returns the inverse of the symmetric positive semi-definite
// matrix a with unit diagonal, adding the smallest ridge of 10⁻¹², 10⁻¹¹, …
// to the diagonal that makes the Cholesky factorisation succeed.
func invertSPD(a *mat.SymDense) (*mat.SymDense, error) {
	n := a.SymmetricDim()
	work := mat.NewSymDense(n, nil)
	work.CopySym(a)
	var chol mat.Cholesky
	for ridge := 0.0; ridge <= 1; {
		if chol.Factorize(work) {
			var inv mat.SymDense
			if err := chol.InverseTo(&inv); err == nil {
				return &inv, nil
			}
		}
		if ridge == 0 {
			ridge = 1e-12
		} else {
			ridge *= 10
		}
		work.CopySym(a)
		for i := range n {
			work.SetSym(i, i, a.At(i, i)+ridge)
		}
	}
	return nil, fmt.Errorf("noise: the band correlation matrix cannot be factorised")
}
