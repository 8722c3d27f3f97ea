// Package noiselevel finds the noise-level function of every band of a cube
// and decides whether its noise is signal-dependent.
//
// Model. A band of a noisy cube is y = x + n on the working [0, 255] scale,
// with n of zero mean and variance σ²(x) = a·x + b: the Poisson-Gaussian
// model of a photon-counting sensor (a the gain in working units per
// photo-electron, b the variance of the read noise). a = 0 is the i.i.d.
// Gaussian model of the rest of tdsc; b = 0 pure Poisson noise.
//
// Algorithm (after Foi, Trimeche, Katkovnik and Egiazarian, "Practical
// Poissonian-Gaussian noise modeling and fitting for single-image raw
// data", IEEE TIP 2008: local noise from wavelet details, local means from
// the approximation, smooth regions only, a weighted fit over levels of the
// mean). Every band is cut into 4×4 windows. The Haar transform of a window
// gives four finest diagonal details (HH of each 2×2 block), eight finest
// horizontal and vertical details, and the diagonal detail of the next
// level. All are orthonormal combinations of the window's 16 pixels, so
// under the model each has the noise variance σ²(x̄) (x̄ the window's clean
// mean) plus what the scene puts into it:
//
//   - the diagonal details HH measure the noise: a plane (any gradient)
//     leaves them at zero, only curvature, edges and fine texture enter;
//   - the window mean m estimates x̄ with a variance σ²/16;
//   - the other nine details are the test of smoothness: their sum of
//     squares over σ²(m) is χ² with 9 degrees of freedom on a flat or
//     gently sloped window; a window above its 99th percentile holds an
//     edge or texture and is left out.
//
// Under Gaussian noise the selection is independent of the diagonal
// details (orthogonal combinations of Gaussian noise are independent), so
// leaving windows out cannot make i.i.d. noise look signal-dependent. The
// kept windows are sorted by m and cut into levels of equal count; the
// noise variance of a level is the median of its squared diagonal details
// over the median of χ²₁ (robust to the edges and texture the test let
// through); σ²(x) = a·x + b is fitted to the levels by weighted least
// squares (weights the inverse variances of the medians, refitted once),
// with a ≥ 0 and b ≥ 0. The levels are made first of all windows, then
// twice of those that pass the smoothness test with the fitted function.
//
// Sparse noise, no data and clipping. A window with a missing voxel
// (NaN), a voxel marked in Options.Mask, or a voxel at a stuck value of its
// band (a value repeated far more often than a continuous signal plus noise
// repeats one: salt-and-pepper impulses, dead columns or lines, a clipping
// level) is left out. Column and line stripes cancel in the diagonal
// details and fail the smoothness test. A clipping level truncates the
// noise of the levels near it, so a level whose mean lies within three
// noise deviations of one is not fitted. A band left with too few windows
// for three levels (mostly impulses, say) takes the function of the
// nearest fitted band: a sensor's noise changes slowly across its bands.
//
// The decision. Each band's evidence is Z, the slope of the unconstrained
// fit over its standard error, the standard error scaled up by the lack of
// fit of the levels (so that texture the medians let through widens it);
// for Gaussian noise Z is about standard normal. The evidence is fitted a
// second time on spectral-spatial details: the same windows and means, but
// the details of y_b − (y_{b−1} + y_{b+1})/2, the band less the mean of its
// two neighbours. Neighbouring bands share their edges and texture (and
// whatever slight signal dependence the scene's own sensor left), which
// cancel there; their noise does not, and mixes: under Gaussian noise of
// any σ per band the mixture is Gaussian with a variance that does not
// depend on x, so Z stays standard normal, and under Poisson-Gaussian noise
// its variance still grows with x. A band with both neighbours takes its Z
// and Ratio from this second fit (when it has enough windows); the
// functions are always the band's own fit, since the mixture blends the
// noise levels of neighbouring bands, which may differ (QRNN3D's case 1
// draws every band's σ from 10 to 70). The cube's evidence is
// Stouffer's pooled Z = Σ Z/√n over its n fitted bands, and its effect is
// the median over bands of Ratio, the fitted variance at a band's bright
// end (the 90th percentile of its window means) over the variance at its
// dark end (the 10th). The noise is signal-dependent when Z > zMin = 5 and
// Ratio ≥ ratioMin = 1.2. The first condition bounds the false alarms of
// Gaussian noise to those of a 5-sigma normal deviate (3·10⁻⁷); the second
// asks for a variation of the noise that matters to a denoiser (a noise
// deviation 10 % larger in the bright parts), so that a slight signal
// dependence left in a scene by its own sensor, or texture that grows with
// brightness, does not switch the noise model (docs/results.md has the
// margins measured on every shared scene).
//
// Everything is deterministic; bands are fitted in parallel, each twice,
// in time linear in its pixels up to sorts.
package noiselevel

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/stages/sparsenoise"
)

// Function is the noise-level function of one band: the noise variance
// at a clean value x on the working [0, 255] scale is A·x + B.
type Function struct{ A, B float64 }

// Variance returns A·x + B.
func (f Function) Variance(x float64) float64 { return f.A*x + f.B }

// Options are the settings of Estimate.
type Options struct {
	// Mask, when not nil, has one entry per voxel of the cube in its Data
	// order; a voxel with a nonzero entry is left out (the impulses and
	// dead pixels a sparse-noise detector found).
	Mask []uint8
}

// Level is one level of local means of a band: the mean of its windows'
// means, the noise variance estimated from their diagonal details, and how
// many details that estimate rests on.
type Level struct {
	Mean, Variance float64
	Details        int
	// Clipped says that the level lies within three noise deviations of a
	// clipping level of the band and was left out of the fit.
	Clipped bool
}

// Band is the fit of one band.
type Band struct {
	Function
	// SEA and SEB are the standard errors of A and B (0 for a parameter
	// held at 0 by its constraint). Z is the slope of the unconstrained
	// fit (a may be negative there) over its standard error: about
	// standard normal when the noise is Gaussian. For a band with two
	// neighbours Z and Ratio are those of the fit to its spectral-spatial
	// details (see the package comment) when that fit was made.
	SEA, SEB, Z float64
	// Dark and Bright are the 10th and 90th percentiles of the means of
	// the band's kept windows, and Ratio is the fitted variance at Bright
	// over that at Dark (+Inf when the variance at Dark is 0 and at Bright
	// is not).
	Dark, Bright, Ratio float64
	// Levels are the levels the function was fitted to (and the clipped
	// ones left out), in increasing order of mean.
	Levels []Level
	// Windows is the number of 4×4 windows kept by the smoothness test;
	// Fitted is false when there were too few for a fit, and then A is 0
	// and B the median estimate of the variance over every usable window
	// (0 without one); the report's function of the band is then that of
	// the nearest fitted band.
	Windows int
	Fitted  bool
}

// Report is what Estimate found in a cube.
type Report struct {
	// Functions holds the noise-level function of every band (of the
	// nearest fitted band for a band that was not fitted, see Band).
	Functions []Function
	// Bands holds the fit of every band behind Functions.
	Bands []Band
	// Z is the pooled test statistic, Σ Z/√n over the n fitted bands
	// (Stouffer's), and Ratio the median of their Ratio; Z is 0 and Ratio
	// 1 without a fitted band.
	Z, Ratio float64
	// SignalDependent says that Z > zMin and Ratio ≥ ratioMin (see the
	// package comment).
	SignalDependent bool
}

// The constants of the fit and the decision (see the package comment).
const (
	// window is the side of the windows.
	window = 4
	// smoothQuantile is the 99th percentile of χ² with 9 degrees of
	// freedom: the smoothness test's threshold.
	smoothQuantile = 21.666
	// chi1Median is the median of χ² with 1 degree of freedom: the median
	// of d² for d ~ N(0, v) is v·chi1Median.
	chi1Median = 0.454936423119572
	// medianSE is the asymptotic standard error of the median of n
	// squared N(0, v) details, relative to v, times √n: 1/(2 f(q)) with f
	// the χ²₁ density at its median q, over q.
	medianSE = 2.3326
	// minLevels and maxLevels bound the number of levels; perLevel is the
	// fewest windows a level holds.
	minLevels, maxLevels, perLevel = 3, 24, 32
	// selections is the number of times the windows are selected.
	selections = 3
	// clipMinShare is the least share of a band's voxels that hold a
	// value for it to be stuck, clipMinCount the least count; spikeRatio
	// is how many times more often than the values next to it a value
	// that is not an extreme must occur (see stuck).
	clipMinShare, clipMinCount, spikeRatio = 0.001, 8, 20
	// clusterShare is the least mean share of a stuck value's voxels'
	// four neighbours that hold it too for it to be a clipping level (a
	// region), not scattered impulses.
	clusterShare = 0.2
	// clipMargin is the number of noise deviations a level's mean keeps
	// from a clipping level to be fitted: at 3 deviations a clipped
	// voxel is rare enough (0.13 %) that leaving out the windows with one
	// does not truncate the noise of the others (their variance is 1.3 %
	// low at worst, and less on average over the window).
	clipMargin = 3
	// zMin and ratioMin are the decision's thresholds; darkQuantile and
	// brightQuantile the percentiles of the window means it compares.
	zMin, ratioMin               = 5, 1.2
	darkQuantile, brightQuantile = 0.1, 0.9
)

// Estimate fits the noise-level function of every band of c (see the
// package comment), its missing voxels and the voxels opts.Mask marks left
// out, and decides whether the noise is signal-dependent. It panics if
// opts.Mask is not nil and not of the cube's length.
func Estimate(c *msi.Cube, opts Options) *Report {
	if opts.Mask != nil && len(opts.Mask) != len(c.Data) {
		panic(fmt.Sprintf("noiselevel: mask of %d voxels for a %s cube", len(opts.Mask), c.Size()))
	}
	r := &Report{Functions: make([]Function, c.Bands), Bands: make([]Band, c.Bands)}
	n := c.Height * c.Width
	// Every band's voxels to leave out first: a band's spectral details
	// read its neighbours too.
	left, clips := make([][]bool, c.Bands), make([][]float64, c.Bands)
	parallel.Each(c.Bands, func(b int) {
		var mask []uint8
		if opts.Mask != nil {
			mask = opts.Mask[b*n : (b+1)*n]
		}
		left[b], clips[b] = stuck(c.Band(b), mask, c.Height, c.Width)
	})
	parallel.Each(c.Bands, func(b int) {
		band := c.Band(b)
		fit := fitBand(band, nil, left[b], clips[b], c.Height, c.Width)
		if fit.Fitted && b > 0 && b+1 < c.Bands {
			lo, hi := c.Band(b-1), c.Band(b+1)
			detail, joint := make([]float64, n), make([]bool, n)
			for i := range detail {
				detail[i] = band[i] - (lo[i]+hi[i])/2
				joint[i] = left[b][i] || left[b-1][i] || left[b+1][i] || math.IsNaN(detail[i])
			}
			if evidence := fitBand(band, detail, joint, clips[b], c.Height, c.Width); evidence.Fitted {
				fit.Z, fit.Ratio = evidence.Z, evidence.Ratio
			}
		}
		r.Bands[b] = fit
		r.Functions[b] = fit.Function
	})
	r.decide()
	return r
}

// decide pools the evidence of r's fitted bands into r.Z and r.Ratio,
// gives every band not fitted the function of the nearest fitted band,
// and decides whether the noise is signal-dependent.
func (r *Report) decide() {
	var ratios []float64
	for _, band := range r.Bands {
		if band.Fitted {
			r.Z += band.Z
			ratios = append(ratios, band.Ratio)
		}
	}
	r.Ratio = 1
	if len(ratios) > 0 {
		r.Z /= math.Sqrt(float64(len(ratios)))
		r.Ratio = sparsenoise.Median(ratios)
		fillUnfitted(r)
	}
	r.SignalDependent = r.Z > zMin && r.Ratio >= ratioMin
}

// fillUnfitted gives every band of r that was not fitted the function of
// the nearest fitted band (the lower one on a tie). r has a fitted band.
func fillUnfitted(r *Report) {
	for b := range r.Bands {
		if r.Bands[b].Fitted {
			continue
		}
		for d := 1; ; d++ {
			if b-d >= 0 && r.Bands[b-d].Fitted {
				r.Functions[b] = r.Bands[b-d].Function
				break
			}
			if b+d < len(r.Bands) && r.Bands[b+d].Fitted {
				r.Functions[b] = r.Bands[b+d].Function
				break
			}
		}
	}
}

// windowStats are what the fit needs of one 4×4 window: its mean, its four
// diagonal details and the sum of squares of its other nine details.
type windowStats struct {
	mean   float64
	diag   [4]float64
	smooth float64
}

// fitBand fits the noise-level function of one height×width band, its
// voxels marked in left left out and clips its clipping levels. The
// windows' details are taken from detail when it is not nil (the spectral
// details of Estimate), else from the band itself; their means always
// from the band.
func fitBand(band, detail []float64, left []bool, clips []float64, height, width int) Band {
	return fitWindows(windows(nil, band, detail, left, height, width, 0, 1), clips)
}

// fitWindows fits the noise-level function of a band to the statistics
// wins of its windows (in any order; they are sorted in place), clips its
// clipping levels.
func fitWindows(wins []windowStats, clips []float64) Band {
	// Sorted once by mean: the selections below keep the order, so the
	// levels are cut from them as they are.
	slices.SortFunc(wins, func(a, b windowStats) int { return cmp.Compare(a.mean, b.mean) })
	var fit Band
	if len(wins) < minLevels*perLevel {
		return fallback(wins)
	}
	// The first fit is of every window: the medians of the levels are
	// robust enough for a first function.
	kept := wins
	var prev *Function
	for pass := 0; ; pass++ {
		fit = fitLevels(kept, clips, prev)
		if !fit.Fitted {
			return fallback(wins)
		}
		if pass == selections {
			break
		}
		next := kept[:0:0]
		for _, w := range wins {
			if v := fit.Variance(w.mean); v > 0 && w.smooth < smoothQuantile*v {
				next = append(next, w)
			}
		}
		if len(next) < minLevels*perLevel {
			break
		}
		kept, prev = next, &fit.Function
	}
	fit.Windows = len(kept)
	fit.Dark, fit.Bright = quantile(kept, darkQuantile), quantile(kept, brightQuantile)
	dark, bright := fit.Variance(fit.Dark), fit.Variance(fit.Bright)
	switch {
	case dark > 0:
		fit.Ratio = bright / dark
	case bright > 0:
		fit.Ratio = math.Inf(1)
	default:
		fit.Ratio = 1
	}
	return fit
}

// fallback is the fit of a band with too few windows for levels: A = 0
// and B the median estimate of the variance over all of them (0 without
// any).
func fallback(wins []windowStats) Band {
	var d2 []float64
	for _, w := range wins {
		for _, d := range w.diag {
			d2 = append(d2, d*d)
		}
	}
	band := Band{Windows: len(wins), Ratio: 1}
	if len(d2) > 0 {
		band.B = sparsenoise.Median(d2) / chi1Median
	}
	return band
}

// stuck finds the voxels of a band that hold no information on its noise
// and its clipping levels. It returns left, true for a voxel to leave out
// (missing, marked in mask, or at a stuck value), and the clipping levels
// among the stuck values.
//
// A stuck value is one that occurs at least max(clipMinCount,
// clipMinShare·n) times among the n voxels left in: salt and pepper, dead
// columns and lines, saturation and the floor of a sensor repeat one
// value, where a continuous signal plus noise almost never repeats one.
// Quantised data (fewer distinct values than half the voxels: integer
// counts) repeat every value, so there the value must also be the band's
// smallest or largest or occur spikeRatio times more often than the values
// next to it in the band's sorted distinct values. A stuck value is a
// clipping level when it is the band's smallest or largest value and on
// average more than clusterShare of the four neighbours of its voxels hold
// it too: a clipped region (or a dead line at the floor), not scattered
// impulses. Pairs of equal neighbours (horizontal or
// vertical) are counted first; without clipMinCount of them no value can
// be stuck and the band is not sorted.
func stuck(band []float64, mask []uint8, height, width int) (left []bool, clips []float64) {
	left = make([]bool, len(band))
	present := make([]float64, 0, len(band))
	pairs := 0
	for i, v := range band {
		if math.IsNaN(v) || (mask != nil && mask[i] != 0) {
			left[i] = true
			continue
		}
		present = append(present, v)
		if i%width > 0 && band[i-1] == v && !left[i-1] {
			pairs++
		}
		if i >= width && band[i-width] == v && !left[i-width] {
			pairs++
		}
	}
	least := max(clipMinCount, int(math.Ceil(clipMinShare*float64(len(present)))))
	if pairs < clipMinCount || len(present) == 0 {
		return left, nil
	}
	slices.Sort(present)
	type run struct {
		value float64
		count int
	}
	var runs []run
	for i := 0; i < len(present); {
		j := i + 1
		for j < len(present) && present[j] == present[i] {
			j++
		}
		runs = append(runs, run{present[i], j - i})
		i = j
	}
	// Continuous data (most values distinct) repeat no value by chance:
	// every value repeated that often is stuck. Quantised data (integer
	// counts) repeat every value; there a stuck value must stand out of
	// the histogram.
	continuous := 2*len(runs) > len(present)
	var values []float64
	for k, r := range runs {
		next := 0
		if k > 0 {
			next = runs[k-1].count
		}
		if k+1 < len(runs) {
			next = max(next, runs[k+1].count)
		}
		if r.count >= least && (continuous || k == 0 || k == len(runs)-1 || r.count >= spikeRatio*next) {
			values = append(values, r.value)
		}
	}
	for _, v := range values {
		if v != runs[0].value && v != runs[len(runs)-1].value {
			continue // not an extreme, so not a clipping level
		}
		same, neighbours := 0, 0
		for i, u := range band {
			if u != v || left[i] {
				continue
			}
			x := i % width
			for _, j := range [4]int{i - width, i + width, i - 1, i + 1} {
				if (j == i-1 && x == 0) || (j == i+1 && x == width-1) || j < 0 || j >= len(band) {
					continue
				}
				neighbours++
				if band[j] == v {
					same++
				}
			}
		}
		if float64(same) > clusterShare*float64(neighbours) {
			clips = append(clips, v)
		}
	}
	if len(values) > 0 {
		for i, v := range band {
			if _, found := slices.BinarySearch(values, v); found {
				left[i] = true
			}
		}
	}
	return left, clips
}

// windows appends to wins the statistics of the 4×4 windows of the band
// (tiled from the top left; a partial window at the right or bottom edge
// is not used) with no voxel left out, and returns it: a window's mean
// from band, its details from detail when that is not nil, else from
// band. Only the windows whose row and column of windows sum to a
// multiple of stride are taken (kept), rows counted from firstRow when
// band is lines of a larger one.
func windows(wins []windowStats, band, detail []float64, left []bool, height, width, firstRow, stride int) []windowStats {
	if wins == nil {
		wins = make([]windowStats, 0, keptWindows(height/window, width/window, 0, stride)+1)
	}
	var p, q [window][window]float64
	for y0 := 0; y0+window <= height; y0 += window {
	next:
		for x0 := 0; x0+window <= width; x0 += window {
			if !kept(firstRow+y0/window, x0/window, stride) {
				continue
			}
			for dy := range window {
				for dx := range window {
					i := (y0+dy)*width + x0 + dx
					if left[i] {
						continue next
					}
					p[dy][dx] = band[i]
					if detail != nil {
						q[dy][dx] = detail[i]
					}
				}
			}
			w := haar(&p)
			if detail != nil {
				mean := w.mean
				w = haar(&q)
				w.mean = mean
			}
			wins = append(wins, w)
		}
	}
	return wins
}

// kept says whether the window at row and col (in windows) is in the
// subsample of every stride-th window: those whose row and column sum to
// a multiple of stride, a diagonal lattice that keeps every stride-th
// window of every row and of every column alike.
//
// Why not every stride-th in raster order: when a row holds a multiple of
// stride windows, that keeps the same columns in every row and never the
// others, and a band's stripes, one column of pixels each, then weigh
// stride times as much in its fit or not at all. The crop of superballs
// at 256×256×224 with Poisson-Gaussian noise and QRNN3D's case 5, every
// 2nd window of 64 a row: band 138, whose stripes the fit leaves in, was
// streamed at a = 0.62, b = 31.6 where the whole band gives 1.84 and
// 17.2, and broke the pooling of the bands' functions; on the lattice
// 1.82 and 17.3 (docs/results.md).
func kept(row, col, stride int) bool {
	return (row+col)%stride == 0
}

// keptWindows returns how many windows of rows×cols, its rows counted
// from firstRow, kept takes with stride: in each row the columns
// congruent to −row modulo stride.
func keptWindows(rows, cols, firstRow, stride int) int {
	n := 0
	for r := firstRow; r < firstRow+rows; r++ {
		if first := (stride - r%stride) % stride; first < cols {
			n += (cols-1-first)/stride + 1
		}
	}
	return n
}

// haar returns the statistics of one window from its Haar transform: for
// each 2×2 block [[p, q], [r, s]] the approximation (p+q+r+s)/2, the
// horizontal and vertical details (p−q+r−s)/2 and (p+q−r−s)/2 and the
// diagonal detail (p−q−r+s)/2; at the next level the same of the four
// approximations, of which only the diagonal detail is used (its
// horizontal and vertical details measure a gradient, which the diagonal
// details are blind to).
func haar(p *[window][window]float64) windowStats {
	var w windowStats
	var approx [2][2]float64
	for by := range 2 {
		for bx := range 2 {
			a, b := p[2*by][2*bx], p[2*by][2*bx+1]
			c, d := p[2*by+1][2*bx], p[2*by+1][2*bx+1]
			approx[by][bx] = (a + b + c + d) / 2
			h, v := (a-b+c-d)/2, (a+b-c-d)/2
			w.diag[2*by+bx] = (a - b - c + d) / 2
			w.smooth += h*h + v*v
		}
	}
	curv := (approx[0][0] - approx[0][1] - approx[1][0] + approx[1][1]) / 2
	w.smooth += curv * curv
	w.mean = (approx[0][0] + approx[0][1] + approx[1][0] + approx[1][1]) / 8
	return w
}

// fitLevels cuts the windows, sorted by mean, into levels of equal count,
// estimates each level's variance, and fits the function to the levels
// clear of the clipping levels, a level's noise deviation being measured
// by the previous fit prev (by its own variance when prev is nil). The result is not Fitted when fewer than
// minLevels levels are left.
func fitLevels(wins []windowStats, clips []float64, prev *Function) Band {
	sorted := wins
	count := min(maxLevels, len(sorted)/perLevel)
	var band Band
	if count < minLevels {
		return band
	}
	d2 := make([]float64, 0, window*(len(sorted)/count+1))
	for k := range count {
		lo, hi := k*len(sorted)/count, (k+1)*len(sorted)/count
		d2 = d2[:0]
		var sum float64
		for _, w := range sorted[lo:hi] {
			sum += w.mean
			for _, d := range w.diag {
				d2 = append(d2, d*d)
			}
		}
		level := Level{Mean: sum / float64(hi-lo), Variance: sparsenoise.Median(d2) / chi1Median, Details: len(d2)}
		v := level.Variance
		if prev != nil {
			v = prev.Variance(level.Mean)
		}
		for _, c := range clips {
			if math.Abs(level.Mean-c) <= clipMargin*math.Sqrt(v) {
				level.Clipped = true
			}
		}
		band.Levels = append(band.Levels, level)
	}
	var fitted []Level
	for _, l := range band.Levels {
		if !l.Clipped {
			fitted = append(fitted, l)
		}
	}
	if len(fitted) < minLevels {
		return band
	}
	band.Fitted = true
	band.Function, band.SEA, band.SEB, band.Z = fitLine(fitted)
	return band
}

// fitLine fits v = a·m + b to the levels by weighted least squares with
// a ≥ 0 and b ≥ 0, and returns the standard errors of a and b and z, the
// slope of the unconstrained fit over its standard error (the test
// statistic of the decision; 0 when the levels' means are all equal). The
// weight of a level is the inverse of the variance of its median
// estimate, (medianSE·v(m))²/details, with v the function of the previous
// fit (the levels' own variances the first time); the fit is made twice.
// The standard errors are scaled by the square root of the reduced χ² of
// their fit when it is above 1, so that levels scattered beyond their own
// errors (texture the medians let through) widen them.
func fitLine(levels []Level) (f Function, seA, seB, z float64) {
	weights := make([]float64, len(levels))
	for i, l := range levels {
		weights[i] = weight(l, l.Variance)
	}
	for pass := range 2 {
		if pass > 0 {
			for i, l := range levels {
				weights[i] = weight(l, f.Variance(l.Mean))
			}
		}
		f, seA, seB = weightedLine(levels, weights)
	}
	free := 2
	if seA == 0 || seB == 0 {
		free = 1
	}
	s := lackOfFit(levels, weights, f, free)
	if line, seLine, _, ok := freeLine(levels, weights); ok && seLine > 0 {
		z = line.A / (seLine * lackOfFit(levels, weights, line, 2))
	}
	return f, seA * s, seB * s, z
}

// lackOfFit returns the square root of the reduced χ² of the fit f of the
// levels with the given weights and number of free parameters, or 1 when
// it is below 1 or there are too few levels.
func lackOfFit(levels []Level, weights []float64, f Function, free int) float64 {
	chi2 := chiSquare(levels, weights, f)
	if dof := len(levels) - free; dof > 0 && chi2/float64(dof) > 1 {
		return math.Sqrt(chi2 / float64(dof))
	}
	return 1
}

// chiSquare returns the weighted sum of squared residuals of the fit f of
// the levels.
func chiSquare(levels []Level, weights []float64, f Function) float64 {
	var chi2 float64
	for i, l := range levels {
		r := l.Variance - f.Variance(l.Mean)
		chi2 += weights[i] * r * r
	}
	return chi2
}

// weight returns the inverse variance of the median estimate of a level
// whose variance is v: (details)/(medianSE·v)², with v floored at a
// millionth of the working scale's square so that a noiseless level has a
// finite weight.
func weight(l Level, v float64) float64 {
	v = math.Max(v, 1e-6)
	return float64(l.Details) / (medianSE * medianSE * v * v)
}

// freeLine returns the unconstrained weighted least squares fit of
// v = a·m + b and the standard errors of a and b from the inverse normal
// matrix; ok is false when that matrix is singular (the means all equal).
func freeLine(levels []Level, w []float64) (f Function, seA, seB float64, ok bool) {
	var sw, sm, smm, sv, smv float64
	for i, l := range levels {
		sw += w[i]
		sm += w[i] * l.Mean
		smm += w[i] * l.Mean * l.Mean
		sv += w[i] * l.Variance
		smv += w[i] * l.Mean * l.Variance
	}
	det := sw*smm - sm*sm
	if det <= 0 {
		return Function{}, 0, 0, false
	}
	return Function{A: (sw*smv - sm*sv) / det, B: (smm*sv - sm*smv) / det}, math.Sqrt(sw / det), math.Sqrt(smm / det), true
}

// weightedLine solves the weighted least squares fit of v = a·m + b with
// a ≥ 0 and b ≥ 0: the unconstrained solution when it is feasible, else the
// better of the fits with a = 0 and with b = 0. It returns the standard
// errors from the inverse normal matrix (0 for a parameter held at 0).
func weightedLine(levels []Level, w []float64) (f Function, seA, seB float64) {
	if f, seA, seB, ok := freeLine(levels, w); ok && f.A >= 0 && f.B >= 0 {
		return f, seA, seB
	}
	var sw, smm, sv, smv float64
	for i, l := range levels {
		sw += w[i]
		smm += w[i] * l.Mean * l.Mean
		sv += w[i] * l.Variance
		smv += w[i] * l.Mean * l.Variance
	}
	// The constrained fits: a = 0 (b the weighted mean) and b = 0 (a the
	// slope through the origin), whichever leaves the smaller weighted sum
	// of squares.
	flat := Function{B: math.Max(sv/sw, 0)}
	var through Function
	if smm > 0 {
		through.A = math.Max(smv/smm, 0)
	}
	if smm > 0 && chiSquare(levels, w, through) < chiSquare(levels, w, flat) {
		return through, math.Sqrt(1 / smm), 0
	}
	return flat, 0, math.Sqrt(1 / sw)
}

// Summary says what was found in a few lines (no trailing newline), for
// example
//
//	noise: signal-dependent, σ²(x) = a·x + b on the [0, 255] scale: a 1.91–2.08 (median 2), b 14.9–17.3 (median 16)
//	evidence: slope z 41.2 over 31 bands (> 5), bright/dark variance 3.30 (median over bands, ≥ 1.2)
//
// or, for Gaussian noise,
//
//	noise: Gaussian, not signal-dependent: slope z 0.5 over 31 bands (> 5 needed), bright/dark variance 1.01 (median over bands, ≥ 1.2 needed)
//	σ²(x) = a·x + b on the [0, 255] scale: a 0–0.867 (median 0.0848), b 335–435 (median 391)
//
// and a third line for the bands too small or too flat to fit.
func (r *Report) Summary() string {
	fitted := 0
	for _, band := range r.Bands {
		if band.Fitted {
			fitted++
		}
	}
	var as, bs []float64
	for _, f := range r.Functions {
		as, bs = append(as, f.A), append(bs, f.B)
	}
	fn := fmt.Sprintf("σ²(x) = a·x + b on the [0, 255] scale: a %s, b %s", spread(as, "%.3g"), spread(bs, "%.3g"))
	var s strings.Builder
	if r.SignalDependent {
		fmt.Fprintf(&s, "noise: signal-dependent, %s\nevidence: slope z %.1f over %d band%s (> %d), bright/dark variance %.2f (median over bands, ≥ %.1f)",
			fn, r.Z, fitted, plural(fitted), zMin, r.Ratio, ratioMin)
	} else {
		fmt.Fprintf(&s, "noise: Gaussian, not signal-dependent: slope z %.1f over %d band%s (> %d needed), bright/dark variance %.2f (median over bands, ≥ %.1f needed)\n%s",
			r.Z, fitted, plural(fitted), zMin, r.Ratio, ratioMin, fn)
	}
	if unfitted := len(r.Bands) - fitted; unfitted > 0 {
		fmt.Fprintf(&s, "\n%d band%s too small or too flat to fit, given the nearest fitted band's function", unfitted, plural(unfitted))
	}
	return s.String()
}

// spread formats the range and median of v as "lo–hi (median m)", each
// number in format.
func spread(v []float64, format string) string {
	sorted := slices.Sorted(slices.Values(v))
	f := func(x float64) string { return fmt.Sprintf(format, x) }
	return fmt.Sprintf("%s–%s (median %s)", f(sorted[0]), f(sorted[len(sorted)-1]), f(sparsenoise.Median(sorted)))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// quantile returns the p-quantile of the means of the non-empty wins,
// sorted by mean, by linear interpolation between order statistics.
func quantile(sorted []windowStats, p float64) float64 {
	pos := p * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1].mean
	}
	return sorted[i].mean + (pos-float64(i))*(sorted[i+1].mean-sorted[i].mean)
}
