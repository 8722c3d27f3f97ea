package noref

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
)

// smooth returns a cube of slowly varying bands, different in every band.
func smooth(h, w, bands int) *msi.Cube {
	c := msi.NewCube(h, w, bands)
	for b := 0; b < bands; b++ {
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c.Set(y, x, b, 120+60*math.Sin(float64(x)/9+float64(b))*math.Cos(float64(y)/13))
			}
		}
	}
	return c
}

// TestResidualOracle checks the residual statistics of every band against
// gonum's population standard deviation and correlation on random cubes.
func TestResidualOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noisy, den := msi.NewCube(17, 13, 4), msi.NewCube(17, 13, 4)
	for i := range noisy.Data {
		den.Data[i] = 100 * rng.Float64()
		noisy.Data[i] = den.Data[i] + 0.3*den.Data[i] + 10*rng.NormFloat64()
	}
	r, err := Assess(noisy, den, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	for b := range noisy.Bands {
		y, x := noisy.Band(b), den.Band(b)
		res := make([]float64, len(y))
		for i := range y {
			res[i] = y[i] - x[i]
		}
		_, v := stat.PopMeanVariance(res, nil)
		wantCorr := stat.Correlation(res, x, nil)
		got := r.Bands[b]
		if math.Abs(got.Removed-math.Sqrt(v)) > 1e-9 || math.Abs(got.Correlation-wantCorr) > 1e-9 {
			t.Errorf("band %d: removed %v, correlation %v; want %v, %v", b, got.Removed, got.Correlation, math.Sqrt(v), wantCorr)
		}
	}
	want := noise.Estimate(noisy)
	mean := 0.0
	for b, s := range want {
		if r.Bands[b].Sigma != s {
			t.Errorf("band %d: σ %v, want the MAD estimate %v", b, r.Bands[b].Sigma, s)
		}
		mean += s / float64(len(want))
	}
	if math.Abs(r.Mean.Sigma-mean) > 1e-12 {
		t.Errorf("mean σ %v, want %v", r.Mean.Sigma, mean)
	}
}

// TestNoiseOrImage is the use case: removing exactly the added noise gives
// a residual of the noise's σ uncorrelated with the output; removing image
// (an over-smoothed output) gives a residual correlated with it.
func TestNoiseOrImage(t *testing.T) {
	clean := smooth(96, 96, 3)
	noisy := noise.Add(nil, clean, 20, 1)
	r, err := Assess(noisy, clean, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Mean.Removed-20) > 0.5 || math.Abs(r.Mean.Correlation) > 0.05 || math.Abs(r.Mean.Sigma-20) > 2 {
		t.Errorf("exact denoising: removed %.3f, correlation %.3f, σ %.3f; want ≈ 20, ≈ 0, ≈ 20", r.Mean.Removed, r.Mean.Correlation, r.Mean.Sigma)
	}
	flat := clean.Clone()
	for b := range flat.Bands {
		band := flat.Band(b)
		for i := range band {
			band[i] = 120 + 0.5*(band[i]-120)
		}
	}
	r, err = Assess(noisy, flat, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mean.Correlation < 0.5 || r.Mean.Removed < 25 {
		t.Errorf("halved contrast: removed %.3f, correlation %.3f; want > 25 and > 0.5", r.Mean.Removed, r.Mean.Correlation)
	}
	// Without a denoised cube only σ is reported.
	r, err = Assess(noisy, nil, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(r.Mean.Removed) || !math.IsNaN(r.Bands[0].Correlation) {
		t.Errorf("no denoised cube: removed %v, correlation %v; want NaN", r.Mean.Removed, r.Bands[0].Correlation)
	}
}

func TestErrors(t *testing.T) {
	if _, err := Assess(msi.NewCube(8, 8, 2), msi.NewCube(8, 9, 2), noise.MAD); err == nil {
		t.Error("cubes of different sizes: no error")
	}
	if _, err := Assess(msi.NewCube(8, 8, 2), nil, "median"); err == nil {
		t.Error("unknown estimator: no error")
	}
}
