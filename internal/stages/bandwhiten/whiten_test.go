package bandwhiten

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/testenv/cubetest"
)

func randomSigmas(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = 10 + 60*rng.Float64()
	}
	return s
}

func identity(_ context.Context, c *msi.Cube, _ float64) (*msi.Cube, error) { return c.Clone(), nil }

var allOptions = []Options{
	{},
	{Pivot: PivotZero},
	{Reference: ReferenceMean},
	{Reference: ReferenceGeoMean, Pivot: PivotZero},
	{Floor: 0.9},
	{Strength: 0.5},
	{Strength: 0.3, Reference: ReferenceMean},
}

func TestIdentityMethodGivesInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := cubetest.Uniform(rng, 9, 11, 7, 0, 255)
	noisy.Wavelengths = []float64{400, 410, 420, 430, 440, 450, 460}
	sigmas := randomSigmas(rng, 7)
	sigmas[3] = 0 // floored
	for _, o := range allOptions {
		out, err := Denoise(context.Background(), identity, noisy, sigmas, o)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range noisy.Data {
			if math.Abs(out.Data[i]-v) > 1e-12*255 {
				t.Fatalf("%+v voxel %d: %.17g, input %.17g", o, i, out.Data[i], v)
			}
		}
		if len(out.Wavelengths) != 7 || out.Wavelengths[6] != 460 {
			t.Errorf("wavelengths %v, want the input's", out.Wavelengths)
		}
	}
}

// TestLinearMethodAlgebra runs a linear method M(z) = α·z + β·σ, which
// also records what it was given, and checks the whitened input, the σ it
// was run at and the unscaled output against the formulas of the package
// documentation, computed here independently.
func TestLinearMethodAlgebra(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noisy := cubetest.Uniform(rng, 6, 5, 9, 0, 255)
	sigmas := randomSigmas(rng, 9)
	sigmas[2], sigmas[5] = 0, 0.5 // both below the floor
	const alpha, beta = 0.7, 0.3
	n := noisy.Height * noisy.Width
	// Given pivots, one a band, far from the bands' means.
	pivots := make([]float64, noisy.Bands)
	for b := range pivots {
		pivots[b] = -100 + 400*rng.Float64()
	}
	for _, o := range append(allOptions, Options{Pivots: pivots}, Options{Pivots: pivots, Pivot: PivotZero, Strength: 0.5}) {
		var seen *msi.Cube
		var seenSigma float64
		linear := func(_ context.Context, c *msi.Cube, sigma float64) (*msi.Cube, error) {
			seen, seenSigma = c.Clone(), sigma
			out := c.Clone()
			for i := range out.Data {
				out.Data[i] = alpha*out.Data[i] + beta*sigma
			}
			return out, nil
		}
		out, err := Denoise(context.Background(), linear, noisy, sigmas, o)
		if err != nil {
			t.Fatal(err)
		}
		r := o.Resolve()
		s := Reference(sigmas, r.Reference)
		// The noise level of every band after scaling: s when whitening
		// fully, s^γ·σ_b^(1−γ) (σ_b floored) when partially.
		after := make([]float64, len(sigmas))
		for b, sb := range sigmas {
			after[b] = math.Pow(s, r.Strength) * math.Pow(math.Max(sb, r.Floor*s), 1-r.Strength)
		}
		level := Reference(after, r.Reference)
		if r.Strength == 1 && seenSigma != s || math.Abs(seenSigma-level) > 1e-12*level {
			t.Errorf("%+v: method run at σ %g, want %g", o, seenSigma, level)
		}
		if r.Strength != 1 && r.Reference == ReferenceMedian && math.Abs(seenSigma-s) > 1e-12*s {
			t.Errorf("%+v: partial whitening with the median reference runs at %g, want s = %g", o, seenSigma, s)
		}
		for b := range noisy.Bands {
			band := noisy.Band(b)
			pivot := 0.0
			if r.Pivots != nil {
				pivot = r.Pivots[b]
			} else if r.Pivot == PivotMean {
				for _, v := range band {
					pivot += v
				}
				pivot /= float64(n)
			}
			gain := math.Pow(s/math.Max(sigmas[b], r.Floor*s), r.Strength)
			for i, y := range band {
				z := pivot + gain*(y-pivot)
				if got := seen.Band(b)[i]; math.Abs(got-z) > 1e-9 {
					t.Fatalf("%+v band %d pixel %d: method saw %.12g, want %.12g", o, b, i, got, z)
				}
				want := pivot + (alpha*z+beta*seenSigma-pivot)/gain
				if got := out.Band(b)[i]; math.Abs(got-want) > 1e-9 {
					t.Fatalf("%+v band %d pixel %d: output %.12g, want %.12g", o, b, i, got, want)
				}
			}
		}
	}
}

// TestWhitenedNoiseIsWhite gives pure noise of per-band σ to a method that
// measures its input: every band must reach it with standard deviation s.
func TestWhitenedNoiseIsWhite(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const h, w, bands = 100, 100, 6
	sigmas := randomSigmas(rng, bands)
	noisy := msi.NewCube(h, w, bands)
	for b := range bands {
		for i := range noisy.Band(b) {
			noisy.Band(b)[i] = 128 + sigmas[b]*rng.NormFloat64()
		}
	}
	measure := func(_ context.Context, c *msi.Cube, sigma float64) (*msi.Cube, error) {
		for b := range bands {
			var sum, sumSq float64
			for _, v := range c.Band(b) {
				sum += v
				sumSq += v * v
			}
			m := sum / (h * w)
			std := math.Sqrt(sumSq/(h*w) - m*m)
			if tol := 5 * sigma / math.Sqrt(2*h*w); math.Abs(std-sigma) > tol {
				t.Errorf("band %d (σ %.2f): whitened deviation %.3f, want %.3f", b, sigmas[b], std, sigma)
			}
		}
		return c.Clone(), nil
	}
	if _, err := Denoise(context.Background(), measure, noisy, sigmas, Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestReference(t *testing.T) {
	v := []float64{4, 1, 16, 1, 0}
	for kind, want := range map[string]float64{ReferenceMedian: 1, ReferenceMean: 22.0 / 5, ReferenceGeoMean: math.Sqrt(8)} { // zero left out: (4·1·16·1)^(1/4)
		if got := Reference(v, kind); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s of %v: %g, want %g", kind, v, got, want)
		}
	}
	if got := Reference([]float64{5, 1, 3, 2}, ReferenceMedian); got != 2.5 {
		t.Errorf("median of 5, 1, 3, 2: %g, want 2.5", got)
	}
}

func TestDenoiseErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	noisy := cubetest.Uniform(rng, 4, 4, 3, 0, 255)
	ctx := context.Background()
	for _, tc := range []struct {
		o     Options
		field string
	}{
		{Options{Reference: "max"}, "whiten-reference"},
		{Options{Pivot: "min"}, "whiten-pivot"},
		{Options{Floor: 1.5}, "whiten-floor"},
		{Options{Floor: -1}, "whiten-floor"},
		{Options{Strength: 1.2}, "whiten-strength"},
		{Options{Strength: -0.5}, "whiten-strength"},
		{Options{Pivots: []float64{1, math.NaN(), 3}}, "whiten-pivot"},
		{Options{Pivots: []float64{1, 2, math.Inf(-1)}}, "whiten-pivot"},
	} {
		_, err := Denoise(ctx, identity, noisy, []float64{1, 2, 3}, tc.o)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("%+v: error %v, want an option error for %q", tc.o, err, tc.field)
		}
	}
	for _, sigmas := range [][]float64{{1, 2}, {1, -2, 3}, {1, math.NaN(), 3}, {0, 0, 0}} {
		if _, err := Denoise(ctx, identity, noisy, sigmas, Options{}); err == nil {
			t.Errorf("σs %v: no error", sigmas)
		}
	}
	if _, err := Denoise(ctx, identity, noisy, []float64{1, 2, 3}, Options{Pivots: []float64{1, 2}}); err == nil {
		t.Error("2 pivots for 3 bands: no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	honest := func(ctx context.Context, c *msi.Cube, _ float64) (*msi.Cube, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return c.Clone(), nil
	}
	if _, err := Denoise(cancelled, honest, noisy, []float64{1, 2, 3}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error %v, want context.Canceled", err)
	}
	called := false
	careless := func(_ context.Context, c *msi.Cube, _ float64) (*msi.Cube, error) {
		called = true
		return c.Clone(), nil
	}
	if _, err := Denoise(cancelled, careless, noisy, []float64{1, 2, 3}, Options{}); !errors.Is(err, context.Canceled) || called {
		t.Errorf("cancelled context: error %v and method called %v, want context.Canceled before the method", err, called)
	}
	wrongSize := func(context.Context, *msi.Cube, float64) (*msi.Cube, error) { return msi.NewCube(2, 2, 3), nil }
	if _, err := Denoise(ctx, wrongSize, noisy, []float64{1, 2, 3}, Options{}); err == nil {
		t.Error("a method returning a wrong-sized cube: no error")
	}
}
