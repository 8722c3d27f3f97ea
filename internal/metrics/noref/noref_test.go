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

// withResidual returns denoised minus the residual r(y, x, b), so that
// noisy − result is r: the cube a denoiser that removed r would give.
func withResidual(noisy *msi.Cube, r func(y, x, b int) float64) *msi.Cube {
	den := noisy.Clone()
	for b := range den.Bands {
		for y := range den.Height {
			for x := range den.Width {
				den.Set(y, x, b, noisy.At(y, x, b)-r(y, x, b))
			}
		}
	}
	return den
}

// TestStructureOracle checks the lag-1 autocorrelations and the column and
// row shares against their definitions, computed directly on a random
// residual of a non-square band.
func TestStructureOracle(t *testing.T) {
	const h, w = 9, 14
	rng := rand.New(rand.NewPCG(5, 6))
	noisy := smooth(h, w, 2)
	den := withResidual(noisy, func(y, x, b int) float64 { return rng.NormFloat64() + float64(x%3) })
	r, err := Assess(noisy, den, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	for b := range noisy.Bands {
		res := make([]float64, h*w)
		for i := range res {
			res[i] = noisy.Band(b)[i] - den.Band(b)[i]
		}
		m := stat.Mean(res, nil)
		at := func(y, x int) float64 { return res[y*w+x] - m }
		var ss, lx, ly, colE, rowE float64
		for y := range h {
			for x := range w {
				ss += at(y, x) * at(y, x)
				if x+1 < w {
					lx += at(y, x) * at(y, x+1)
				}
				if y+1 < h {
					ly += at(y, x) * at(y+1, x)
				}
			}
		}
		for x := range w {
			c := 0.0
			for y := range h {
				c += at(y, x)
			}
			c /= h
			colE += h * c * c
		}
		for y := range h {
			c := 0.0
			for x := range w {
				c += at(y, x)
			}
			c /= w
			rowE += w * c * c
		}
		msq := ss / (h * w)
		want := []float64{lx / (h * (w - 1)) / msq, ly / ((h - 1) * w) / msq, colE / ss, rowE / ss}
		got := r.Bands[b]
		for i, g := range []float64{got.LagX, got.LagY, got.ColumnShare, got.RowShare} {
			if math.Abs(g-want[i]) > 1e-12 {
				t.Errorf("band %d: statistic %d is %v, want %v", b, i, g, want[i])
			}
		}
	}
}

// TestStructureOfResiduals is the use case on synthetic truth: white noise
// leaves no structure, stripes put their energy in the column means, and
// a residual that is a scaled copy of the image correlates with the output
// and with its neighbours.
func TestStructureOfResiduals(t *testing.T) {
	const h, w, bands = 96, 80, 3
	clean := smooth(h, w, bands)
	rng := rand.New(rand.NewPCG(7, 8))
	white := make([]float64, h*w*bands)
	for i := range white {
		white[i] = 15 * rng.NormFloat64()
	}
	noisy := clean.Clone()
	for i := range noisy.Data {
		noisy.Data[i] += white[i]
	}

	// Exactly the noise removed: white.
	r, err := Assess(noisy, clean, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	for b, band := range r.Bands {
		// 4/√(h·w) is four standard errors of a white autocorrelation;
		// the shares of white noise are 1/h and 1/w in expectation.
		tol := 4 / math.Sqrt(h*w)
		if math.Abs(band.LagX) > tol || math.Abs(band.LagY) > tol || math.Abs(band.Correlation) > tol ||
			math.Abs(band.ColumnShare-1.0/h) > 0.01 || math.Abs(band.RowShare-1.0/w) > 0.01 {
			t.Errorf("white residual, band %d: %+v; want lags and correlation ≈ 0, shares ≈ %.3f, %.3f", b, band, 1.0/h, 1.0/w)
		}
	}

	// Stripes: the noise plus offsets of ±40 on every seventh column.
	offsets := make([]float64, w)
	for x := 0; x < w; x += 7 {
		offsets[x] = float64(40 - 80*(x/7%2))
	}
	striped := withResidual(noisy, func(y, x, b int) float64 { return white[(b*h+y)*w+x] + offsets[x] })
	r, err = Assess(noisy, striped, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	for b, band := range r.Bands {
		if band.ColumnShare < 0.4 || band.RowShare > 0.05 || band.LagY < 0.4 || math.Abs(band.LagX) > 0.1 {
			t.Errorf("striped residual, band %d: %+v; want column share and vertical lag > 0.4, row share and horizontal lag ≈ 0", b, band)
		}
	}
	if r.Max.ColumnShare < r.Min.ColumnShare || r.Mean.ColumnShare < r.Min.ColumnShare || r.Mean.ColumnShare > r.Max.ColumnShare {
		t.Errorf("column share: mean %v outside [min %v, max %v]", r.Mean.ColumnShare, r.Min.ColumnShare, r.Max.ColumnShare)
	}

	// Image leaked: the residual is the noise plus a fifth of the centred
	// image band, so the output (the clean band less that fifth) and the
	// residual share the image's structure.
	leaked := withResidual(noisy, func(y, x, b int) float64 {
		return white[(b*h+y)*w+x] + 0.2*(clean.At(y, x, b)-120)
	})
	r, err = Assess(noisy, leaked, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	for b, band := range r.Bands {
		if band.Correlation < 0.2 || band.LagX < 0.1 || band.LagY < 0.1 {
			t.Errorf("leaked image, band %d: %+v; want correlation > 0.2 and both lags > 0.1", b, band)
		}
	}
	// Half the image removed from a noiseless cube: the residual is the
	// output, correlation 1.
	r, err = Assess(clean, withResidual(clean, func(y, x, b int) float64 { return 0.5 * clean.At(y, x, b) }), noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	if r.Min.Correlation < 0.99 || r.Min.LagX < 0.9 || r.Min.LagY < 0.9 {
		t.Errorf("residual = half the image: least correlation %v, lags %v, %v; want ≈ 1", r.Min.Correlation, r.Min.LagX, r.Min.LagY)
	}
}

// TestConstantResidual: a residual without variance has no structure; the
// statistics are 0, not NaN, but for its spectra's, which it has none of.
func TestConstantResidual(t *testing.T) {
	noisy := smooth(8, 40, 2)
	r, err := Assess(noisy, withResidual(noisy, func(y, x, b int) float64 { return 3 }), noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	for _, band := range r.Bands {
		if !math.IsNaN(band.Flatness) || !math.IsNaN(band.Period) {
			t.Errorf("constant residual: flatness %v, period %v; want NaN", band.Flatness, band.Period)
		}
		band.Flatness, band.Period = 0, 0
		if band != (Band{Sigma: band.Sigma, A: band.A, B: band.B}) {
			t.Errorf("constant residual: %+v, want zeros", band)
		}
	}
}

func TestSummarise(t *testing.T) {
	nan := math.NaN()
	mean, lo, hi := summarise([]Band{
		{Sigma: 1, Removed: 2, Correlation: -0.5, LagX: 0.1, LagY: 0.3, ColumnShare: 0.2, RowShare: nan},
		{Sigma: 3, Removed: 4, Correlation: 0.5, LagX: 0.3, LagY: 0.1, ColumnShare: 0.4, RowShare: 0.1},
	})
	wantMean := Band{Sigma: 2, Removed: 3, Correlation: 0, LagX: 0.2, LagY: 0.2, ColumnShare: 0.3}
	wantLo := Band{Sigma: 1, Removed: 2, Correlation: -0.5, LagX: 0.1, LagY: 0.1, ColumnShare: 0.2}
	wantHi := Band{Sigma: 3, Removed: 4, Correlation: 0.5, LagX: 0.3, LagY: 0.3, ColumnShare: 0.4}
	for _, c := range []struct {
		name      string
		got, want Band
	}{{"mean", mean, wantMean}, {"min", lo, wantLo}, {"max", hi, wantHi}} {
		if !math.IsNaN(c.got.RowShare) {
			t.Errorf("%s row share %v: a NaN band must make it NaN", c.name, c.got.RowShare)
		}
		c.got.RowShare = 0
		g, w := fields(&c.got), fields(&c.want)
		for i := range g {
			if math.Abs(*g[i]-*w[i]) > 1e-15 {
				t.Errorf("%s: %+v, want %+v", c.name, c.got, c.want)
				break
			}
		}
	}
}

// TestMissingResidual: pixels missing (NaN) in the noisy or the denoised
// cube are left out of the residual statistics, which equal those of the
// pixels left; the σ estimate leaves out the blocks that hold them.
func TestMissingResidual(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	noisy, den := msi.NewCube(16, 12, 1), msi.NewCube(16, 12, 1)
	for i := range noisy.Data {
		den.Data[i] = 100 * rng.Float64()
		noisy.Data[i] = den.Data[i] + 10*rng.NormFloat64()
	}
	noisy.Data[5], den.Data[40] = math.NaN(), math.NaN()
	r, err := Assess(noisy, den, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	var res, out []float64
	for i := range noisy.Data {
		if i != 5 && i != 40 {
			res = append(res, noisy.Data[i]-den.Data[i])
			out = append(out, den.Data[i])
		}
	}
	_, v := stat.PopMeanVariance(res, nil)
	got := r.Bands[0]
	if math.Abs(got.Removed-math.Sqrt(v)) > 1e-9 || math.Abs(got.Correlation-stat.Correlation(res, out, nil)) > 1e-9 {
		t.Errorf("removed %v, correlation %v; want %v, %v", got.Removed, got.Correlation, math.Sqrt(v), stat.Correlation(res, out, nil))
	}
	got.Flatness = 0 // 12 samples are too few for a spectrum: NaN
	for _, f := range fields(&got) {
		if math.IsNaN(*f) {
			t.Errorf("a NaN figure: %+v", got)
		}
	}
}

// TestNoiseLevel checks that the report carries the noisy cube's
// noise-level functions band by band, summarised as the other fields are,
// and its decision: Gaussian noise of σ = 20 (a = 0, b = 400) on a smooth
// cube, then noise whose variance is 3·x.
func TestNoiseLevel(t *testing.T) {
	clean := smooth(128, 128, 4)
	noisy := noise.Add(nil, clean, 20, 1)
	r, err := Assess(noisy, nil, noise.MAD)
	if err != nil {
		t.Fatal(err)
	}
	var meanB float64
	for b, band := range r.Bands {
		if f := r.NoiseLevel.Functions[b]; band.A != f.A || band.B != f.B {
			t.Errorf("band %d: a, b = %v, %v, want the estimate's %v, %v", b, band.A, band.B, f.A, f.B)
		}
		meanB += band.B / float64(len(r.Bands))
	}
	if r.NoiseLevel.SignalDependent || math.Abs(r.Mean.B-meanB) > 1e-9 || math.Abs(meanB-400) > 60 || r.Mean.A > 0.3 {
		t.Errorf("Gaussian noise: signal-dependent %v, mean a %.3f, b %.1f (of the bands %.1f); want false, ≈ 0, ≈ 400",
			r.NoiseLevel.SignalDependent, r.Mean.A, r.Mean.B, meanB)
	}
	rng := rand.New(rand.NewPCG(6, 7))
	for i, x := range clean.Data {
		noisy.Data[i] = x + math.Sqrt(3*x)*rng.NormFloat64()
	}
	if r, err = Assess(noisy, nil, noise.MAD); err != nil {
		t.Fatal(err)
	}
	// The bands span [60, 180]: the variance in their middle, 360, is
	// what the functions pin down best.
	if v := r.Mean.A*120 + r.Mean.B; !r.NoiseLevel.SignalDependent || math.Abs(v-360) > 36 {
		t.Errorf("variance 3·x: signal-dependent %v, variance at 120 %.1f (a %.3f, b %.1f); want true, ≈ 360",
			r.NoiseLevel.SignalDependent, v, r.Mean.A, r.Mean.B)
	}
}
