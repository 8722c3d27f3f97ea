package noref

import (
	"math"

	"github.com/mjibson/go-dsp/spectral"
	"github.com/mjibson/go-dsp/window"
)

// The power spectra of the removed part R of a band, estimated by Welch's
// method (go-dsp's spectral.Pwelch: Hann-windowed segments of n samples,
// overlapping by half, their periodograms averaged), answer two questions
// that the lag-1 figures answer only for neighbours:
//
//   - How white is R along its lines? The spectral flatness of R's rows —
//     the geometric over the arithmetic mean of their mean Welch spectrum
//     over the frequencies 1/n … 1/2 (the mean, at 0, left out) — is near 1
//     for white noise (above 0.9 in the tests) and falls towards 0 as the
//     power gathers at some frequencies: at the low ones when edges and
//     texture were removed, at a stripe pattern's when stripes were.
//   - Is there periodic striping? A push-broom sensor's detectors repeat
//     across the track with the period of its detector array, and so do
//     their offsets: R's column means c_x (the across-track profile, in
//     which the noise of each column is averaged over the height; their
//     mean removed) are then periodic. The autocorrelation of c_x, the
//     inverse Fourier transform of its Welch spectrum (Wiener–Khinchin)
//     divided by the Hann window's own circular autocorrelation and by its
//     value at lag 0, r(τ), is near 1 at every multiple of the period when
//     the pattern dominates, and lower between them. The strongest period
//     is the smallest lag 2 ≤ τ ≤ n/4 at which r is a local maximum, r(τ)
//     and r(2τ) are at least periodicMin, and r(τ) is at least periodicDip
//     above its smallest value at a shorter lag; a smooth profile, whose r
//     only falls, and white column means have none (NaN).
//
// The segment length n is the largest power of two at most half the
// samples (rows) or lines (column means), at least minSegment: two or more
// segments are averaged, and the radix-2 transform needs no padding.

// minSegment is the shortest Welch segment: shorter signals get no
// spectrum (NaN flatness, no period).
const minSegment = 16

// periodicMin and periodicDip are the least normalised autocorrelation of
// the column means at a period and at twice it, and the least rise to it
// from its lowest value at a shorter lag. White column means of w samples
// give |r| of about 1/√w; a periodic pattern that holds a share s of the
// profile's power gives r ≈ s at the multiples of its period and lower
// values between.
const (
	periodicMin = 0.4
	periodicDip = 0.5
)

// segmentLength returns the Welch segment length for a signal of n
// samples: the largest power of two at most n/2, or 0 when that is below
// minSegment.
func segmentLength(n int) int {
	s := minSegment
	if n/2 < s {
		return 0
	}
	for 2*s <= n/2 {
		s *= 2
	}
	return s
}

// welch returns the one-sided Welch power spectrum of x (Hann window,
// segments of n samples overlapping by n/2, scaled as go-dsp's Pwelch with
// unit sampling frequency): n/2+1 values at the frequencies k/n.
func welch(x []float64, n int) []float64 {
	p, _ := spectral.Pwelch(x, 1, &spectral.PwelchOptions{NFFT: n, Noverlap: n / 2, Window: window.Hann})
	return p
}

// flatnessRows is the most rows whose spectra flatness averages, evenly
// spaced: 64 rows of two or more segments average 128 or more
// periodograms, which bias a white spectrum's flatness by well under 1 %,
// while every segment costs go-dsp a transform that allocates and starts
// goroutines (a 512×512 band's every row would take 2048 of them).
const flatnessRows = 64

// flatness returns the spectral flatness of the rows of the h×w row-major
// d (NaN when w is too short for a spectrum or d is 0): of their mean Welch
// spectrum over every ⌈h/flatnessRows⌉-th row.
func flatness(d []float64, h, w int) float64 {
	n := segmentLength(w)
	if n == 0 {
		return math.NaN()
	}
	mean := make([]float64, n/2+1)
	for r := 0; r < h; r += (h + flatnessRows - 1) / flatnessRows {
		for k, v := range welch(d[r*w:(r+1)*w], n) {
			mean[k] += v
		}
	}
	return spectralFlatness(mean[1:])
}

// spectralFlatness returns exp(mean log p) / mean p of the power values p:
// 1 when they are all equal, 0 when one is 0 and NaN when all are.
func spectralFlatness(p []float64) float64 {
	var logSum, sum float64
	for _, v := range p {
		logSum += math.Log(v)
		sum += v
	}
	if sum == 0 {
		return math.NaN()
	}
	k := float64(len(p))
	return math.Exp(logSum/k) / (sum / k)
}

// columnMeans returns the means of the columns of the h×w row-major d.
func columnMeans(d []float64, h, w int) []float64 {
	c := make([]float64, w)
	for r := range h {
		for x, v := range d[r*w : (r+1)*w] {
			c[x] += v
		}
	}
	for x := range c {
		c[x] /= float64(h)
	}
	return c
}

// ColumnSpectrum is the Welch power spectrum of a removed band's column
// means (see the package's note on spectra): Power at the frequencies
// Frequency (cycles per column, 0 … 1/2), and the strongest Period in
// columns (NaN when none).
type ColumnSpectrum struct {
	Frequency, Power []float64
	Period           float64
}

// ColumnMeanSpectrum returns the spectrum of the column means of the h×w
// row-major removed part r of a band (missing voxels, NaN, count as 0),
// or nil when the band is too narrow for one (fewer than 2·minSegment
// columns). It panics if len(r) ≠ h·w.
func ColumnMeanSpectrum(r []float64, h, w int) *ColumnSpectrum {
	if len(r) != h*w {
		panic("noref: the removed band's length is not height × width")
	}
	d := make([]float64, len(r))
	for i, v := range r {
		if !math.IsNaN(v) {
			d[i] = v
		}
	}
	return columnSpectrum(d, h, w)
}

// columnSpectrum is ColumnMeanSpectrum of a d without NaN.
func columnSpectrum(d []float64, h, w int) *ColumnSpectrum {
	n := segmentLength(w)
	if n == 0 {
		return nil
	}
	c := columnMeans(d, h, w)
	mean := 0.0
	for _, v := range c {
		mean += v / float64(w)
	}
	for x := range c {
		c[x] -= mean
	}
	p := welch(c, n)
	s := &ColumnSpectrum{Frequency: make([]float64, len(p)), Power: p, Period: strongestPeriod(p, n)}
	for k := range s.Frequency {
		s.Frequency[k] = float64(k) / float64(n)
	}
	return s
}

// strongestPeriod returns the strongest period (see the package's note on
// spectra) of a signal whose one-sided Welch spectrum, with Hann segments
// of n samples, is p; NaN when there is none.
func strongestPeriod(p []float64, n int) float64 {
	r := normalisedAutocorrelation(p, n, n/2+1)
	if r == nil {
		return math.NaN()
	}
	lowest := r[1]
	for tau := 2; tau <= n/4; tau++ {
		if r[tau] >= periodicMin && r[2*tau] >= periodicMin && r[tau]-lowest >= periodicDip && r[tau] >= r[tau-1] && r[tau] >= r[tau+1] {
			return float64(tau)
		}
		lowest = math.Min(lowest, r[tau])
	}
	return math.NaN()
}

// normalisedAutocorrelation returns r(τ) for τ = 0 … lags−1 of a signal
// whose one-sided Welch spectrum with Hann segments of n samples is p: the
// inverse transform R(τ) = Σ_k p_k cos(2πkτ/n) (p holds the two-sided
// spectrum's interior twice, so the sum over one side is the real part of
// the two-sided one), divided by the window's circular autocorrelation
// ρ(τ)/ρ(0) and by R(0). It returns nil when R(0) is 0.
func normalisedAutocorrelation(p []float64, n, lags int) []float64 {
	w := window.Hann(n)
	rho := func(tau int) float64 {
		s := 0.0
		for i := range n {
			s += w[i] * w[(i+tau)%n]
		}
		return s
	}
	acf := func(tau int) float64 {
		s := 0.0
		for k, v := range p {
			s += v * math.Cos(2*math.Pi*float64(k*tau)/float64(n))
		}
		return s
	}
	r0, rho0 := acf(0), rho(0)
	if !(r0 > 0) {
		return nil
	}
	r := make([]float64, lags)
	for tau := range r {
		r[tau] = acf(tau) / r0 * rho0 / rho(tau)
	}
	return r
}

// summarisePeriods returns the period found in the most bands (the
// shortest of those tied), and the shortest and the longest period found;
// NaN for each when no band has one. A mean of periods would mean
// nothing: bands of one sensor share their detectors' period.
func summarisePeriods(bands []Band) (common, shortest, longest float64) {
	count := map[float64]int{}
	common, shortest, longest = math.NaN(), math.Inf(1), math.Inf(-1)
	for _, b := range bands {
		if math.IsNaN(b.Period) {
			continue
		}
		count[b.Period]++
		shortest, longest = math.Min(shortest, b.Period), math.Max(longest, b.Period)
	}
	if len(count) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	for p, k := range count {
		if math.IsNaN(common) || k > count[common] || (k == count[common] && p < common) {
			common = p
		}
	}
	return common, shortest, longest
}
