package subspace

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"tdsc/internal/msi"
)

// heteroscedastic returns an h×w×bands cube of r random spectral
// directions with decreasing but strong scales about a mean of 100, plus
// Gaussian noise of variance a[b]·x + b[b] at every voxel of clean value x
// (x below 0 taken as 0), with random a in [0, 4] and b in [0, 40] per band,
// and the a and b.
func heteroscedastic(rng *rand.Rand, h, w, bands, r int) (*msi.Cube, []float64, []float64) {
	clean := msi.NewCube(h, w, bands)
	for i := range r {
		dir := make([]float64, bands)
		for j := range dir {
			dir[j] = rng.NormFloat64()
		}
		for p := range h * w {
			coef := rng.NormFloat64() * 30 / float64(i+1)
			for j := range bands {
				clean.Band(j)[p] += coef * dir[j]
			}
		}
	}
	a, b := make([]float64, bands), make([]float64, bands)
	noisy := msi.NewCube(h, w, bands)
	for j := range bands {
		a[j], b[j] = 4*rng.Float64(), 40*rng.Float64()
		for p, x := range clean.Band(j) {
			x += 100
			noisy.Band(j)[p] = x + rng.NormFloat64()*math.Sqrt(a[j]*max(x, 0)+b[j])
		}
	}
	return noisy, a, b
}

// TestSignalDirectionsKnownRank checks the count on cubes of r strong
// directions under signal-dependent noise of random levels: exactly r,
// for r = 0 (noise alone) too, where directions measured on the pixels
// they were fitted on would count noise as signal.
func TestSignalDirectionsKnownRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, bands := range []int{12, 31} {
		for _, r := range []int{0, 1, 3, 5} {
			for seed := range 3 {
				noisy, a, b := heteroscedastic(rng, 64, 64, bands, r)
				k, err := SignalDirections(noisy, a, b, 3)
				if err != nil {
					t.Fatal(err)
				}
				if k != r {
					t.Errorf("%d bands, rank %d, cube %d: counted %d directions", bands, r, seed, k)
				}
			}
		}
	}
}

// TestSignalDirectionsMissing checks that pixels with a missing voxel take
// no part: a tenth of the pixels NaN in one band or another give the count
// of the cube without them, and a cube with too few pixels left is an
// error.
func TestSignalDirectionsMissing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	noisy, a, b := heteroscedastic(rng, 48, 48, 16, 4)
	for range noisy.Height * noisy.Width / 10 {
		noisy.Band(rng.IntN(noisy.Bands))[rng.IntN(noisy.Height*noisy.Width)] = math.NaN()
	}
	if k, err := SignalDirections(noisy, a, b, 3); err != nil || k != 4 {
		t.Errorf("with missing voxels: %d directions (%v), want 4", k, err)
	}
	for p := 2 * MinPixelsPerBand * noisy.Bands; p < noisy.Height*noisy.Width; p++ {
		noisy.Band(0)[p] = math.Inf(1)
	}
	if k, err := SignalDirections(noisy, a, b, 3); !errors.Is(err, ErrFewPixels) {
		t.Errorf("with at most %d pixels whole: %d directions (%v), want ErrFewPixels", 2*MinPixelsPerBand*noisy.Bands, k, err)
	}
}

func TestSignalDirectionsPanicsOnLevels(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for 2 noise levels on 3 bands")
		}
	}()
	SignalDirections(msi.NewCube(4, 4, 3), make([]float64, 2), make([]float64, 3), 3)
}

// TestSignalDirectionsContrast checks the count where the noise's variance
// differs most between pixels: a dark scene (x = 0.5) with a twentieth of
// its pixels bright (x = 250), one direction of signal, noise of variance
// 4x + 0.1. The noise's power along a direction then varies from pixel to
// pixel by 500 times, and its standard error is about 4.5 times the white
// noise's v·√(2/n): measured against that, noise directions would count as
// signal in about a quarter of such cubes.
func TestSignalDirectionsContrast(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const h, w, bands = 48, 48, 12
	a, b := slices.Repeat([]float64{4}, bands), slices.Repeat([]float64{0.1}, bands)
	for seed := range 20 {
		noisy := msi.NewCube(h, w, bands)
		for p := range h * w {
			x := 0.5
			if rng.IntN(20) == 0 {
				x = 250
			}
			for j := range bands {
				noisy.Band(j)[p] = x + rng.NormFloat64()*math.Sqrt(a[j]*x+b[j])
			}
		}
		if k, err := SignalDirections(noisy, a, b, 3); err != nil || k != 1 {
			t.Errorf("cube %d: %d directions (%v), want 1", seed, k, err)
		}
	}
}
