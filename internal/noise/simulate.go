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
// bands and salt-and-pepper impulses on some bands. Simulate adds them in
// that order; every part draws from its own PCG stream of the one seed, so
// switching stripes or impulses on or off leaves the Gaussian noise (and the
// other part) unchanged, and a Spec with a single σ and nothing else gives
// exactly Add's cube.

// The PCG streams of the parts of Simulate besides the Gaussian noise
// itself, which uses Add's pcgStream.
const (
	sigmaStream   = pcgStream ^ 1
	stripeStream  = pcgStream ^ 2
	impulseStream = pcgStream ^ 3
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
	return nil
}

// String describes s.Resolve() in one line, for a cube's Description: for
// example "Gaussian noise σ uniform in 10:70 per band, seed 1; stripes on
// 0.2 of the bands (0.1:0.2 of the columns, amplitude 63.75); impulses on
// 0.1 of the bands (density 0.1)".
func (s Spec) String() string {
	s = s.Resolve()
	var b strings.Builder
	if s.SigmaRange.IsZero() {
		fmt.Fprintf(&b, "Gaussian noise σ = %g", s.Sigma)
	} else {
		fmt.Fprintf(&b, "Gaussian noise σ uniform in %s per band", s.SigmaRange)
	}
	fmt.Fprintf(&b, ", seed %d", s.Seed)
	if s.StripeBands > 0 {
		fmt.Fprintf(&b, "; stripes on %g of the bands (%s of the columns, amplitude %g)", s.StripeBands, s.StripeColumns, s.StripeAmplitude)
	}
	if s.ImpulseBands > 0 {
		fmt.Fprintf(&b, "; impulses on %g of the bands (density %g)", s.ImpulseBands, s.ImpulseDensity)
	}
	return b.String()
}

// Applied is what Simulate drew: the ground truth of the noise, for
// measuring estimators and denoisers.
type Applied struct {
	// Sigmas is the standard deviation of the Gaussian noise of every band.
	Sigmas []float64
	// StripeBands and ImpulseBands list the bands (0-based, ascending) that
	// got stripes and impulses; nil when that part is off.
	StripeBands, ImpulseBands []int
	// StripeColumns[i] is the number of striped columns of StripeBands[i].
	StripeColumns []int
	// ImpulsePixels is the number of pixels replaced in every impulse band.
	ImpulsePixels int
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
// from a third and the impulses from a fourth.
func Simulate(dst, src *msi.Cube, spec Spec) (*msi.Cube, *Applied, error) {
	spec = spec.Resolve()
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	if dst == nil {
		dst = msi.NewCube(src.Height, src.Width, src.Bands)
		if src.Wavelengths != nil {
			dst.Wavelengths = append([]float64(nil), src.Wavelengths...)
		}
	} else if !dst.SameSize(src) {
		panic(fmt.Sprintf("noise: destination is %s, source is %s", dst.Size(), src.Size()))
	}
	applied := &Applied{Sigmas: bandSigmas(spec, src.Bands)}

	rng := rand.New(rand.NewPCG(spec.Seed, pcgStream))
	n := src.Height * src.Width
	for b, sigma := range applied.Sigmas {
		in, out := src.Data[b*n:(b+1)*n], dst.Data[b*n:(b+1)*n]
		for i, v := range in {
			// As in Add: the conversion forbids an FMA.
			out[i] = v + float64(sigma*rng.NormFloat64())
		}
	}

	if spec.StripeBands > 0 {
		rng := rand.New(rand.NewPCG(spec.Seed, stripeStream))
		applied.StripeBands = chooseBands(rng, spec.StripeBands, src.Bands)
		lo := max(1, int(math.Round(spec.StripeColumns.Lo*float64(src.Width))))
		hi := max(lo, int(math.Round(spec.StripeColumns.Hi*float64(src.Width))))
		for _, b := range applied.StripeBands {
			k := lo + rng.IntN(hi-lo+1)
			applied.StripeColumns = append(applied.StripeColumns, k)
			band := dst.Band(b)
			for _, x := range rng.Perm(src.Width)[:k] {
				offset := spec.StripeAmplitude * (2*rng.Float64() - 1)
				for y := range src.Height {
					band[y*src.Width+x] += offset
				}
			}
		}
	}

	if spec.ImpulseBands > 0 {
		rng := rand.New(rand.NewPCG(spec.Seed, impulseStream))
		applied.ImpulseBands = chooseBands(rng, spec.ImpulseBands, src.Bands)
		m := int(math.Round(spec.ImpulseDensity * float64(n)))
		applied.ImpulsePixels = m
		for _, b := range applied.ImpulseBands {
			band := dst.Band(b)
			for _, i := range rng.Perm(n)[:m] {
				band[i] = 0
				if rng.IntN(2) == 1 {
					band[i] = 255
				}
			}
		}
	}
	return dst, applied, nil
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
