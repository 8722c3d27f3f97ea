package noise

import (
	"math"
	"math/rand/v2"
	"testing"

	"tdsc/internal/formats/pngstack"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/testenv"
	"tdsc/internal/testenv/cubetest"
)

func TestAddIsReproducible(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := cubetest.Uniform(rng, 13, 17, 5, 0, 255)
	src.Wavelengths = []float64{400, 410, 420, 430, 440}
	orig := src.Clone()

	a := Add(nil, src, 20, 42)
	b := Add(msi.NewCube(13, 17, 5), src, 20, 42)
	for i := range a.Data {
		if a.Data[i] != b.Data[i] {
			t.Fatalf("voxel %d: %v and %v from the same seed", i, a.Data[i], b.Data[i])
		}
		if src.Data[i] != orig.Data[i] {
			t.Fatalf("voxel %d of the source changed", i)
		}
	}
	if len(a.Wavelengths) != 5 || a.Wavelengths[4] != 440 {
		t.Errorf("wavelengths %v, want the source's", a.Wavelengths)
	}

	inPlace := src.Clone()
	if got := Add(inPlace, inPlace, 20, 42); got != inPlace {
		t.Fatal("Add did not return dst")
	}
	for i := range a.Data {
		if inPlace.Data[i] != a.Data[i] {
			t.Fatalf("voxel %d: %v in place, %v into a new cube", i, inPlace.Data[i], a.Data[i])
		}
	}

	other := Add(nil, src, 20, 43)
	same := 0
	for i := range a.Data {
		if other.Data[i] == a.Data[i] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("seeds 42 and 43 give %d equal voxels of %d", same, len(a.Data))
	}
}

func TestAddNoiseStatistics(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := cubetest.Uniform(rng, 64, 64, 31, 0, 255)
	const sigma = 7.0
	noisy := Add(nil, src, sigma, 5)
	n := float64(len(src.Data))
	var sum, sumSq, lag float64
	prev := 0.0
	for i, v := range noisy.Data {
		e := v - src.Data[i]
		sum += e
		sumSq += e * e
		lag += e * prev
		prev = e
	}
	mean := sum / n
	std := math.Sqrt(sumSq/n - mean*mean)
	// Five standard errors: the mean's is σ/√n, the sample deviation's σ/√(2n),
	// the lag-1 correlation's 1/√n.
	if math.Abs(mean) > 5*sigma/math.Sqrt(n) {
		t.Errorf("noise mean %g, want 0 within %g", mean, 5*sigma/math.Sqrt(n))
	}
	if math.Abs(std-sigma) > 5*sigma/math.Sqrt(2*n) {
		t.Errorf("noise standard deviation %g, want %g", std, sigma)
	}
	if r := lag / sumSq; math.Abs(r) > 5/math.Sqrt(n) {
		t.Errorf("lag-1 correlation of the noise %g, want 0", r)
	}
}

func TestAddDoesNotClip(t *testing.T) {
	src := msi.NewCube(32, 32, 2)
	for i := range src.Data[:32*32] {
		src.Data[i] = 255
	}
	noisy := Add(nil, src, 30, 7)
	above, below := 0, 0
	for _, v := range noisy.Data {
		if v > 255 {
			above++
		}
		if v < 0 {
			below++
		}
	}
	// Half of each band's voxels should leave [0, 255]; a quarter is ample.
	if above < 256 || below < 256 {
		t.Errorf("%d voxels above 255 and %d below 0 of 1024 each: the noise looks clipped", above, below)
	}
	zero := Add(nil, noisy, 0, 7)
	for i := range zero.Data {
		if zero.Data[i] != noisy.Data[i] {
			t.Fatalf("voxel %d: σ = 0 changed %v to %v", i, noisy.Data[i], zero.Data[i])
		}
	}
}

func TestAddPanics(t *testing.T) {
	src := msi.NewCube(4, 4, 2)
	for _, tc := range []struct {
		name  string
		dst   *msi.Cube
		sigma float64
	}{
		{"negative σ", nil, -1},
		{"NaN σ", nil, math.NaN()},
		{"infinite σ", nil, math.Inf(1)},
		{"wrong destination size", msi.NewCube(4, 4, 3), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("Add did not panic")
				}
			}()
			Add(tc.dst, src, tc.sigma, 1)
		})
	}
}

// TestNoisyBalloonsPSNR checks the "Noisy" row of the paper's Table 2:
// unclipped noise of σ = 5..50 on balloons gives these mean PSNRs.
func TestNoisyBalloonsPSNR(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	clean := readBalloons(t)
	noisy := msi.NewCube(clean.Height, clean.Width, clean.Bands)
	for _, tc := range []struct{ sigma, psnr float64 }{
		{5, 34.15}, {10, 28.13}, {20, 22.11}, {30, 18.59}, {50, 14.15},
	} {
		Add(noisy, clean, tc.sigma, 1)
		sum := 0.0
		for b := range clean.Bands {
			sum += metrics.PSNR(clean.Band(b), noisy.Band(b))
		}
		got := sum / float64(clean.Bands)
		t.Logf("σ = %2g: mean PSNR %.4f dB", tc.sigma, got)
		if math.Abs(got-tc.psnr) > 0.02 {
			t.Errorf("σ = %g: mean PSNR %.4f dB, want %.2f ± 0.02", tc.sigma, got, tc.psnr)
		}
	}
}

func readBalloons(t *testing.T) *msi.Cube {
	t.Helper()
	dir := testenv.Path(t, "cave", "balloons_ms")
	c, _, err := pngstack.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func BenchmarkAdd(b *testing.B) {
	src := msi.NewCube(512, 512, 31)
	dst := msi.NewCube(512, 512, 31)
	for b.Loop() {
		Add(dst, src, 20, 1)
	}
}
