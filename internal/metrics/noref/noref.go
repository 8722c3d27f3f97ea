// Package noref assesses noise and denoising without a clean reference, for
// real data: how noisy a cube is, band by band, and whether what a denoiser
// removed from it was noise or image.
//
// For a cube Y it reports the noise level of every band by the per-band
// estimator of package noise (the MAD of the finest diagonal wavelet band
// by default). For a denoised cube X of Y it also reports, band by band,
// what is left of structure in the residual R = Y − X (what was removed):
//
//   - its standard deviation, near the noise estimate when the noise and
//     only the noise was removed (well below it: noise was left in);
//   - its Pearson correlation with X: removed noise is independent of the
//     image, so near 0; edges and texture removed with it (image leaked
//     into R) make it positive;
//   - its lag-1 autocorrelation horizontally (between R(y, x) and
//     R(y, x+1)) and vertically (R(y, x) and R(y+1, x)): white noise gives
//     ≈ 0, image removed with it (smooth, so neighbours alike) a positive
//     value in both; structure along columns (stripes) shows vertically;
//   - the share of its energy in its column means and in its row means:
//     the fraction of Σ (R − mean R)² that the per-column (per-row) means
//     explain. White noise puts about 1/height of its energy in the column
//     means and 1/width in the row means; vertical stripes, dead columns
//     and removed column offsets give a large column share, horizontal
//     lines a large row share. Stripes that were in Y and were removed are
//     expected there; on a band without stripes a large share means the
//     denoiser put column structure into X.
//
// Apart from the σ of each band it reports the noise-level function of
// each band of Y, σ²(x) = a·x + b on the working scale, and whether the
// noise is signal-dependent (package noiselevel): the noise model a
// denoiser of Y should assume.
package noref

import (
	"fmt"
	"math"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/stages/noiselevel"
)

// Band is the assessment of one band.
type Band struct {
	// Sigma is the estimated noise standard deviation of the (noisy) band.
	Sigma float64
	// Removed is the standard deviation of the residual noisy − denoised,
	// and Correlation the Pearson correlation of that residual with the
	// denoised band (0 when either is constant).
	Removed, Correlation float64
	// LagX and LagY are the lag-1 autocorrelations of the residual along
	// rows (horizontal neighbours) and along columns (vertical neighbours):
	// the mean product of the centred residual at neighbouring pixels over
	// its mean square (0 when the residual is constant or the band is one
	// pixel wide, resp. high).
	LagX, LagY float64
	// ColumnShare and RowShare are the fractions in [0, 1] of the centred
	// residual's energy in its column means and in its row means:
	// height·Σ_x c_x² / Σ (R − mean R)² with c_x the mean of column x of
	// the centred residual, and likewise for rows (0 when the residual is
	// constant).
	ColumnShare, RowShare float64
	// Flatness is the spectral flatness of the residual along its rows,
	// in [0, 1] (1 for white noise), and Period the strongest period of
	// its column means in columns, NaN when none (see the note on spectra
	// in spectrum.go). Both are NaN for bands narrower than 2·minSegment
	// samples.
	Flatness, Period float64
	// A and B are the noisy band's noise-level function σ²(x) = A·x + B
	// on the working [0, 255] scale (see Report.NoiseLevel).
	A, B float64
}

// Report is the assessment of a cube: its bands, and the mean, smallest
// and largest value over bands of each field of Band. Without a denoised
// cube every field but Sigma is NaN.
type Report struct {
	Bands          []Band
	Mean, Min, Max Band
	// NoiseLevel is the noise-level estimate of the noisy cube: every
	// band's function, the fit behind it, and the decision whether the
	// noise is signal-dependent.
	NoiseLevel *noiselevel.Report
}

// Assess estimates the noise of every band of noisy with the named
// estimator (noise.EstimateBands: "mad", "regression" or "min") and its
// noise-level function (noiselevel.Estimate) and, when
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
	nan := math.NaN()
	r := &Report{Bands: make([]Band, noisy.Bands), NoiseLevel: noiselevel.Estimate(noisy, noiselevel.Options{})}
	for b := range r.Bands {
		band := Band{Sigma: sigmas[b], Removed: nan, Correlation: nan, LagX: nan, LagY: nan, ColumnShare: nan, RowShare: nan, Flatness: nan, Period: nan}
		if denoised != nil {
			band = residual(noisy.Band(b), denoised.Band(b), noisy.Height, noisy.Width)
			band.Sigma = sigmas[b]
		}
		f := r.NoiseLevel.Functions[b]
		band.A, band.B = f.A, f.B
		r.Bands[b] = band
	}
	r.Mean, r.Min, r.Max = summarise(r.Bands)
	r.Mean.Period, r.Min.Period, r.Max.Period = summarisePeriods(r.Bands)
	return r, nil
}

// NoiseModel names the noise model the noise-level estimate decided on:
// "signal-dependent" or "gaussian".
func (r *Report) NoiseModel() string {
	if r.NoiseLevel.SignalDependent {
		return "signal-dependent"
	}
	return "gaussian"
}

// fields lists the fields of a Band, so that summaries treat them alike.
func fields(b *Band) []*float64 {
	return []*float64{&b.Sigma, &b.Removed, &b.Correlation, &b.LagX, &b.LagY, &b.ColumnShare, &b.RowShare, &b.A, &b.B, &b.Flatness}
}

// summarise returns the mean, smallest and largest value over bands of
// each field (NaN fields stay NaN).
func summarise(bands []Band) (mean, lo, hi Band) {
	mf, lf, hf := fields(&mean), fields(&lo), fields(&hi)
	for i := range lf {
		*lf[i], *hf[i] = math.Inf(1), math.Inf(-1)
	}
	for k := range bands {
		for i, v := range fields(&bands[k]) {
			*mf[i] += *v
			if math.IsNaN(*v) {
				*lf[i], *hf[i] = math.NaN(), math.NaN()
				continue
			}
			*lf[i], *hf[i] = math.Min(*lf[i], *v), math.Max(*hf[i], *v)
		}
	}
	for _, m := range mf {
		*m /= float64(len(bands))
	}
	return mean, lo, hi
}

// residual returns the statistics of the h×w row-major residual y − x
// (all of Band but Sigma), in two passes for accuracy. A pixel missing
// (NaN) in y or x is left out: of the means, variances and correlation,
// and of the lag pairs; in the column and row sums it counts as 0.
func residual(y, x []float64, h, w int) Band {
	var meanR, meanX float64
	present := 0
	for i := range y {
		if r := y[i] - x[i]; !math.IsNaN(r) {
			meanR += r
			meanX += x[i]
			present++
		}
	}
	n := float64(present)
	meanR /= n
	meanX /= n
	d := make([]float64, len(y)) // the centred residual, 0 where missing
	ok := make([]bool, len(y))   // present in both
	var varR, varX, cov float64
	for i := range y {
		if math.IsNaN(y[i] - x[i]) {
			continue
		}
		ok[i] = true
		d[i] = y[i] - x[i] - meanR
		dx := x[i] - meanX
		varR += d[i] * d[i]
		varX += dx * dx
		cov += d[i] * dx
	}
	b := Band{Removed: math.Sqrt(varR / n), Flatness: math.NaN(), Period: math.NaN()}
	if varR == 0 {
		return b
	}
	b.Flatness = flatness(d, h, w)
	if s := columnSpectrum(d, h, w); s != nil {
		b.Period = s.Period
	}
	if varX != 0 {
		b.Correlation = cov / math.Sqrt(varR*varX)
	}
	colSum, rowSum := make([]float64, w), make([]float64, h)
	var lagX, lagY float64
	pairsX, pairsY := 0, 0
	for r := range h {
		row := d[r*w : (r+1)*w]
		for c, v := range row {
			colSum[c] += v
			rowSum[r] += v
			if c+1 < w && ok[r*w+c] && ok[r*w+c+1] {
				lagX += v * row[c+1]
				pairsX++
			}
			if r+1 < h && ok[r*w+c] && ok[(r+1)*w+c] {
				lagY += v * d[(r+1)*w+c]
				pairsY++
			}
		}
	}
	// The mean lag product over the mean square: the sample autocorrelation
	// with each lag averaged over its own number of pairs.
	if pairsX > 0 {
		b.LagX = lagX / float64(pairsX) / (varR / n)
	}
	if pairsY > 0 {
		b.LagY = lagY / float64(pairsY) / (varR / n)
	}
	// height·Σ c_x² with c_x = colSum/height is Σ colSum²/height.
	var colEnergy, rowEnergy float64
	for _, s := range colSum {
		colEnergy += s * s
	}
	for _, s := range rowSum {
		rowEnergy += s * s
	}
	b.ColumnShare = colEnergy / float64(h) / varR
	b.RowShare = rowEnergy / float64(w) / varR
	return b
}
