package noiselevel

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"tdsc/internal/msi"
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

// TestEstimateKnownFunctions draws random functions per band, including
// a = 0 and b = 0, adds their noise to random scenes and checks the
// estimates: in every band the fitted variance is within 20 % (+1) of the
// true one at 20, 128 and 230 (the scene's range is [5, 240]), and the
// decision says signal-dependent exactly when the functions are.
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
		clean := scene(rng, 192, 160, bands, 5, 240)
		r := Estimate(poissonGaussian(rng, clean, fns), Options{})
		for b, f := range fns {
			got := r.Functions[b]
			for _, x := range []float64{20, 128, 230} {
				if v := f.Variance(x); math.Abs(got.Variance(x)-v) > 0.2*v+1 {
					t.Errorf("trial %d band %d: got a = %.3f, b = %.2f, want %.3f, %.2f", trial, b, got.A, got.B, f.A, f.B)
					break
				}
			}
		}
		if r.SignalDependent == gaussian {
			t.Errorf("trial %d: signal-dependent %v, want %v (Z %.1f, ratio %.2f)", trial, r.SignalDependent, !gaussian, r.Z, r.Ratio)
		}
	}
}
