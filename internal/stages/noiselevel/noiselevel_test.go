package noiselevel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"tdsc/internal/msi"
	"tdsc/internal/stages/sparsenoise"
)

// scene returns a random clean h×w×bands cube on [lo, hi]: per band a
// smooth ramp, a few discs of constant value (edges) and a patch of fine
// sinusoidal texture, the bands sharing the layout with different values,
// as the bands of a real scene do.
func scene(rng *rand.Rand, h, w, bands int, lo, hi float64) *msi.Cube {
	c := msi.NewCube(h, w, bands)
	type disc struct{ y, x, r float64 }
	discs := make([]disc, 6)
	for i := range discs {
		discs[i] = disc{rng.Float64() * float64(h), rng.Float64() * float64(w), 5 + rng.Float64()*float64(min(h, w))/6}
	}
	ty, tx := rng.IntN(h/2), rng.IntN(w/2)
	for b := range bands {
		gy, gx := rng.Float64(), rng.Float64()
		levels := make([]float64, len(discs))
		for i := range levels {
			levels[i] = rng.Float64()
		}
		band := c.Band(b)
		for y := range h {
			for x := range w {
				v := (gy*float64(y)/float64(h) + gx*float64(x)/float64(w)) / 2
				for i, d := range discs {
					if math.Hypot(float64(y)-d.y, float64(x)-d.x) < d.r {
						v = levels[i]
					}
				}
				if y >= ty && y < ty+h/4 && x >= tx && x < tx+w/4 {
					v += 0.05 * math.Sin(float64(x)*1.3) * math.Cos(float64(y)*0.9)
				}
				band[y*w+x] = lo + (hi-lo)*math.Min(math.Max(v, 0), 1)
			}
		}
	}
	return c
}

// poissonGaussian returns y = a·Poisson(x/a) + N(0, b) of every voxel of
// clean with its band's function (x/a taken as 0 when x < 0; y = x + N(0, b)
// when a = 0).
func poissonGaussian(rng *rand.Rand, clean *msi.Cube, fns []Function) *msi.Cube {
	noisy := clean.Clone()
	for b, f := range fns {
		band := noisy.Band(b)
		for i, x := range band {
			if f.A > 0 {
				x = f.A * distuv.Poisson{Lambda: math.Max(x, 0) / f.A, Src: rng}.Rand()
			}
			band[i] = x + math.Sqrt(f.B)*rng.NormFloat64()
		}
	}
	return noisy
}

// checkFunctions compares the fitted functions of r with the true ones at
// the dark end, the middle and the bright end of each band (Band.Dark and
// Bright: the 10th and 90th percentiles of the local means, so that the
// check stays where the band has data): the relative error of the variance must be at most 30 %
// (+1) in every band and its median over bands and values at most 10 %:
// the first catches a band gone wrong, the second a bias too small to
// tell from one band's scatter (a 256×256 band leaves the variance at the
// ends of the range a few percent uncertain).
func checkFunctions(t *testing.T, name string, r *Report, want []Function) {
	t.Helper()
	got := r.Functions
	var errs []float64
	for b, f := range want {
		dark, bright := r.Bands[b].Dark, r.Bands[b].Bright
		for _, x := range []float64{dark, (dark + bright) / 2, bright} {
			v := f.Variance(x)
			e := math.Abs(got[b].Variance(x) - v)
			errs = append(errs, e/v)
			if e > 0.3*v+1 {
				t.Errorf("%s, band %d: got a = %.3f, b = %.2f, want %.3f, %.2f (variance at %.1f %.1f, want %.1f)",
					name, b, got[b].A, got[b].B, f.A, f.B, x, got[b].Variance(x), v)
			}
		}
	}
	if m := sparsenoise.Median(errs); m > 0.1 {
		t.Errorf("%s: median relative error of the variance %.3f, want ≤ 0.1", name, m)
	}
}

// TestEstimateKnownFunctions draws random functions per band, including
// a = 0 and b = 0, adds their noise to random scenes and checks the
// estimates by checkFunctions, and that the decision says signal-dependent exactly when
// the functions are.
func TestEstimateKnownFunctions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 33))
	for trial := range 6 {
		const bands = 6
		fns := make([]Function, bands)
		gaussian := trial%3 == 0
		for b := range fns {
			switch {
			case gaussian:
				fns[b] = Function{B: 4 + rng.Float64()*400}
			case trial%3 == 1 && b%2 == 0:
				fns[b] = Function{A: 0.5 + 3.5*rng.Float64()}
			default:
				fns[b] = Function{A: 0.5 + 3.5*rng.Float64(), B: 50 * rng.Float64()}
			}
		}
		clean := scene(rng, 256, 256, bands, 5, 240)
		r := Estimate(poissonGaussian(rng, clean, fns), Options{})
		checkFunctions(t, fmt.Sprintf("trial %d", trial), r, fns)
		if r.SignalDependent == gaussian {
			t.Errorf("trial %d: signal-dependent %v, want %v (Z %.1f, ratio %.2f)", trial, r.SignalDependent, !gaussian, r.Z, r.Ratio)
		}
	}
}

// TestEstimateCorrupted adds sparse noise, missing voxels and clipping to
// Poisson-Gaussian and Gaussian cubes and checks the estimates by
// checkFunctions, and the decision.
func TestEstimateCorrupted(t *testing.T) {
	const h, w, bands = 256, 256, 6
	corruptions := []struct {
		name   string
		mask   bool // pass the impulses in Options.Mask
		modify func(rng *rand.Rand, c *msi.Cube, marks []uint8)
	}{
		{"salt and pepper", false, func(rng *rand.Rand, c *msi.Cube, _ []uint8) {
			for b := range c.Bands {
				band := c.Band(b)
				for i := range band {
					if rng.Float64() < 0.05 {
						band[i] = 255 * float64(rng.IntN(2))
					}
				}
			}
		}},
		{"random-valued impulses in the mask", true, func(rng *rand.Rand, c *msi.Cube, marks []uint8) {
			for i := range c.Data {
				if rng.Float64() < 0.05 {
					c.Data[i] = 255 * rng.Float64()
					marks[i] = 1
				}
			}
		}},
		{"dead columns and lines", false, func(rng *rand.Rand, c *msi.Cube, _ []uint8) {
			for b := range c.Bands {
				for range 12 {
					x, y := rng.IntN(c.Width), rng.IntN(c.Height)
					for k := range c.Height {
						c.Set(k, x, b, 0)
					}
					for k := range c.Width {
						c.Set(y, k, b, 0)
					}
				}
			}
		}},
		{"columns stuck at 60", false, func(rng *rand.Rand, c *msi.Cube, _ []uint8) {
			for b := range c.Bands {
				for range 16 {
					x := rng.IntN(c.Width)
					for k := range c.Height {
						c.Set(k, x, b, 60)
					}
				}
			}
		}},
		{"stripes", false, func(rng *rand.Rand, c *msi.Cube, _ []uint8) {
			for b := range c.Bands {
				for x := range c.Width {
					if rng.Float64() < 0.2 {
						offset := 80 * (rng.Float64() - 0.5)
						for y := range c.Height {
							c.Data[(b*c.Height+y)*c.Width+x] += offset
						}
					}
				}
			}
		}},
		{"missing voxels", false, func(rng *rand.Rand, c *msi.Cube, _ []uint8) {
			for i := range c.Data {
				if y := i / c.Width % c.Height; y < 20 || rng.Float64() < 0.01 {
					c.Data[i] = math.NaN()
				}
			}
		}},
		{"clipping to [10, 190]", false, func(_ *rand.Rand, c *msi.Cube, _ []uint8) {
			for i, v := range c.Data {
				c.Data[i] = min(max(v, 10), 190)
			}
		}},
	}
	rng := rand.New(rand.NewPCG(5, 55))
	for _, k := range corruptions {
		for _, gaussian := range []bool{false, true} {
			fns := make([]Function, bands)
			for b := range fns {
				if gaussian {
					fns[b] = Function{B: 50 + 100*rng.Float64()}
				} else {
					fns[b] = Function{A: 1 + 2*rng.Float64(), B: 20 * rng.Float64()}
				}
			}
			noisy := poissonGaussian(rng, scene(rng, h, w, bands, 0, 255), fns)
			marks := make([]uint8, len(noisy.Data))
			k.modify(rng, noisy, marks)
			var opts Options
			if k.mask {
				opts.Mask = marks
			}
			r := Estimate(noisy, opts)
			checkFunctions(t, fmt.Sprintf("%s, gaussian %v", k.name, gaussian), r, fns)
			if r.SignalDependent == gaussian {
				t.Errorf("%s: signal-dependent %v, want %v (Z %.1f, ratio %.2f)", k.name, r.SignalDependent, !gaussian, r.Z, r.Ratio)
			}
		}
	}
}

// TestZUnderGaussianNoise checks the decision's premise: with Gaussian
// noise each band's Z is about standard normal (mean near 0, mean square
// near 1; the lack-of-fit scaling only widens the standard error, so at
// most 1), whatever the noise level.
func TestZUnderGaussianNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 88))
	const bands = 48
	fns := make([]Function, bands)
	for b := range fns {
		fns[b] = Function{B: 1 + 900*rng.Float64()}
	}
	r := Estimate(poissonGaussian(rng, scene(rng, 160, 160, bands, 0, 255), fns), Options{})
	var mean, square float64
	for _, band := range r.Bands {
		mean += band.Z / bands
		square += band.Z * band.Z / bands
	}
	// The mean of 48 standard normal values is within ±0.45 with
	// probability 0.998.
	if math.Abs(mean) > 0.45 || square < 0.4 || square > 1.5 {
		t.Errorf("Z over %d Gaussian bands: mean %.2f, mean square %.2f; want about 0 and 1", bands, mean, square)
	}
	// The pooled Z is about standard normal as well.
	if math.Abs(r.Z) > 4 || r.SignalDependent {
		t.Errorf("pooled Z %.2f (signal-dependent %v), want about standard normal", r.Z, r.SignalDependent)
	}
}

// TestHaar checks the window statistics against the orthonormal Haar
// transform written out: the four diagonal details, the mean, and the sum
// of squares of the other nine details, which by Parseval is the energy of
// the window less that of the approximation, the diagonal details and the
// two gradients of the second level.
func TestHaar(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 99))
	for range 100 {
		var p [window][window]float64
		var energy, sum float64
		for y := range window {
			for x := range window {
				p[y][x] = 255 * rng.Float64()
				energy += p[y][x] * p[y][x]
				sum += p[y][x]
			}
		}
		w := haar(&p)
		// The block sums of the 2×2 blocks and the second level's
		// horizontal and vertical details: ±1/4 on the pixels of a half.
		block := func(by, bx int) float64 {
			return p[2*by][2*bx] + p[2*by][2*bx+1] + p[2*by+1][2*bx] + p[2*by+1][2*bx+1]
		}
		h2 := (block(0, 0) - block(0, 1) + block(1, 0) - block(1, 1)) / 4
		v2 := (block(0, 0) + block(0, 1) - block(1, 0) - block(1, 1)) / 4
		var diag2 float64
		for by := range 2 {
			for bx := range 2 {
				d := (p[2*by][2*bx] - p[2*by][2*bx+1] - p[2*by+1][2*bx] + p[2*by+1][2*bx+1]) / 2
				if math.Abs(w.diag[2*by+bx]-d) > 1e-9 {
					t.Fatalf("diagonal detail %d: got %v, want %v", 2*by+bx, w.diag[2*by+bx], d)
				}
				diag2 += d * d
			}
		}
		if math.Abs(w.mean-sum/16) > 1e-9 {
			t.Fatalf("mean: got %v, want %v", w.mean, sum/16)
		}
		want := energy - sum*sum/16 - diag2 - h2*h2 - v2*v2
		if math.Abs(w.smooth-want) > 1e-9*energy {
			t.Fatalf("smoothness: got %v, want %v", w.smooth, want)
		}
	}
}

// TestWeightedLine checks the constrained fit against the weighted
// normal equations solved by gonum when their solution is feasible, and
// against every point of a grid of feasible (a, b) otherwise (the
// objective is convex, so no feasible point may be better).
func TestWeightedLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 1010))
	for trial := range 200 {
		n := 3 + rng.IntN(10)
		levels := make([]Level, n)
		w := make([]float64, n)
		slope := 4*rng.Float64() - 2
		for i := range levels {
			m := 255 * rng.Float64()
			levels[i] = Level{Mean: m, Variance: math.Max(slope*m+50*rng.NormFloat64()+20, 0.1)}
			w[i] = 0.1 + rng.Float64()
		}
		f, _, _ := weightedLine(levels, w)
		if f.A < 0 || f.B < 0 {
			t.Fatalf("trial %d: infeasible fit %+v", trial, f)
		}
		x := mat.NewDense(n, 2, nil)
		y := mat.NewVecDense(n, nil)
		for i, l := range levels {
			s := math.Sqrt(w[i])
			x.Set(i, 0, s*l.Mean)
			x.Set(i, 1, s)
			y.SetVec(i, s*l.Variance)
		}
		var free mat.VecDense
		if err := free.SolveVec(x, y); err != nil {
			t.Fatal(err)
		}
		if a, b := free.AtVec(0), free.AtVec(1); a >= 0 && b >= 0 {
			if math.Abs(f.A-a) > 1e-9*(1+a) || math.Abs(f.B-b) > 1e-9*(1+b) {
				t.Fatalf("trial %d: got %+v, want a = %v, b = %v", trial, f, a, b)
			}
			continue
		}
		best := chiSquare(levels, w, f)
		for i := range 200 {
			for j := range 200 {
				g := Function{A: 3 * float64(i) / 199, B: 300 * float64(j) / 199}
				if c := chiSquare(levels, w, g); c < best*(1-1e-9) {
					t.Fatalf("trial %d: fit %+v has χ² %v, but %+v has %v", trial, f, best, g, c)
				}
			}
		}
	}
}

// TestSummary checks the lines the report says on a made-up report.
func TestSummary(t *testing.T) {
	r := &Report{
		Functions: []Function{{2, 16}, {1.5, 20}, {1.5, 20}},
		Bands: []Band{{Function: Function{2, 16}, Fitted: true}, {Function: Function{1.5, 20}, Fitted: true},
			{Function: Function{0, 30}}},
		Z: 41.23, Ratio: 3.3, SignalDependent: true,
	}
	want := "noise: signal-dependent, σ²(x) = a·x + b on the [0, 255] scale: a 1.5–2 (median 1.5), b 16–20 (median 20)\n" +
		"evidence: slope z 41.2 over 2 bands (> 5), bright/dark variance 3.30 (median over bands, ≥ 1.2)\n" +
		"1 band too small or too flat to fit, given the nearest fitted band's function"
	if got := r.Summary(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	r.SignalDependent = false
	want = "noise: Gaussian, not signal-dependent: slope z 41.2 over 2 bands (> 5 needed), bright/dark variance 3.30 (median over bands, ≥ 1.2 needed)\n" +
		"σ²(x) = a·x + b on the [0, 255] scale: a 1.5–2 (median 1.5), b 16–20 (median 20)\n" +
		"1 band too small or too flat to fit, given the nearest fitted band's function"
	if got := r.Summary(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestEstimateClippedTop clips strongly signal-dependent noise at the top
// of the range, where the noise is largest: the windows left near the
// clipping level have truncated noise, which would bend the fit down and
// underestimate a if the levels within three deviations of it were
// fitted.
func TestEstimateClippedTop(t *testing.T) {
	const bands = 8
	noisy := clippedRamp(rand.New(rand.NewPCG(14, 1414)), 256, 256, bands)
	r := Estimate(noisy, Options{})
	// a's standard error is about 0.09 in a band: 0.4 is 4 of them, and
	// the mean over bands has 0.03.
	var mean float64
	for b, f := range r.Functions {
		mean += f.A / bands
		if math.Abs(f.A-3) > 0.4 || math.Abs(f.B-4) > 10 {
			t.Errorf("band %d: got a = %.3f, b = %.2f, want 3, 4", b, f.A, f.B)
		}
	}
	if math.Abs(mean-3) > 0.1 {
		t.Errorf("mean a over bands %.3f, want 3", mean)
	}
}

// clippedRamp returns an h×w×bands cube of the ramp from 0 at the left to
// 200 at the right in every band, with Poisson-Gaussian noise a = 3, b = 4
// clipped at 150.
func clippedRamp(rng *rand.Rand, h, w, bands int) *msi.Cube {
	clean := msi.NewCube(h, w, bands)
	for b := range bands {
		band := clean.Band(b)
		for i := range band {
			band[i] = 200 * float64(i%w) / float64(w-1)
		}
	}
	noisy := poissonGaussian(rng, clean, slices.Repeat([]Function{{A: 3, B: 4}}, bands))
	for i, v := range noisy.Data {
		noisy.Data[i] = min(v, 150)
	}
	return noisy
}

// TestClippedLevels checks which levels are left out near a clipping
// level: those whose mean lies within three noise deviations of it, the
// deviation taken from the previous fit.
func TestClippedLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1515))
	wins := make([]windowStats, 24*perLevel)
	for i := range wins {
		wins[i].mean = 100 * float64(i) / float64(len(wins))
		for k := range wins[i].diag {
			wins[i].diag[k] = 10 * rng.NormFloat64()
		}
	}
	prev := Function{B: 100}
	band := fitLevels(wins, []float64{100}, &prev)
	if !band.Fitted {
		t.Fatal("not fitted")
	}
	for _, l := range band.Levels {
		if want := l.Mean >= 70; l.Clipped != want {
			t.Errorf("level at %.1f: clipped %v, want %v", l.Mean, l.Clipped, want)
		}
	}
}

// TestEstimateNothingToFit: a cube too small for a window, and a band
// with no data, are not fitted and say so; the report is Gaussian and its
// summary is still said.
func TestEstimateNothingToFit(t *testing.T) {
	r := Estimate(msi.NewCube(3, 3, 2), Options{})
	if r.SignalDependent || r.Bands[0].Fitted || r.Functions[0] != (Function{}) {
		t.Errorf("3×3 cube: %+v", r)
	}
	if s := r.Summary(); !strings.Contains(s, "2 bands too small or too flat to fit") {
		t.Errorf("summary %q", s)
	}
	rng := rand.New(rand.NewPCG(16, 1616))
	c := poissonGaussian(rng, scene(rng, 64, 64, 3, 0, 255), slices.Repeat([]Function{{A: 2, B: 4}}, 3))
	for i := range c.Band(1) {
		c.Band(1)[i] = math.NaN()
	}
	r = Estimate(c, Options{})
	if !r.Bands[0].Fitted || r.Bands[1].Fitted || !r.Bands[2].Fitted || r.Functions[1] != r.Functions[0] {
		t.Errorf("a band of NaN: fitted %v %v %v, functions %+v", r.Bands[0].Fitted, r.Bands[1].Fitted, r.Bands[2].Fitted, r.Functions)
	}
}

// TestStuck checks which voxels stuck leaves out: every voxel of columns
// stuck at one value (which no two horizontal neighbours share), of
// salt-and-pepper impulses, of a masked voxel and of a missing one, none
// of the noisy rest; a clipped region at the top is a clipping level, the
// stuck columns (not an extreme) and the impulses (scattered) are not.
func TestStuck(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 1717))
	const h, w = 64, 80
	band := make([]float64, h*w)
	for i := range band {
		band[i] = 100 + 10*rng.NormFloat64()
	}
	want := make([]bool, h*w)
	for _, x := range []int{5, 30, 61} {
		for y := range h {
			band[y*w+x], want[y*w+x] = 42.5, true
		}
	}
	// The columns alone: no two horizontal neighbours are equal.
	if left, _ := stuck(band, nil, h, w); !slices.Equal(left, want) {
		t.Fatal("stuck columns alone are not all left out")
	}
	for range 40 {
		i := rng.IntN(h * w)
		band[i], want[i] = 255*float64(rng.IntN(2)), true
	}
	for y := 50; y < h; y++ { // a clipped corner
		for x := 70; x < w; x++ {
			band[y*w+x], want[y*w+x] = 255, true
		}
	}
	mask := make([]uint8, h*w)
	mask[7], want[7] = 1, true
	band[9], want[9] = math.NaN(), true
	left, clips := stuck(band, mask, h, w)
	for i := range left {
		if left[i] != want[i] {
			t.Fatalf("voxel (%d, %d) = %v: left out %v, want %v", i/w, i%w, band[i], left[i], want[i])
		}
	}
	if !slices.Equal(clips, []float64{255}) {
		t.Errorf("clipping levels %v, want [255]", clips)
	}
}

// TestEstimateDeterministic: the report is the same on one core and on
// several (bands are fitted in parallel, each on its own).
func TestEstimateDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1818))
	noisy := poissonGaussian(rng, scene(rng, 96, 96, 7, 0, 255), slices.Repeat([]Function{{A: 1.5, B: 9}}, 7))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one := Estimate(noisy, Options{})
	runtime.GOMAXPROCS(4)
	if many := Estimate(noisy, Options{}); !reflect.DeepEqual(one, many) {
		t.Error("the report on 4 cores differs from that on 1")
	}
}

// TestSpectralEvidence: fine texture whose contrast grows with the
// brightness, shared by all bands, under Gaussian noise. The band's own
// details take the texture for noise that grows with the signal; the
// spectral-spatial details cancel it, and the decision says Gaussian.
func TestSpectralEvidence(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 1919))
	const h, w, bands = 128, 128, 6
	clean := msi.NewCube(h, w, bands)
	for b := range bands {
		band := clean.Band(b)
		for y := range h {
			for x := range w {
				base := 20 + 200*float64(x)/float64(w-1)
				texture := 0.04 * base * math.Sin(2.1*float64(x)+1.7*float64(y))
				band[y*w+x] = (1 + 0.05*float64(b)) * (base + texture)
			}
		}
	}
	noisy := poissonGaussian(rng, clean, slices.Repeat([]Function{{B: 9}}, bands))
	r := Estimate(noisy, Options{})
	if r.SignalDependent {
		t.Errorf("shared texture under Gaussian noise: signal-dependent (Z %.1f, ratio %.2f)", r.Z, r.Ratio)
	}
	// The premise: the band's own details alone would be fooled.
	var ratios []float64
	for b := range bands {
		left, clips := stuck(noisy.Band(b), nil, h, w)
		ratios = append(ratios, fitBand(noisy.Band(b), nil, left, clips, h, w).Ratio)
	}
	if m := sparsenoise.Median(ratios); m < ratioMin {
		t.Errorf("the spatial ratio is %.2f: the texture does not test the spectral details", m)
	}
}
