package noise

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"tdsc/internal/msi"
	"tdsc/internal/option"
)

// Case is one of the five "complex noise" cases of QRNN3D (Wei, Fu and
// Huang, TNNLS 2020), the benchmark that hyperspectral denoising papers
// since report. The definitions are those of QRNN3D's MATLAB generators of
// its ICVL test sets (generate_dataset_noniid, _stripe, _deadline, _impulse
// and _mixture), on the [0, 255] scale, with W the width and B the number
// of bands:
//
//   - every case starts from non-i.i.d. Gaussian noise: every band's σ
//     drawn uniformly, with replacement, from {10, 30, 50, 70};
//   - CaseStripe adds stripes to min(10, B) bands chosen at random: in
//     each, k columns (k uniform in the integers ceil(0.05·W) … ceil(0.15·W))
//     offset, over their whole height, by one value per column uniform in
//     [−63.75, 63.75];
//   - CaseDeadline sets k columns (k as for stripes) of min(10, B) bands to 0;
//   - CaseImpulse adds salt-and-pepper noise to min(10, B) bands: each
//     band's density d is drawn from {0.1, 0.3, 0.5, 0.7}, and every pixel
//     independently becomes 0 with probability d/2 and 255 with
//     probability d/2 (MATLAB's imnoise, without its clipping to the
//     range: nothing here is clipped);
//   - CaseMixture splits a random permutation of the bands into thirds of
//     floor(B/3) bands: stripes on the first, dead columns on the second,
//     impulses on the third (disjoint band sets).
//
// "10 bands" for the single-part cases and B/3 for the mixture agree for
// B = 31 (CAVE, ICVL); for other B the two rules are kept as QRNN3D's test
// generators have them, so a cube of fewer than 10 bands gets every band
// corrupted in CaseStripe … CaseImpulse. The mixture needs at least 3
// bands (one per part); SimulateCase refuses fewer.
//
// The random numbers are this package's PCG streams, not MATLAB's or
// numpy's: a cube made here has the same distributions as QRNN3D's, not
// the same numbers. Every part draws from its own stream of the seed (the
// band σs, the Gaussian noise, the stripes, the dead columns, the impulses
// and the mixture's band split), so the five cases of one seed share the
// same Gaussian noise, and the sparse part alone tells them apart.
type Case int

// The five cases, numbered as QRNN3D numbers them.
const (
	CaseNonIID Case = 1 + iota
	CaseStripe
	CaseDeadline
	CaseImpulse
	CaseMixture
)

// caseNames are the names ParseCase accepts besides the numbers, QRNN3D's
// own names of the cases.
var caseNames = [...]string{CaseNonIID: "noniid", CaseStripe: "stripe", CaseDeadline: "deadline", CaseImpulse: "impulse", CaseMixture: "mixture"}

// The constants of the cases, on the [0, 255] scale.
var (
	caseSigmas    = []float64{10, 30, 50, 70}
	caseDensities = []float64{0.1, 0.3, 0.5, 0.7}
	caseColumns   = Range{0.05, 0.15}
)

const (
	// caseBands is the number of corrupted bands of the single-part cases.
	caseBands = 10
	// caseStripeAmplitude is QRNN3D's ±0.25 on [0, 1].
	caseStripeAmplitude = 0.25 * 255
)

// CaseNames returns the names of the cases in the order of their numbers
// (noniid, stripe, deadline, impulse, mixture), for help and shell
// completion.
func CaseNames() []string { return slices.Clone(caseNames[1:]) }

// ParseCase reads a case given as its number 1 … 5 or its name (noniid,
// stripe, deadline, impulse, mixture). A bad one is an *option.Error for
// field, the flag the text came from.
func ParseCase(field, s string) (Case, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(caseNames)-1 {
		return Case(n), nil
	}
	for c, name := range caseNames {
		if c > 0 && s == name {
			return Case(c), nil
		}
	}
	return 0, option.Errorf(field, s, "unknown case %q: want 1–5 or noniid, stripe, deadline, impulse, mixture", s)
}

// Name is the case's QRNN3D name, for example "stripe".
func (c Case) Name() string {
	if c < CaseNonIID || c > CaseMixture {
		return fmt.Sprintf("Case(%d)", int(c))
	}
	return caseNames[c]
}

// String describes the case in one line, for a cube's Description.
func (c Case) String() string {
	if c < CaseNonIID || c > CaseMixture {
		return c.Name()
	}
	s := fmt.Sprintf("QRNN3D complex noise case %d (%s): σ per band from 10, 30, 50, 70", int(c), c.Name())
	if c != CaseNonIID {
		s += "; " + c.Sparse()
	}
	return s
}

// Sparse describes the sparse part of the case in a few words ("" for
// CaseNonIID), for example "stripes on 10 bands".
func (c Case) Sparse() string {
	switch c {
	case CaseStripe:
		return "stripes on 10 bands"
	case CaseDeadline:
		return "dead columns on 10 bands"
	case CaseImpulse:
		return "salt and pepper on 10 bands"
	case CaseMixture:
		return "stripes, dead columns and salt and pepper on three disjoint thirds of the bands"
	}
	return ""
}

// SimulateCase sets dst to src plus the noise of case c (see Case) drawn
// from seed and returns dst and what was drawn. dst may be nil (a new cube
// with src's wavelengths) or src itself. The result is not clipped. It
// returns an *option.Error for field "case" for an unknown case or a
// mixture of fewer than 3 bands, with dst untouched, and panics if dst and
// src differ in size.
func SimulateCase(dst, src *msi.Cube, c Case, seed uint64) (*msi.Cube, *Applied, error) {
	return simulateCase(dst, src, c, nil, seed)
}

// SimulateCaseOver is SimulateCase with the case's non-i.i.d. Gaussian
// noise replaced by the noise base describes (Gaussian of one σ or of a σ
// range, or Poisson-Gaussian; base.Seed is the seed of every part): the
// case's sparse part, drawn as SimulateCase draws it from the same seed,
// over another noise. base must describe no sparse part (an
// *option.Error for "case" says so) and be valid (Spec.Validate).
func SimulateCaseOver(dst, src *msi.Cube, c Case, base Spec) (*msi.Cube, *Applied, error) {
	if base.StripeBands != 0 || base.ImpulseBands != 0 || base.DeadColumnBands != 0 || base.DeadLineBands != 0 {
		return nil, nil, option.Errorf("case", c.Name(), "a case sets the sparse part of the noise: no stripes, impulses or dead lines besides it")
	}
	if err := base.Validate(); err != nil {
		return nil, nil, err
	}
	return simulateCase(dst, src, c, &base, base.Seed)
}

// simulateCase is SimulateCase over the case's own Gaussian noise (base
// nil) or base's.
func simulateCase(dst, src *msi.Cube, c Case, base *Spec, seed uint64) (*msi.Cube, *Applied, error) {
	if c < CaseNonIID || c > CaseMixture {
		return nil, nil, option.Errorf("case", int(c), "unknown case %d: want 1–5", int(c))
	}
	if c == CaseMixture && src.Bands < 3 {
		return nil, nil, option.Errorf("case", c.Name(), "the mixture case needs at least 3 bands (one third each for stripes, dead columns and impulses), the cube has %d", src.Bands)
	}
	var applied *Applied
	if base == nil {
		sigmaRNG := rand.New(rand.NewPCG(seed, sigmaStream))
		sigmas := make([]float64, src.Bands)
		for b := range sigmas {
			sigmas[b] = caseSigmas[sigmaRNG.IntN(len(caseSigmas))]
		}
		dst = addBandGaussian(dst, src, sigmas, seed)
		applied = &Applied{Sigmas: sigmas}
	} else {
		var err error
		if dst, applied, err = addBase(dst, src, *base); err != nil {
			return nil, nil, err
		}
	}

	stripeRNG := rand.New(rand.NewPCG(seed, stripeStream))
	deadRNG := rand.New(rand.NewPCG(seed, deadColStream))
	impulseRNG := rand.New(rand.NewPCG(seed, impulseStream))
	var stripeBands, deadBands, impulseBands []int
	single := min(caseBands, src.Bands)
	switch c {
	case CaseStripe:
		stripeBands = stripeRNG.Perm(src.Bands)[:single]
	case CaseDeadline:
		deadBands = deadRNG.Perm(src.Bands)[:single]
	case CaseImpulse:
		impulseBands = impulseRNG.Perm(src.Bands)[:single]
	case CaseMixture:
		all := rand.New(rand.NewPCG(seed, partStream)).Perm(src.Bands)
		third := src.Bands / 3
		stripeBands, deadBands, impulseBands = all[:third], all[third:2*third], all[2*third:3*third]
	}
	for _, b := range stripeBands {
		k := ceilCount(stripeRNG, caseColumns, src.Width)
		applied.StripeBands = append(applied.StripeBands, b)
		applied.StripeColumns = append(applied.StripeColumns, k)
		addStripes(stripeRNG, dst, b, k, caseStripeAmplitude)
	}
	if deadBands != nil {
		applied.DeadColumnBands = slices.Clone(deadBands)
		applied.DeadColumns = killColumns(deadRNG, dst, deadBands, caseColumns)
	}
	for _, b := range impulseBands {
		d := caseDensities[impulseRNG.IntN(len(caseDensities))]
		band := dst.Band(b)
		replaced := 0
		for i := range band {
			switch u := impulseRNG.Float64(); {
			case u < d/2:
				band[i] = 0
				replaced++
			case u < d:
				band[i] = 255
				replaced++
			}
		}
		applied.ImpulseBands = append(applied.ImpulseBands, b)
		applied.ImpulseDensities = append(applied.ImpulseDensities, d)
		applied.ImpulsePixels = append(applied.ImpulsePixels, replaced)
	}
	return dst, applied, nil
}

// addBandGaussian sets dst (allocated with src's wavelengths when nil; it
// may be src) to src plus Gaussian noise of standard deviation sigmas[b] in
// band b, drawn from Add's stream one value per voxel in Data order, and
// returns dst. Add is the case of one σ for every band.
func addBandGaussian(dst, src *msi.Cube, sigmas []float64, seed uint64) *msi.Cube {
	dst = newLike(dst, src)
	rng := rand.New(rand.NewPCG(seed, pcgStream))
	n := src.Height * src.Width
	for b, sigma := range sigmas {
		in, out := src.Data[b*n:(b+1)*n], dst.Data[b*n:(b+1)*n]
		for i, v := range in {
			// The conversion forbids fusing the product into an FMA, which
			// some architectures would otherwise do, changing the last bit.
			out[i] = v + float64(sigma*rng.NormFloat64())
		}
	}
	return dst
}

// newLike returns dst, or when it is nil a new cube of src's size with
// src's wavelengths. It panics if dst and src differ in size.
func newLike(dst, src *msi.Cube) *msi.Cube {
	if dst == nil {
		dst = msi.NewCube(src.Height, src.Width, src.Bands)
		if src.Wavelengths != nil {
			dst.Wavelengths = append([]float64(nil), src.Wavelengths...)
		}
	} else if !dst.SameSize(src) {
		panic(fmt.Sprintf("noise: destination is %s, source is %s", dst.Size(), src.Size()))
	}
	return dst
}
