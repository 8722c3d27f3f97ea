// Package noref assesses noise and denoising without a clean reference, for
// real data: how noisy a cube is, band by band, and whether what a denoiser
// removed from it was noise or image.
//
// For a cube Y it reports the noise level of every band by the per-band
// estimator of package noise (the MAD of the finest diagonal wavelet band
// by default). For a denoised cube X of Y it also reports, band by band,
// the standard deviation of the residual R = Y − X (what was removed) and
// the Pearson correlation of R with X. Removed noise is independent of the
// image, so a residual with a standard deviation near the noise estimate
// and a correlation near 0 is noise; a larger residual, or one correlated
// with the output (edges and texture left in R), means the denoiser also
// removed image. A residual well below the noise estimate means noise was
// left in.
package noref

import (
	"fmt"
	"math"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
)

// Band is the assessment of one band.
type Band struct {
	// Sigma is the estimated noise standard deviation of the (noisy) band.
	Sigma float64
	// Removed is the standard deviation of the residual noisy − denoised,
	// and Correlation the Pearson correlation of that residual with the
	// denoised band (0 when either is constant); both NaN without a
	// denoised cube.
	Removed, Correlation float64
}

// Report is the assessment of a cube: its bands and their means.
type Report struct {
	Bands []Band
	// Mean is the mean over bands of each field of Band.
	Mean Band
}

// Assess estimates the noise of every band of noisy with the named
// estimator (noise.EstimateBands: "mad", "regression" or "min") and, when
// denoised is not nil, the residual noisy − denoised of every band. It
// returns an error if the cubes differ in size or the estimator is unknown.
func Assess(noisy, denoised *msi.Cube, estimator string) (*Report, error) {
	if denoised != nil && !noisy.SameSize(denoised) {
		return nil, fmt.Errorf("the denoised cube is %s but the noisy one is %s", denoised.Size(), noisy.Size())
	}
	sigmas, err := noise.EstimateBands(noisy, estimator)
	if err != nil {
		return nil, err
	}
	r := &Report{Bands: make([]Band, noisy.Bands)}
	for b := range r.Bands {
		band := Band{Sigma: sigmas[b], Removed: math.NaN(), Correlation: math.NaN()}
		if denoised != nil {
			band.Removed, band.Correlation = residual(noisy.Band(b), denoised.Band(b))
		}
		r.Bands[b] = band
		r.Mean.Sigma += band.Sigma
		r.Mean.Removed += band.Removed
		r.Mean.Correlation += band.Correlation
	}
	n := float64(noisy.Bands)
	r.Mean.Sigma /= n
	r.Mean.Removed /= n
	r.Mean.Correlation /= n
	return r, nil
}

// residual returns the population standard deviation of y − x and its
// Pearson correlation with x, in two passes for accuracy.
func residual(y, x []float64) (std, corr float64) {
	n := float64(len(y))
	var meanR, meanX float64
	for i := range y {
		meanR += y[i] - x[i]
		meanX += x[i]
	}
	meanR /= n
	meanX /= n
	var varR, varX, cov float64
	for i := range y {
		dr, dx := y[i]-x[i]-meanR, x[i]-meanX
		varR += dr * dr
		varX += dx * dx
		cov += dr * dx
	}
	std = math.Sqrt(varR / n)
	if varR == 0 || varX == 0 {
		return std, 0
	}
	return std, cov / math.Sqrt(varR*varX)
}
