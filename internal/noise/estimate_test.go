package noise

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/testenv/cubetest"
)

// directHaarEstimate follows the definition step by step: the diagonal
// Haar detail of every whole 2×2 block at even row and column (an odd
// band's last row or column unused), the zero ones dropped, and the median
// absolute value of the others divided by Φ⁻¹(0.75) = √2·erfinv(1/2).
// (The bands it is given have noise: their noise is detectable.)
func directHaarEstimate(band []float64, h, w int) float64 {
	var abs []float64
	for y := 0; y+1 < h; y += 2 {
		for x := 0; x+1 < w; x += 2 {
			if d := (band[y*w+x] - band[y*w+x+1] - band[(y+1)*w+x] + band[(y+1)*w+x+1]) / 2; d != 0 {
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
// left out of the estimate, which is the estimate of the other blocks
// computed directly.
func TestEstimateBandMissing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const h, w = 40, 30
	band := make([]float64, h*w)
	for i := range band {
		band[i] = 100 + 10*rng.NormFloat64()
	}
	var others []float64
	for y := 0; y < h; y += 2 {
		for x := 0; x < w; x += 2 {
			if y > 0 || x > 0 {
				i := y*w + x
				others = append(others, math.Abs(band[i]-band[i+1]-band[i+w]+band[i+w+1])/2)
			}
		}
	}
	band[0], band[w+1] = math.NaN(), 1e9 // one block: a NaN and a wild value
	if got, want := EstimateBand(band, h, w), median(others)/normalQuartile; got != want {
		t.Errorf("with a missing pixel: %v, want %v", got, want)
	}
}

// TestDetails checks Details against its definition, checked
// coefficient by coefficient, on random grids with zero and NaN entries.
func TestDetails(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 50 {
		rows, cols := 1+rng.IntN(9), 1+rng.IntN(9)
		grid := make([]float64, rows*cols)
		for i := range grid {
			switch u := rng.Float64(); {
			case u < 0.2:
				grid[i] = 0
			case u < 0.3:
				grid[i] = math.NaN()
			default:
				grid[i] = rng.NormFloat64()
			}
		}
		at := func(i, j int) (float64, bool) {
			if i < 0 || i >= rows || j < 0 || j >= cols {
				return 0, false
			}
			return grid[i*cols+j], true
		}
		var want []float64
		wantInside, wantPresent := 0, 0
		for i := range rows {
			for j := range cols {
				c, _ := at(i, j)
				if math.IsNaN(c) {
					continue
				}
				wantPresent++
				if c == 0 {
					continue
				}
				want = append(want, math.Abs(c))
				inside := true
				for _, d := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
					if n, ok := at(i+d[0], j+d[1]); ok && n == 0 {
						inside = false
					}
				}
				if inside {
					wantInside++
				}
			}
		}
		got, inside, present := Details(nil, grid, rows, cols)
		if present != wantPresent || inside != wantInside || !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d×%d): %v, %d inside of %d; want %v, %d of %d", trial, rows, cols, got, inside, present, want, wantInside, wantPresent)
		}
	}
}

// TestEstimateBandBelowDetection: a band without noise — constant, or
// piecewise constant with the edges of random rectangles — has noise below
// detection, 0; the same bands with Gaussian noise read their σ, and so
// does a noisy band beside a constant border that covers most of it.
func TestEstimateBandBelowDetection(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const h, w = 96, 80
	constant := slices.Repeat([]float64{37.5}, h*w)
	fields := make([]float64, h*w)
	for range 40 { // overlapping rectangles of random constant values
		y0, x0 := rng.IntN(h), rng.IntN(w)
		y1, x1 := y0+1+rng.IntN(h-y0), x0+1+rng.IntN(w-x0)
		v := 255 * rng.Float64()
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				fields[y*w+x] = v
			}
		}
	}
	for name, band := range map[string][]float64{"constant": constant, "piecewise constant": fields} {
		if got := EstimateBand(band, h, w); got != 0 {
			t.Errorf("%s: σ %v, want 0 (below detection)", name, got)
		}
		const sigma = 4
		noisy := slices.Clone(band)
		for i := range noisy {
			noisy[i] += sigma * rng.NormFloat64()
		}
		if got := EstimateBand(noisy, h, w); math.Abs(got-sigma) > 0.15*sigma {
			t.Errorf("%s with noise of σ %v: %v", name, float64(sigma), got)
		}
	}
	border := make([]float64, h*w) // the left 60 % a constant border, the rest noise
	for y := range h {
		for x := range w {
			if x >= 48 {
				border[y*w+x] = 100 + 10*rng.NormFloat64()
			}
		}
	}
	if got := EstimateBand(border, h, w); math.Abs(got-10) > 1.5 {
		t.Errorf("noise beside a constant border: σ %v, want 10", got)
	}
}

func TestDetectable(t *testing.T) {
	for _, c := range []struct {
		inside, present int
		want            bool
	}{{0, 0, false}, {0, 10, false}, {1, 1, true}, {9, 1000, false}, {10, 1000, true}, {500, 1000, true}} {
		if got := Detectable(c.inside, c.present); got != c.want {
			t.Errorf("Detectable(%d, %d) = %v", c.inside, c.present, got)
		}
	}
}

func TestBelowDetection(t *testing.T) {
	if got := BelowDetection([]float64{0, 0, 3}); !strings.HasPrefix(got, "noise below detection: σ 0 in 2 of 3 bands") {
		t.Errorf("two flat bands of three: %q", got)
	}
	for _, sigmas := range [][]float64{{0, 3, 3}, {0, 0, 3, 3}, {0.01}, nil} {
		if got := BelowDetection(sigmas); got != "" {
			t.Errorf("%v: %q, want nothing (the median is above 0)", sigmas, got)
		}
	}
}
