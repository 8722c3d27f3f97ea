package noise

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/testenv/cubetest"
)

// directHaarEstimate follows scikit-image step by step: pad an odd band
// symmetrically (repeat the last row or column) as pywt does, take the
// diagonal Haar detail of every 2×2 block, drop the zero ones, and divide
// the median absolute value by Φ⁻¹(0.75) = √2·erfinv(1/2).
func directHaarEstimate(band []float64, h, w int) float64 {
	ph, pw := h+h%2, w+w%2
	at := func(y, x int) float64 { return band[min(y, h-1)*w+min(x, w-1)] }
	var abs []float64
	for y := 0; y < ph; y += 2 {
		for x := 0; x < pw; x += 2 {
			d := (at(y, x) - at(y, x+1) - at(y+1, x) + at(y+1, x+1)) / 2
			if d != 0 {
				abs = append(abs, math.Abs(d))
			}
		}
	}
	slices.Sort(abs)
	n := len(abs)
	med := abs[n/2]
	if n%2 == 0 {
		med = (abs[n/2-1] + abs[n/2]) / 2
	}
	return med / (math.Sqrt2 * math.Erfinv(0.5))
}

func TestEstimateBandMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, size := range [][2]int{{8, 12}, {9, 12}, {8, 13}, {11, 7}, {2, 2}, {3, 5}} {
		h, w := size[0], size[1]
		band := make([]float64, h*w)
		for i := range band {
			band[i] = 100 + 10*rng.NormFloat64()
		}
		// A flat 2×2 block at the corner, whose coefficient is zero.
		if h >= 4 && w >= 4 {
			band[0], band[1], band[w], band[w+1] = 50, 50, 50, 50
		}
		got := EstimateBand(band, h, w)
		want := directHaarEstimate(band, h, w)
		if math.Abs(got-want) > 1e-13*want {
			t.Errorf("%d×%d: estimate %.15g, direct %.15g", h, w, got, want)
		}
	}
}

func TestEstimateOfFlatBandIsZero(t *testing.T) {
	band := make([]float64, 6*6)
	for i := range band {
		band[i] = 42
	}
	if got := EstimateBand(band, 6, 6); got != 0 {
		t.Errorf("estimate of a flat band %g, want 0", got)
	}
}

func TestEstimateBandPanics(t *testing.T) {
	for _, tc := range []struct{ n, h, w int }{{10, 2, 4}, {4, 1, 4}, {4, 4, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic for %d values as %d×%d", tc.n, tc.h, tc.w)
				}
			}()
			EstimateBand(make([]float64, tc.n), tc.h, tc.w)
		}()
	}
}

// smoothCube is a cube of slowly varying sinusoids, different in every band.
func smoothCube(h, w, bands int) *msi.Cube {
	c := msi.NewCube(h, w, bands)
	for b := range bands {
		for y := range h {
			for x := range w {
				fb := float64(b)
				v := 128 + 60*math.Sin(0.05*float64(x)+0.3*fb)*math.Cos(0.07*float64(y)-0.2*fb) +
					30*math.Sin(0.02*float64(x+y)+0.5*fb)
				c.Set(y, x, b, v)
			}
		}
	}
	return c
}

// checkEstimates adds noise of several σ to clean and checks that every
// per-band estimate and their median lie within 10% of σ.
func checkEstimates(t *testing.T, clean *msi.Cube) {
	t.Helper()
	noisy := msi.NewCube(clean.Height, clean.Width, clean.Bands)
	for _, sigma := range []float64{10, 30, 50} {
		Add(noisy, clean, sigma, uint64(sigma))
		bands := Estimate(noisy)
		worst := 0.0
		for b, s := range bands {
			rel := s/sigma - 1
			if math.Abs(rel) > math.Abs(worst) {
				worst = rel
			}
			if math.Abs(rel) > 0.1 {
				t.Errorf("σ = %g: band %d estimate %.3f, %+.1f%%", sigma, b, s, 100*rel)
			}
		}
		med := EstimateMedian(noisy)
		t.Logf("σ = %2g: median estimate %.3f (%+.2f%%), worst band %+.2f%%",
			sigma, med, 100*(med/sigma-1), 100*worst)
		if math.Abs(med/sigma-1) > 0.1 {
			t.Errorf("σ = %g: median estimate %.3f, %+.1f%%", sigma, med, 100*(med/sigma-1))
		}
	}
}

func TestEstimateSmoothCube(t *testing.T) {
	checkEstimates(t, smoothCube(128, 96, 8))
}

func TestEstimateNoisyBalloons(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	checkEstimates(t, readBalloons(t))
}

func BenchmarkEstimate(b *testing.B) {
	rng := rand.New(rand.NewPCG(23, 24))
	c := cubetest.Uniform(rng, 512, 512, 31, 0, 255)
	for b.Loop() {
		Estimate(c)
	}
}

// TestEstimateBandMissing: a 2×2 block holding a missing (NaN) pixel is
// left out of the estimate, which is the estimate of the other blocks.
func TestEstimateBandMissing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const h, w = 40, 30
	band := make([]float64, h*w)
	for i := range band {
		band[i] = 100 + 10*rng.NormFloat64()
	}
	with := slices.Clone(band)
	with[0], with[w+1] = math.NaN(), 1e9              // one block: a NaN and a wild value
	band[0], band[1], band[w], band[w+1] = 0, 0, 0, 0 // that block's coefficient 0: left out
	if got, want := EstimateBand(with, h, w), EstimateBand(band, h, w); got != want {
		t.Errorf("with a missing pixel: %v, want %v", got, want)
	}
}
