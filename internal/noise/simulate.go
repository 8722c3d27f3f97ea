package noise

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"tdsc/internal/msi"
	"tdsc/internal/option"
)

// Band-dependent noise, as the hyperspectral denoising literature simulates
// real sensors (for example the LRMR, LRTV and NGmeet experiments of Zhang
// et al. 2014, He et al. 2016 and He et al. 2019): Gaussian noise whose
// standard deviation differs from band to band, vertical stripes on some
// bands, salt-and-pepper impulses on some bands, and dead columns and dead
// lines (set to 0) on some bands. Simulate adds them in that order; every
// part draws from its own PCG stream of the one seed, so switching a part
// on or off leaves the Gaussian noise (and the other parts) unchanged, and
// a Spec with a single σ and nothing else gives exactly Add's cube.

// The PCG streams of the parts of Simulate besides the Gaussian noise
// itself, which uses Add's pcgStream.
const (
	sigmaStream   = pcgStream ^ 1
	stripeStream  = pcgStream ^ 2
	impulseStream = pcgStream ^ 3
	deadColStream = pcgStream ^ 4
	deadRowStream = pcgStream ^ 5
	// partStream chooses the disjoint band sets of CaseMixture.
	partStream = pcgStream ^ 6
)

// Defaults of the Spec fields that are only used when their part is on.
const (
	// DefaultStripeColumnsLo and DefaultStripeColumnsHi bound the fraction
	// of a striped band's columns that get a stripe: 10–20%, the 20–40
	// columns of 200 of the literature's experiments.
	DefaultStripeColumnsLo = 0.1
	DefaultStripeColumnsHi = 0.2
	// DefaultStripeAmplitude is the largest stripe offset on the [0, 255]
	// scale: 0.25 of the full scale, the ±0.25 on [0, 1] of the literature.
	DefaultStripeAmplitude = 0.25 * 255
	// DefaultImpulseDensity is the fraction of the pixels of an impulse
	// band that are replaced.
	DefaultImpulseDensity = 0.1
	// DefaultDeadLo and DefaultDeadHi bound the fraction of the columns
	// (lines) of a band with dead columns (lines) that are dead: 5–15 %,
	// QRNN3D's amounts.
	DefaultDeadLo = 0.05
	DefaultDeadHi = 0.15
)

// Range is a closed interval [Lo, Hi]. The zero Range means "not set".
type Range struct{ Lo, Hi float64 }

// IsZero reports whether r is the zero Range.
func (r Range) IsZero() bool { return r == Range{} }

// String formats r as "LO:HI", the form ParseRange reads.
func (r Range) String() string {
	return strconv.FormatFloat(r.Lo, 'g', -1, 64) + ":" + strconv.FormatFloat(r.Hi, 'g', -1, 64)
}

// ParseRange reads a range written "LO:HI" (for example "10:70"), with
// 0 ≤ LO ≤ HI finite. A bad range is an *option.Error for field, the flag
// the text came from.
func ParseRange(field, s string) (Range, error) {
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		return Range{}, option.Errorf(field, s, "range %q is not of the form LO:HI", s)
	}
	l, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
	h, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
	if err1 != nil || err2 != nil {
		return Range{}, option.Errorf(field, s, "range %q is not two numbers LO:HI", s)
	}
	r := Range{l, h}
	if err := r.check(field, math.Inf(1)); err != nil {
		return Range{}, err
	}
	return r, nil
}

// check returns an *option.Error for field unless 0 ≤ Lo ≤ Hi ≤ max, both
// finite.
func (r Range) check(field string, max float64) error {
	if !(r.Lo >= 0) || !(r.Lo <= r.Hi) || !(r.Hi <= max) || math.IsInf(r.Hi, 1) {
		if math.IsInf(max, 1) {
			return option.Errorf(field, r.String(), "range %s must have 0 ≤ LO ≤ HI, both finite", r)
		}
		return option.Errorf(field, r.String(), "range %s must have 0 ≤ LO ≤ HI ≤ %g", r, max)
	}
	return nil
}

// Spec describes the noise Simulate adds to a cube. The zero Spec adds
// nothing (σ = 0, no stripes, no impulses). Fields whose part is off are
// ignored; a zero field of a part that is on takes the default named in its
// comment. The comments give the command-line flag that each field's
// Validate error names.
type Spec struct {
	// Sigma is the standard deviation of the Gaussian noise of every band
	// on the [0, 255] scale when SigmaRange is not set (flag "sigma").
	Sigma float64
	// SigmaRange, when set, draws the standard deviation of every band
	// independently and uniformly from [Lo, Hi] (flag "sigma-range", for
	// example 10:70). Sigma must then be 0.
	SigmaRange Range
	// PoissonGaussian, when set, makes the noise signal-dependent (flag
	// "noise-params"): y = A·Poisson(x/A) + N(0, B) in every band with
	// its Level (see Level), one Level for every band or one per band.
	// Sigma and SigmaRange must then be 0.
	PoissonGaussian []Level
	// GaussianTwin (flag "gaussian-twin") replaces the noise of
	// PoissonGaussian by i.i.d. Gaussian noise of the same mean power
	// (EqualPowerSigma of the clean cube) from the same stream as Add's:
	// the cube against which a denoiser's handling of signal-dependent
	// noise is measured. It needs PoissonGaussian.
	GaussianTwin bool

	// StripeBands is the fraction of the bands that get stripes, 0 to 1
	// (flag "stripes"; 0, the default: none). The number of striped bands
	// is round(StripeBands·Bands), at least 1 when StripeBands > 0, chosen
	// at random without repetition.
	StripeBands float64
	// StripeColumns bounds the fraction of the columns of a striped band
	// that get a stripe (flag "stripe-columns"; default 0.1:0.2). Every
	// striped band draws its number of stripes uniformly from the integers
	// round(Lo·Width) … round(Hi·Width) (at least 1) and picks that many
	// distinct columns at random.
	StripeColumns Range
	// StripeAmplitude is the largest stripe offset on the [0, 255] scale
	// (flag "stripe-amplitude"; default 63.75, a quarter of the scale).
	// Every stripe adds one offset drawn uniformly from
	// [−StripeAmplitude, StripeAmplitude] to every pixel of its column:
	// a full-height vertical stripe, as a push-broom sensor's miscalibrated
	// detector makes.
	StripeAmplitude float64

	// ImpulseBands is the fraction of the bands that get salt-and-pepper
	// noise, 0 to 1 (flag "impulse"; 0, the default: none), counted and
	// chosen as StripeBands is, independently of the striped bands.
	ImpulseBands float64
	// ImpulseDensity is the fraction of the pixels of an impulse band that
	// are replaced, 0 to 1 (flag "impulse-density"; default 0.1): exactly
	// round(ImpulseDensity·Height·Width) distinct pixels chosen at random,
	// each set to 0 or 255 with equal probability. Impulses come last, so
	// they replace the Gaussian noise and stripes of their pixels.
	ImpulseDensity float64

	// DeadColumnBands is the fraction of the bands that get dead columns,
	// 0 to 1 (flag "dead-columns"; 0, the default: none), counted and
	// chosen as StripeBands is, independently of the other parts.
	DeadColumnBands float64
	// DeadLineBands is the same for dead lines (rows; flag "dead-lines").
	DeadLineBands float64
	// DeadFraction bounds the fraction of the columns (lines) of such a
	// band that are dead (flag "dead-fraction"; default 0.05:0.15): every
	// band draws its number uniformly from the integers ceil(Lo·Width) …
	// ceil(Hi·Width) (at least 1; Height for lines), as QRNN3D does, and
	// sets that many distinct columns (lines), chosen at random, to 0.
	// Dead columns and lines come after impulses: a dead detector reads 0
	// whatever else the pixel would have had.
	DeadFraction Range

	// Seed selects the noise: the same Spec and Seed give a bit-identical
	// cube (see Add for the one caveat across architectures).
	Seed uint64
}

// Resolve returns s with the defaults of the parts that are on filled in.
func (s Spec) Resolve() Spec {
	if s.StripeBands > 0 {
		if s.StripeColumns.IsZero() {
			s.StripeColumns = Range{DefaultStripeColumnsLo, DefaultStripeColumnsHi}
		}
		if s.StripeAmplitude == 0 {
			s.StripeAmplitude = DefaultStripeAmplitude
		}
	}
	if s.ImpulseBands > 0 && s.ImpulseDensity == 0 {
		s.ImpulseDensity = DefaultImpulseDensity
	}
	if (s.DeadColumnBands > 0 || s.DeadLineBands > 0) && s.DeadFraction.IsZero() {
		s.DeadFraction = Range{DefaultDeadLo, DefaultDeadHi}
	}
	return s
}

// Validate returns an *option.Error naming the flag of the first bad field
// of s, or nil. It checks s as given; Simulate validates s.Resolve().
func (s Spec) Validate() error {
	if !(s.Sigma >= 0) || math.IsInf(s.Sigma, 1) {
		return option.Errorf("sigma", s.Sigma, "noise standard deviation must be finite and at least 0, got %g", s.Sigma)
	}
	if !s.SigmaRange.IsZero() {
		if err := s.SigmaRange.check("sigma-range", math.Inf(1)); err != nil {
			return err
		}
		if s.Sigma != 0 {
			return option.Errorf("sigma-range", s.SigmaRange.String(), "a σ range %s and a single σ %g cannot both be given", s.SigmaRange, s.Sigma)
		}
	}
	if s.PoissonGaussian != nil {
		for _, l := range s.PoissonGaussian {
			if err := l.check("noise-params"); err != nil {
				return err
			}
		}
		if s.Sigma != 0 || !s.SigmaRange.IsZero() {
			return option.Errorf("noise-params", Levels(s.PoissonGaussian), "Poisson-Gaussian noise parameters and a σ cannot both be given")
		}
	} else if s.GaussianTwin {
		return option.Errorf("gaussian-twin", true, "the Gaussian twin needs the Poisson-Gaussian noise parameters it has the power of")
	}
	if !(s.StripeBands >= 0 && s.StripeBands <= 1) {
		return option.Errorf("stripes", s.StripeBands, "the fraction of striped bands must be in [0, 1], got %g", s.StripeBands)
	}
	if err := s.StripeColumns.check("stripe-columns", 1); err != nil {
		return err
	}
	if !(s.StripeAmplitude >= 0) || math.IsInf(s.StripeAmplitude, 1) {
		return option.Errorf("stripe-amplitude", s.StripeAmplitude, "stripe amplitude must be finite and at least 0, got %g", s.StripeAmplitude)
	}
	if !(s.ImpulseBands >= 0 && s.ImpulseBands <= 1) {
		return option.Errorf("impulse", s.ImpulseBands, "the fraction of impulse bands must be in [0, 1], got %g", s.ImpulseBands)
	}
	if !(s.ImpulseDensity >= 0 && s.ImpulseDensity <= 1) {
		return option.Errorf("impulse-density", s.ImpulseDensity, "impulse density must be in [0, 1], got %g", s.ImpulseDensity)
	}
	if !(s.DeadColumnBands >= 0 && s.DeadColumnBands <= 1) {
		return option.Errorf("dead-columns", s.DeadColumnBands, "the fraction of bands with dead columns must be in [0, 1], got %g", s.DeadColumnBands)
	}
	if !(s.DeadLineBands >= 0 && s.DeadLineBands <= 1) {
		return option.Errorf("dead-lines", s.DeadLineBands, "the fraction of bands with dead lines must be in [0, 1], got %g", s.DeadLineBands)
	}
	return s.DeadFraction.check("dead-fraction", 1)
}

// String describes s.Resolve() in one line, for a cube's Description: for
// example "Gaussian noise σ uniform in 10:70 per band, seed 1; stripes on
// 0.2 of the bands (0.1:0.2 of the columns, amplitude 63.75); impulses on
// 0.1 of the bands (density 0.1)".
func (s Spec) String() string {
	s = s.Resolve()
	var b strings.Builder
	b.WriteString(s.baseString())
	fmt.Fprintf(&b, ", seed %d", s.Seed)
	if s.StripeBands > 0 {
		fmt.Fprintf(&b, "; stripes on %g of the bands (%s of the columns, amplitude %g)", s.StripeBands, s.StripeColumns, s.StripeAmplitude)
	}
	if s.ImpulseBands > 0 {
		fmt.Fprintf(&b, "; impulses on %g of the bands (density %g)", s.ImpulseBands, s.ImpulseDensity)
	}
	if s.DeadColumnBands > 0 {
		fmt.Fprintf(&b, "; dead columns on %g of the bands (%s of the columns)", s.DeadColumnBands, s.DeadFraction)
	}
	if s.DeadLineBands > 0 {
		fmt.Fprintf(&b, "; dead lines on %g of the bands (%s of the lines)", s.DeadLineBands, s.DeadFraction)
	}
	return b.String()
}

// baseString describes the Gaussian or Poisson-Gaussian part of s.
func (s Spec) baseString() string {
	switch {
	case s.PoissonGaussian != nil && s.GaussianTwin:
		return "i.i.d. Gaussian noise of the mean power of Poisson-Gaussian noise with " + Levels(s.PoissonGaussian).String()
	case s.PoissonGaussian != nil:
		return "Poisson-Gaussian noise a·Poisson(x/a) + N(0, b) with " + Levels(s.PoissonGaussian).String()
	case s.SigmaRange.IsZero():
		return fmt.Sprintf("Gaussian noise σ = %g", s.Sigma)
	}
	return fmt.Sprintf("Gaussian noise σ uniform in %s per band", s.SigmaRange)
}

// Applied is what Simulate drew: the ground truth of the noise, for
// measuring estimators and denoisers.
type Applied struct {
	// Sigmas is the standard deviation of the Gaussian noise of every
	// band (of Poisson-Gaussian noise, its Gaussian part's, √B).
	Sigmas []float64
	// Levels is the Poisson-Gaussian noise level of every band; nil when
	// the noise is Gaussian.
	Levels []Level
	// EqualPower is the σ of i.i.d. Gaussian noise of the mean power of
	// Poisson-Gaussian noise (EqualPowerSigma), set when the Spec had
	// PoissonGaussian (the σ of the twin's noise with GaussianTwin).
	EqualPower float64
	// StripeBands, ImpulseBands, DeadColumnBands and DeadLineBands list
	// the bands (0-based) that got each part, ascending (in the order
	// drawn for a Case); nil when that part is off.
	StripeBands, ImpulseBands, DeadColumnBands, DeadLineBands []int
	// StripeColumns[i] is the number of striped columns of StripeBands[i].
	StripeColumns []int
	// ImpulseDensities[i] is the impulse density of ImpulseBands[i], and
	// ImpulsePixels[i] the number of its pixels that were replaced.
	ImpulseDensities []float64
	ImpulsePixels    []int
	// DeadColumns[i] is the number of dead columns of DeadColumnBands[i],
	// DeadLines[i] the number of dead lines of DeadLineBands[i].
	DeadColumns, DeadLines []int
}

// Simulate sets dst to src plus the noise spec describes and returns dst and
// what was drawn. If dst is nil a new cube (with src's wavelengths) is
// allocated; dst may be src itself. The result is not clipped (impulses are
// exactly 0 or 255). It returns spec.Resolve().Validate()'s error, with dst
// untouched, for a bad spec, and panics if dst and src differ in size.
//
// The Gaussian part draws one value per voxel in Data order from Add's
// stream, so with SigmaRange unset and no stripes or impulses the cube is
// bit-identical to Add(dst, src, spec.Sigma, spec.Seed). The band σs come
// from a second stream (one Float64 per band, in band order), the stripes
// from a third, the impulses from a fourth and the dead columns and lines
// from a fifth and a sixth.
func Simulate(dst, src *msi.Cube, spec Spec) (*msi.Cube, *Applied, error) {
	spec = spec.Resolve()
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	dst, applied, err := addBase(dst, src, spec)
	if err != nil {
		return nil, nil, err
	}
	n := src.Height * src.Width

	if spec.StripeBands > 0 {
		rng := rand.New(rand.NewPCG(spec.Seed, stripeStream))
		applied.StripeBands = chooseBands(rng, spec.StripeBands, src.Bands)
		lo := max(1, int(math.Round(spec.StripeColumns.Lo*float64(src.Width))))
		hi := max(lo, int(math.Round(spec.StripeColumns.Hi*float64(src.Width))))
		for _, b := range applied.StripeBands {
			k := lo + rng.IntN(hi-lo+1)
			applied.StripeColumns = append(applied.StripeColumns, k)
			addStripes(rng, dst, b, k, spec.StripeAmplitude)
		}
	}

	if spec.ImpulseBands > 0 {
		rng := rand.New(rand.NewPCG(spec.Seed, impulseStream))
		applied.ImpulseBands = chooseBands(rng, spec.ImpulseBands, src.Bands)
		m := int(math.Round(spec.ImpulseDensity * float64(n)))
		for _, b := range applied.ImpulseBands {
			applied.ImpulseDensities = append(applied.ImpulseDensities, spec.ImpulseDensity)
			applied.ImpulsePixels = append(applied.ImpulsePixels, m)
			band := dst.Band(b)
			for _, i := range rng.Perm(n)[:m] {
				band[i] = 0
				if rng.IntN(2) == 1 {
					band[i] = 255
				}
			}
		}
	}

	if spec.DeadColumnBands > 0 {
		rng := rand.New(rand.NewPCG(spec.Seed, deadColStream))
		applied.DeadColumnBands = chooseBands(rng, spec.DeadColumnBands, src.Bands)
		applied.DeadColumns = killColumns(rng, dst, applied.DeadColumnBands, spec.DeadFraction)
	}
	if spec.DeadLineBands > 0 {
		rng := rand.New(rand.NewPCG(spec.Seed, deadRowStream))
		applied.DeadLineBands = chooseBands(rng, spec.DeadLineBands, src.Bands)
		applied.DeadLines = killLines(rng, dst, applied.DeadLineBands, spec.DeadFraction)
	}
	return dst, applied, nil
}

// addBase sets dst to src plus the Gaussian or Poisson-Gaussian noise of
// spec (valid and resolved) and returns dst and what was drawn. Bad
// Poisson-Gaussian levels for the cube (neither one nor one per band) are
// an *option.Error, with dst untouched.
func addBase(dst, src *msi.Cube, spec Spec) (*msi.Cube, *Applied, error) {
	if spec.PoissonGaussian == nil {
		applied := &Applied{Sigmas: bandSigmas(spec, src.Bands)}
		return addBandGaussian(dst, src, applied.Sigmas, spec.Seed), applied, nil
	}
	levels, err := ExpandLevels("noise-params", spec.PoissonGaussian, src.Bands)
	if err != nil {
		return nil, nil, err
	}
	// Before dst is written: dst may be src.
	applied := &Applied{EqualPower: EqualPowerSigma(src, levels)}
	if spec.GaussianTwin {
		applied.Sigmas = slices.Repeat([]float64{applied.EqualPower}, src.Bands)
		return addBandGaussian(dst, src, applied.Sigmas, spec.Seed), applied, nil
	}
	applied.Levels = levels
	applied.Sigmas = make([]float64, src.Bands)
	for b, l := range levels {
		applied.Sigmas[b] = math.Sqrt(l.B)
	}
	return addPoissonGaussian(dst, src, levels, spec.Seed), applied, nil
}

// bandSigmas returns the Gaussian σ of every band: spec.Sigma, or uniform
// draws from spec.SigmaRange.
func bandSigmas(spec Spec, bands int) []float64 {
	sigmas := make([]float64, bands)
	if spec.SigmaRange.IsZero() {
		for b := range sigmas {
			sigmas[b] = spec.Sigma
		}
		return sigmas
	}
	rng := rand.New(rand.NewPCG(spec.Seed, sigmaStream))
	r := spec.SigmaRange
	for b := range sigmas {
		sigmas[b] = r.Lo + (r.Hi-r.Lo)*rng.Float64()
	}
	return sigmas
}

// chooseBands returns round(fraction·bands) (at least 1) distinct bands in
// ascending order, chosen uniformly at random.
func chooseBands(rng *rand.Rand, fraction float64, bands int) []int {
	k := min(bands, max(1, int(math.Round(fraction*float64(bands)))))
	chosen := rng.Perm(bands)[:k]
	slices.Sort(chosen)
	return chosen
}

// addStripes adds, to k distinct columns of band b of c chosen at random,
// one offset each drawn uniformly from [−amplitude, amplitude], over the
// whole height of the column.
func addStripes(rng *rand.Rand, c *msi.Cube, b, k int, amplitude float64) {
	band := c.Band(b)
	for _, x := range rng.Perm(c.Width)[:k] {
		offset := amplitude * (2*rng.Float64() - 1)
		for y := range c.Height {
			band[y*c.Width+x] += offset
		}
	}
}

// ceilCount draws a number of columns (lines) out of n uniformly from the
// integers ceil(fraction.Lo·n) … ceil(fraction.Hi·n), at least 1.
func ceilCount(rng *rand.Rand, fraction Range, n int) int {
	lo := max(1, int(math.Ceil(fraction.Lo*float64(n))))
	hi := max(lo, int(math.Ceil(fraction.Hi*float64(n))))
	return lo + rng.IntN(hi-lo+1)
}

// killColumns sets, in every band of bands, a ceilCount of distinct
// columns chosen at random to 0, and returns the counts.
func killColumns(rng *rand.Rand, c *msi.Cube, bands []int, fraction Range) []int {
	counts := make([]int, len(bands))
	for i, b := range bands {
		counts[i] = ceilCount(rng, fraction, c.Width)
		band := c.Band(b)
		for _, x := range rng.Perm(c.Width)[:counts[i]] {
			for y := range c.Height {
				band[y*c.Width+x] = 0
			}
		}
	}
	return counts
}

// killLines is killColumns for lines (rows).
func killLines(rng *rand.Rand, c *msi.Cube, bands []int, fraction Range) []int {
	counts := make([]int, len(bands))
	for i, b := range bands {
		counts[i] = ceilCount(rng, fraction, c.Height)
		band := c.Band(b)
		for _, y := range rng.Perm(c.Height)[:counts[i]] {
			clear(band[y*c.Width : (y+1)*c.Width])
		}
	}
	return counts
}

// Lines says what was drawn, one line per part, with 1-based band numbers:
// the σ of every band (left out when all bands have the same σ), then the
// bands of every sparse part with their column, line or pixel counts. A
// command prints them on stderr and records them in the output's
// description.
func (a *Applied) Lines() []string {
	var lines []string
	if a.EqualPower > 0 {
		lines = append(lines, fmt.Sprintf("mean noise power a·x + b over the clean cube: that of i.i.d. Gaussian noise of σ = %.6g", a.EqualPower))
	}
	if len(a.Levels) > 0 && slices.ContainsFunc(a.Levels, func(l Level) bool { return l != a.Levels[0] }) {
		lines = append(lines, Levels(a.Levels).String())
	} else if len(a.Levels) == 0 && len(a.Sigmas) > 0 && slices.ContainsFunc(a.Sigmas, func(s float64) bool { return s != a.Sigmas[0] }) {
		parts := make([]string, len(a.Sigmas))
		for i, s := range a.Sigmas {
			parts[i] = strconv.FormatFloat(s, 'f', 2, 64)
		}
		lines = append(lines, "σ per band: "+strings.Join(parts, " "))
	}
	bandList := func(what string, bands []int, detail func(i int) string) {
		if len(bands) == 0 {
			return
		}
		parts := make([]string, len(bands))
		for i, b := range bands {
			parts[i] = fmt.Sprintf("%d (%s)", b+1, detail(i))
		}
		lines = append(lines, what+" in bands "+strings.Join(parts, ", "))
	}
	bandList("stripes", a.StripeBands, func(i int) string { return fmt.Sprintf("%d columns", a.StripeColumns[i]) })
	bandList("impulses", a.ImpulseBands, func(i int) string {
		return fmt.Sprintf("density %g, %d pixels", a.ImpulseDensities[i], a.ImpulsePixels[i])
	})
	bandList("dead columns", a.DeadColumnBands, func(i int) string { return fmt.Sprintf("%d columns", a.DeadColumns[i]) })
	bandList("dead lines", a.DeadLineBands, func(i int) string { return fmt.Sprintf("%d lines", a.DeadLines[i]) })
	return lines
}
