package noise

import (
	"fmt"
	"math"
	"slices"

	"tdsc/internal/msi"
)

// normalQuartile is Φ⁻¹(0.75), the median of |Z| for a standard normal Z:
// the median absolute value of N(0, σ²) samples is σ·normalQuartile.
const normalQuartile = 0.6744897501960817

// EstimateBand returns an estimate of the standard deviation of white
// Gaussian noise in a height×width row-major band, as scikit-image's
// estimate_sigma does: the median absolute value of the finest diagonal
// (HH) wavelet coefficients divided by Φ⁻¹(0.75) ≈ 0.6745 (Donoho and
// Johnstone's robust MAD estimator). Natural images have few strong
// diagonal details at the finest scale, so those coefficients are mostly
// noise.
//
// The wavelet is Haar (db1): the diagonal coefficient of the 2×2 block
// [[a, b], [c, d]] at even row and column is (a − b − c + d)/2, which has the
// noise's variance. Coefficients that are exactly zero are left out, as
// scikit-image does, so that flat or saturated regions do not pull the
// estimate down. With an odd height or width the last row or column is not
// used: the symmetric padding of pywt makes the coefficients there exactly
// zero, so they would be left out anyway. (scikit-image itself uses the db2
// wavelet; Haar is used here.) A block with a missing (NaN) pixel is left
// out as well.
//
// It returns 0 when every coefficient is zero (a band with no detail at all)
// and panics if len(band) != height*width or the band is smaller than 2×2.
func EstimateBand(band []float64, height, width int) float64 {
	return estimateBand(nil, band, height, width)
}

// Estimate returns the noise standard deviation of every band of c, as
// EstimateBand does.
func Estimate(c *msi.Cube) []float64 {
	sigmas := make([]float64, c.Bands)
	var buf []float64
	for b := range sigmas {
		sigmas[b] = estimateBand(&buf, c.Band(b), c.Height, c.Width)
	}
	return sigmas
}

// EstimateMedian returns the median over bands of Estimate(c): one noise
// level for the whole cube, robust to a few bands whose texture or own
// sensor noise biases their estimate.
func EstimateMedian(c *msi.Cube) float64 {
	return median(Estimate(c))
}

// estimateBand is EstimateBand with a reusable coefficient buffer; buf may
// be nil.
func estimateBand(buf *[]float64, band []float64, height, width int) float64 {
	if len(band) != height*width || height < 2 || width < 2 {
		panic(fmt.Sprintf("noise: noise estimate of a %d×%d band with %d values", height, width, len(band)))
	}
	var coef []float64
	if buf != nil {
		coef = (*buf)[:0]
	}
	for y := 0; y+1 < height; y += 2 {
		top, bottom := band[y*width:(y+1)*width], band[(y+1)*width:(y+2)*width]
		for x := 0; x+1 < width; x += 2 {
			hh := (top[x] - top[x+1] - bottom[x] + bottom[x+1]) / 2
			if hh != 0 && !math.IsNaN(hh) {
				coef = append(coef, math.Abs(hh))
			}
		}
	}
	if buf != nil {
		*buf = coef
	}
	if len(coef) == 0 {
		return 0
	}
	return median(coef) / normalQuartile
}

// median returns the median of v (the mean of the two middle values when
// len(v) is even), reordering v.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
