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
// noise's variance. With an odd height or width the last row or column is
// not used. (scikit-image itself uses the db2 wavelet; Haar is used here.)
// A block with a missing (NaN) pixel is left out.
//
// Exactly zero coefficients are flat regions, which noise of any
// continuous distribution never leaves: they are left out, as
// scikit-image leaves them out, so that flat or clipped regions do not
// pull the estimate down. But when nearly all of a band is flat, the
// coefficients left are the edges of the scene, not noise: when too few
// coefficients lie inside regions that vary (Details, Detectable) the
// band's noise is below detection — a constant, piecewise-constant or
// synthetic band — and the estimate is 0.
//
// It panics if len(band) != height*width or the band is smaller than 2×2.
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
	rows, cols := height/2, width/2
	grid := make([]float64, rows*cols)
	for i := range rows {
		top, bottom := band[2*i*width:(2*i+1)*width], band[(2*i+1)*width:(2*i+2)*width]
		for j := range cols {
			x := 2 * j
			grid[i*cols+j] = (top[x] - top[x+1] - bottom[x] + bottom[x+1]) / 2
		}
	}
	var coef []float64
	if buf != nil {
		coef = (*buf)[:0]
	}
	coef, inside, present := Details(coef, grid, rows, cols)
	if buf != nil {
		*buf = coef
	}
	if !Detectable(inside, present) {
		return 0
	}
	return median(coef) / normalQuartile
}

// DetectableShare is the least share of a band's detail coefficients
// (those with data) that must lie inside regions that vary (Details) for
// its noise to be measured. On bands with Gaussian noise they are all of
// them but the rims of flat or clipped regions: 41 % of a noisy band whose
// left 58 % is a constant border, 72 % of one clipped over 30 % of its
// pixels; on the piecewise-constant Indian Pines phantom (97 % of its
// diagonal coefficients zero) at most 0.01 %, the edges of its fields.
const DetectableShare = 0.01

// Detectable reports whether inside coefficients of a band, of present
// with data, are enough to measure its noise (see DetectableShare).
func Detectable(inside, present int) bool {
	return inside > 0 && float64(inside) >= DetectableShare*float64(present)
}

// Details appends to dst the absolute values of the nonzero detail
// coefficients of a rows×cols grid (row-major), in grid order — those the
// estimate is the median of — and counts those that lie inside regions
// that vary and those with data. A NaN coefficient has no data (a missing
// or masked pixel); an exactly zero one is flat: a region without noise
// (constant, clipped, a field of a piecewise-constant phantom). A
// coefficient is inside when it is not zero and none of its four
// neighbours in the grid is zero (neighbours outside the grid or without
// data do not count as flat): the coefficients at the rims of flat
// regions are edges of the scene there, not noise, so a band that is flat
// but for its edges has almost none inside (see Detectable), while a
// noisy band has nearly all.
//
// Only the count of those inside decides; the estimate stays the median
// of every nonzero coefficient, as scikit-image's, so that it is the same
// number whenever the noise is detectable: a float cube with noise can
// hold an exact zero by chance (one in about 10⁷ coefficients of float32
// data), which must not move it.
func Details(dst, grid []float64, rows, cols int) (nonzero []float64, inside, present int) {
	if len(grid) != rows*cols {
		panic(fmt.Sprintf("noise: a %d×%d grid of %d coefficients", rows, cols, len(grid)))
	}
	flat := func(i, j int) bool { return i >= 0 && i < rows && j >= 0 && j < cols && grid[i*cols+j] == 0 }
	for i := range rows {
		for j := range cols {
			c := grid[i*cols+j]
			if math.IsNaN(c) {
				continue
			}
			present++
			if c == 0 {
				continue
			}
			dst = append(dst, math.Abs(c))
			if !flat(i-1, j) && !flat(i+1, j) && !flat(i, j-1) && !flat(i, j+1) {
				inside++
			}
		}
	}
	return dst, inside, present
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

// BelowDetection says, when the noise of a cube whose bands' σ are sigmas
// (estimated as Estimate or the sparse-noise detector estimates them) is
// below detection, why, in a line for stderr; otherwise it returns "". A
// cube's noise is below detection when the median σ over its bands is 0:
// most of its bands are exactly flat but for edges (constant, piecewise
// constant, synthetic), so no noise level can be measured, and a denoiser
// given one would only smooth the edges away.
func BelowDetection(sigmas []float64) string {
	if len(sigmas) == 0 || median(slices.Clone(sigmas)) > 0 {
		return ""
	}
	flat := 0
	for _, s := range sigmas {
		if s == 0 {
			flat++
		}
	}
	return fmt.Sprintf("noise below detection: σ 0 in %d of %d bands, which are exactly flat but for their edges (a constant, piecewise-constant or synthetic cube): no noise level to measure", flat, len(sigmas))
}
