package noise

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"tdsc/internal/msi"
	"tdsc/internal/option"
)

// Signal-dependent noise. A sensor that counts photons has, in every band,
// noise whose variance grows with the signal: σ²(x) = A·x + B on the
// working [0, 255] scale, A the gain (working units per counted
// photo-electron) and B the variance of the read noise. Its usual model,
// the Poisson-Gaussian one, is
//
//	y = A·Poisson(x/A) + N(0, B),
//
// which for A = 0 is Gaussian noise of variance B. addPoissonGaussian
// draws it: the Poisson counts from a PCG stream of their own
// (poissonStream), the Gaussian part from Add's stream, one value of each
// per voxel in Data order; so the Gaussian part is Add's noise scaled to
// √B, and the sparse parts of Simulate and SimulateCase, each from its own
// stream, are the same over Poisson-Gaussian noise as over Gaussian noise
// of the same seed.

// poissonStream is the PCG stream of the Poisson counts.
const poissonStream = pcgStream ^ 7

// Level is the noise-level function of one band, σ²(x) = A·x + B on the
// working [0, 255] scale: A ≥ 0 the gain, B ≥ 0 the variance of the
// signal-independent (read) noise.
type Level struct{ A, B float64 }

// Variance returns the noise variance A·x + B of a clean value x, with a
// negative x taken as 0 (no photons).
func (l Level) Variance(x float64) float64 { return l.A*max(x, 0) + l.B }

// String formats l as "a = A, b = B".
func (l Level) String() string { return fmt.Sprintf("a = %g, b = %g", l.A, l.B) }

// check returns an *option.Error for field unless l's A and B are finite
// and at least 0.
func (l Level) check(field string) error {
	if !(l.A >= 0) || !(l.B >= 0) || math.IsInf(l.A, 1) || math.IsInf(l.B, 1) {
		return option.Errorf(field, l.String(), "noise parameters must be finite and at least 0, got %s", l)
	}
	return nil
}

// ExpandLevels returns levels with one element per band of a cube of the
// given number of bands: one Level for every band, or one per band. A
// length that is neither is an *option.Error for field.
func ExpandLevels(field string, levels []Level, bands int) ([]Level, error) {
	switch len(levels) {
	case bands:
		return levels, nil
	case 1:
		out := make([]Level, bands)
		for b := range out {
			out[b] = levels[0]
		}
		return out, nil
	}
	return nil, option.Errorf(field, len(levels), "%d pairs of noise parameters for a cube of %d bands: give one pair for every band or one per band", len(levels), bands)
}

// ParseLevel reads one pair of noise parameters written "A,B" (for example
// "2,16"), both finite and at least 0. A bad pair is an *option.Error for
// field.
func ParseLevel(field, s string) (Level, error) {
	as, bs, ok := strings.Cut(s, ",")
	if !ok {
		return Level{}, option.Errorf(field, s, "noise parameters %q are not of the form A,B (gain, read-noise variance)", s)
	}
	a, err1 := strconv.ParseFloat(strings.TrimSpace(as), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(bs), 64)
	if err1 != nil || err2 != nil {
		return Level{}, option.Errorf(field, s, "noise parameters %q are not two numbers A,B", s)
	}
	l := Level{a, b}
	return l, l.check(field)
}

// ReadLevels reads the noise parameters of a flag (field) that names
// either one pair "A,B" (every band's) or a text file of one pair per band:
// a line per band, in band order, "A B" or "A,B"; blank lines and text
// after '#' are skipped. Errors name the file and line.
func ReadLevels(field, s string) ([]Level, error) {
	if l, err := ParseLevel(field, s); err == nil {
		return []Level{l}, nil
	} else if _, statErr := os.Stat(s); statErr != nil {
		// Neither a pair nor a file: say what a pair looks like.
		return nil, err
	}
	f, err := os.Open(s)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var levels []Level
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(strings.ReplaceAll(line, ",", " "))
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want two numbers A B (gain, read-noise variance), got %q", s, n, strings.TrimSpace(line))
		}
		l, err := ParseLevel(field, fields[0]+","+fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", s, n, err)
		}
		levels = append(levels, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	if len(levels) == 0 {
		return nil, fmt.Errorf("%s: no noise parameters (want one line A B per band)", s)
	}
	return levels, nil
}

// EqualPowerSigma returns the σ of i.i.d. Gaussian noise with the mean
// power of the Poisson-Gaussian noise levels (one per band) give a clean
// cube: σ² = the mean over its voxels with data (NaN left out) of
// levels[b].Variance(x). It panics if len(levels) is not c.Bands.
func EqualPowerSigma(c *msi.Cube, levels []Level) float64 {
	if len(levels) != c.Bands {
		panic(fmt.Sprintf("noise: %d levels for %d bands", len(levels), c.Bands))
	}
	var sum float64
	var n int
	for b, l := range levels {
		for _, x := range c.Band(b) {
			if !math.IsNaN(x) {
				sum += l.Variance(x)
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return math.Sqrt(sum / float64(n))
}

// addPoissonGaussian sets dst (allocated with src's wavelengths when nil;
// it may be src) to y = A·Poisson(x/A) + N(0, B) with band b's levels[b]
// (x + N(0, B) where A = 0; a negative x counts no photons and a NaN stays
// NaN), and returns dst. The counts come from poissonStream, the Gaussian
// values from Add's stream, one of each per voxel in Data order (a voxel
// of a band with A = 0 draws no count).
func addPoissonGaussian(dst, src *msi.Cube, levels []Level, seed uint64) *msi.Cube {
	dst = newLike(dst, src)
	gauss := rand.New(rand.NewPCG(seed, pcgStream))
	counts := rand.NewPCG(seed, poissonStream)
	n := src.Height * src.Width
	for b, l := range levels {
		in, out := src.Data[b*n:(b+1)*n], dst.Data[b*n:(b+1)*n]
		sd := math.Sqrt(l.B)
		for i, x := range in {
			z := gauss.NormFloat64()
			if math.IsNaN(x) {
				out[i] = x
				continue
			}
			signal := x
			if l.A > 0 {
				// gonum's Poisson: Knuth's product method below λ = 10,
				// Hörmann's transformed rejection (PTRS) above, both
				// exact; it draws from counts and nothing else.
				signal = l.A * distuv.Poisson{Lambda: max(x, 0) / l.A, Src: counts}.Rand()
			}
			out[i] = signal + float64(sd*z)
		}
	}
	return dst
}

// Levels are the noise levels of the bands of a cube, or one Level for
// every band.
type Levels []Level

// String formats the levels as "a = A, b = B" when they are all the same,
// else as "a,b per band: A,B A,B …".
func (ls Levels) String() string {
	if len(ls) == 0 {
		return ""
	}
	same := true
	for _, l := range ls {
		same = same && l == ls[0]
	}
	if same {
		return ls[0].String()
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = strconv.FormatFloat(l.A, 'g', 4, 64) + "," + strconv.FormatFloat(l.B, 'g', 4, 64)
	}
	return "a,b per band: " + strings.Join(parts, " ")
}
