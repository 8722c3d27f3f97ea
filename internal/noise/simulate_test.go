package noise

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/testenv/cubetest"
)

func mustSimulate(t *testing.T, src *msi.Cube, spec Spec) (*msi.Cube, *Applied) {
	t.Helper()
	out, applied, err := Simulate(nil, src, spec)
	if err != nil {
		t.Fatal(err)
	}
	return out, applied
}

func TestSimulateBandSigmas(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	src := cubetest.Uniform(rng, 192, 192, 12, 0, 255)
	spec := Spec{SigmaRange: Range{10, 70}, Seed: 9}
	noisy, applied := mustSimulate(t, src, spec)
	if len(applied.Sigmas) != src.Bands {
		t.Fatalf("%d band σs for %d bands", len(applied.Sigmas), src.Bands)
	}
	n := float64(src.Height * src.Width)
	lo, hi := math.Inf(1), math.Inf(-1)
	for b, sigma := range applied.Sigmas {
		if sigma < 10 || sigma > 70 {
			t.Errorf("band %d: σ %g outside 10:70", b, sigma)
		}
		lo, hi = min(lo, sigma), max(hi, sigma)
		var sum, sumSq float64
		for i, v := range noisy.Band(b) {
			e := v - src.Band(b)[i]
			sum += e
			sumSq += e * e
		}
		mean := sum / n
		std := math.Sqrt(sumSq/n - mean*mean)
		// Five standard errors of the sample deviation, σ/√(2n).
		if tol := 5 * sigma / math.Sqrt(2*n); math.Abs(std-sigma) > tol {
			t.Errorf("band %d: noise standard deviation %.4f, drawn σ %.4f (tolerance %.4f)", b, std, sigma, tol)
		}
		if tol := 5 * sigma / math.Sqrt(n); math.Abs(mean) > tol {
			t.Errorf("band %d: noise mean %.4f, want 0 within %.4f", b, mean, tol)
		}
	}
	// Twelve uniform draws from 10:70 spread over more than half the range.
	if hi-lo < 30 {
		t.Errorf("band σs span only %.2f–%.2f", lo, hi)
	}
}

func TestSimulateSingleSigmaIsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	src := cubetest.Uniform(rng, 21, 19, 7, 0, 255)
	want := Add(nil, src, 25, 77)
	got, applied := mustSimulate(t, src, Spec{Sigma: 25, Seed: 77})
	for i := range want.Data {
		if got.Data[i] != want.Data[i] {
			t.Fatalf("voxel %d: Simulate %v, Add %v", i, got.Data[i], want.Data[i])
		}
	}
	for b, s := range applied.Sigmas {
		if s != 25 {
			t.Errorf("band %d: σ %g, want 25", b, s)
		}
	}
	if applied.StripeBands != nil || applied.ImpulseBands != nil {
		t.Errorf("stripes %v and impulses %v with both off", applied.StripeBands, applied.ImpulseBands)
	}
}

func TestSimulateIsReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	src := cubetest.Uniform(rng, 24, 20, 10, 0, 255)
	spec := Spec{SigmaRange: Range{5, 50}, StripeBands: 0.3, ImpulseBands: 0.4, ImpulseDensity: 0.2, Seed: 3}
	a, appliedA := mustSimulate(t, src, spec)
	b, _ := mustSimulate(t, src, spec)
	inPlace := src.Clone()
	if got, _, _ := Simulate(inPlace, inPlace, spec); got != inPlace {
		t.Fatal("Simulate did not return dst")
	}
	for i := range a.Data {
		if a.Data[i] != b.Data[i] || a.Data[i] != inPlace.Data[i] {
			t.Fatalf("voxel %d: %v, %v and in place %v from one seed", i, a.Data[i], b.Data[i], inPlace.Data[i])
		}
	}
	spec.Seed = 4
	c, appliedC := mustSimulate(t, src, spec)
	same := 0
	for i := range a.Data {
		if a.Data[i] == c.Data[i] {
			same++
		}
	}
	// Only impulse pixels that both seeds set to the same extreme may agree.
	if same > len(a.Data)/20 {
		t.Errorf("seeds 3 and 4 give %d equal voxels of %d", same, len(a.Data))
	}
	for k := range appliedA.Sigmas {
		if appliedA.Sigmas[k] == appliedC.Sigmas[k] {
			t.Errorf("band %d: σ %g from both seeds", k, appliedA.Sigmas[k])
		}
	}
}

// TestSimulateStripes checks stripes against the same seed without them:
// exactly round(fraction·bands) bands change, each in as many whole columns
// as reported, within the column range, every column by one offset within
// the amplitude, and nothing else changes.
func TestSimulateStripes(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	const h, w, bands = 16, 50, 20
	src := cubetest.Uniform(rng, h, w, bands, 0, 255)
	base := Spec{SigmaRange: Range{10, 30}, Seed: 11}
	plain, _ := mustSimulate(t, src, base)
	for _, tc := range []struct {
		fraction  float64
		columns   Range
		amplitude float64
		bands     int
	}{
		{0.25, Range{}, 0, 5},
		{0.33, Range{0.3, 0.5}, 10, 7},
		{0.01, Range{0.02, 0.02}, 100, 1},
		{1, Range{1, 1}, 5, 20},
	} {
		spec := base
		spec.StripeBands, spec.StripeColumns, spec.StripeAmplitude = tc.fraction, tc.columns, tc.amplitude
		res := spec.Resolve()
		striped, applied := mustSimulate(t, src, spec)
		if len(applied.StripeBands) != tc.bands || len(applied.StripeColumns) != tc.bands {
			t.Errorf("fraction %g: striped bands %v (columns %v), want %d bands", tc.fraction, applied.StripeBands, applied.StripeColumns, tc.bands)
			continue
		}
		lo := max(1, int(math.Round(res.StripeColumns.Lo*w)))
		hi := int(math.Round(res.StripeColumns.Hi * w))
		isStriped := map[int]int{}
		for i, b := range applied.StripeBands {
			isStriped[b] = applied.StripeColumns[i]
		}
		for b := range bands {
			changed := 0
			for x := range w {
				offset := striped.At(0, x, b) - plain.At(0, x, b)
				for y := range h {
					if d := striped.At(y, x, b) - plain.At(y, x, b); math.Abs(d-offset) > 1e-9 {
						t.Fatalf("band %d column %d: offset %g at row 0, %g at row %d", b, x, offset, d, y)
					}
				}
				if offset != 0 {
					changed++
					if math.Abs(offset) > res.StripeAmplitude+1e-9 {
						t.Errorf("band %d column %d: offset %g beyond amplitude %g", b, x, offset, res.StripeAmplitude)
					}
				}
			}
			want, ok := isStriped[b]
			if !ok {
				want = 0
			} else if want < lo || want > hi {
				t.Errorf("band %d: %d stripes, outside %d…%d", b, want, lo, hi)
			}
			if changed != want {
				t.Errorf("fraction %g band %d: %d columns changed, want %d", tc.fraction, b, changed, want)
			}
		}
	}
}

// TestSimulateImpulses checks impulses against the same seed without them:
// exactly round(density·pixels) pixels of exactly round(fraction·bands)
// bands become 0 or 255, about half of each, and nothing else changes.
func TestSimulateImpulses(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	const h, w, bands = 40, 30, 10
	src := cubetest.Uniform(rng, h, w, bands, 0, 255)
	for i := range src.Data {
		src.Data[i] = 1 + 253*rng.Float64() // never exactly 0 or 255
	}
	base := Spec{Sigma: 0, StripeBands: 0.2, Seed: 13}
	plain, _ := mustSimulate(t, src, base)
	for _, tc := range []struct {
		fraction, density float64
		bands, pixels     int
	}{
		{0.3, 0, 3, 120}, // default density 0.1
		{0.5, 0.25, 5, 300},
		{1, 1, 10, 1200},
	} {
		spec := base
		spec.ImpulseBands, spec.ImpulseDensity = tc.fraction, tc.density
		out, applied := mustSimulate(t, src, spec)
		if len(applied.ImpulseBands) != tc.bands || len(applied.ImpulsePixels) != tc.bands ||
			slices.ContainsFunc(applied.ImpulsePixels, func(m int) bool { return m != tc.pixels }) {
			t.Errorf("fraction %g density %g: bands %v, pixels %v; want %d bands of %d pixels",
				tc.fraction, tc.density, applied.ImpulseBands, applied.ImpulsePixels, tc.bands, tc.pixels)
			continue
		}
		hit := map[int]bool{}
		for _, b := range applied.ImpulseBands {
			hit[b] = true
		}
		for b := range bands {
			changed, salt := 0, 0
			for i, v := range out.Band(b) {
				if v == plain.Band(b)[i] {
					continue
				}
				changed++
				switch v {
				case 255:
					salt++
				case 0:
				default:
					t.Fatalf("band %d pixel %d: %g is neither 0 nor 255", b, i, v)
				}
			}
			want := 0
			if hit[b] {
				want = tc.pixels
			}
			if changed != want {
				t.Errorf("band %d: %d pixels changed, want %d", b, changed, want)
			}
			// Binomial(changed, ½) within five standard deviations.
			if changed > 0 && math.Abs(float64(salt)-float64(changed)/2) > 5*math.Sqrt(float64(changed))/2 {
				t.Errorf("band %d: %d of %d impulses are 255", b, salt, changed)
			}
		}
	}
}

func TestSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		spec  Spec
		field string
	}{
		{Spec{Sigma: -1}, "sigma"},
		{Spec{Sigma: math.NaN()}, "sigma"},
		{Spec{Sigma: math.Inf(1)}, "sigma"},
		{Spec{SigmaRange: Range{20, 10}}, "sigma-range"},
		{Spec{SigmaRange: Range{-1, 10}}, "sigma-range"},
		{Spec{SigmaRange: Range{1, math.Inf(1)}}, "sigma-range"},
		{Spec{Sigma: 5, SigmaRange: Range{10, 70}}, "sigma-range"},
		{Spec{StripeBands: 1.5}, "stripes"},
		{Spec{StripeBands: -0.1}, "stripes"},
		{Spec{StripeBands: 0.5, StripeColumns: Range{0.1, 1.2}}, "stripe-columns"},
		{Spec{StripeBands: 0.5, StripeAmplitude: -3}, "stripe-amplitude"},
		{Spec{ImpulseBands: math.NaN()}, "impulse"},
		{Spec{ImpulseBands: 0.5, ImpulseDensity: 2}, "impulse-density"},
	} {
		_, _, err := Simulate(nil, msi.NewCube(4, 4, 3), tc.spec)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("%+v: error %v, want an option error for %q", tc.spec, err, tc.field)
		}
	}
	good := Spec{Sigma: 0, SigmaRange: Range{10, 70}, StripeBands: 0.2, ImpulseBands: 0.1, ImpulseDensity: 0.3}
	if err := good.Resolve().Validate(); err != nil {
		t.Errorf("%+v: %v", good, err)
	}
}

func TestParseRange(t *testing.T) {
	for s, want := range map[string]Range{"10:70": {10, 70}, " 0.5 : 2 ": {0.5, 2}, "5:5": {5, 5}, "0:0": {}} {
		got, err := ParseRange("sigma-range", s)
		if err != nil || got != want {
			t.Errorf("ParseRange(%q) = %v, %v; want %v", s, got, err, want)
		}
		if back, err := ParseRange("x", got.String()); err != nil || back != got {
			t.Errorf("%v does not survive String and ParseRange: %v, %v", got, back, err)
		}
	}
	for _, s := range []string{"10", "70:10", "a:b", "-1:3", "1:inf", "1:2:3", ""} {
		_, err := ParseRange("sigma-range", s)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != "sigma-range" {
			t.Errorf("ParseRange(%q): error %v, want an option error for sigma-range", s, err)
		}
	}
}

func TestSpecString(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Sigma: 30, Seed: 1}, "Gaussian noise σ = 30, seed 1"},
		{Spec{SigmaRange: Range{10, 70}, StripeBands: 0.2, ImpulseBands: 0.1, Seed: 1}, "Gaussian noise σ uniform in 10:70 per band, seed 1; " +
			"stripes on 0.2 of the bands (0.1:0.2 of the columns, amplitude 63.75); impulses on 0.1 of the bands (density 0.1)"},
		{Spec{PoissonGaussian: []Level{{2, 16}}, Seed: 3}, "Poisson-Gaussian noise a·Poisson(x/a) + N(0, b) with a = 2, b = 16, seed 3"},
		{Spec{PoissonGaussian: []Level{{2, 16}, {0.5, 36}}, GaussianTwin: true, Seed: 3},
			"i.i.d. Gaussian noise of the mean power of Poisson-Gaussian noise with a,b per band: 2,16 0.5,36, seed 3"},
	} {
		if got := c.spec.String(); got != c.want {
			t.Errorf("%#v:\n got %q\nwant %q", c.spec, got, c.want)
		}
	}
}
