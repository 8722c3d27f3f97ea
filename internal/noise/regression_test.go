package noise

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/testenv/cubetest"
)

// directRegressionSigmas fits every band of c on a constant and all the
// other bands by gonum's least squares (QR) and returns the residual
// standard deviations with N − B degrees of freedom.
func directRegressionSigmas(t *testing.T, c *msi.Cube) []float64 {
	t.Helper()
	n, nb := c.Height*c.Width, c.Bands
	sigmas := make([]float64, nb)
	for b := range nb {
		design := mat.NewDense(n, nb, nil)
		target := mat.NewVecDense(n, nil)
		for p := range n {
			design.Set(p, 0, 1)
			col := 1
			for o := range nb {
				if o != b {
					design.Set(p, col, c.Data[o*n+p])
					col++
				}
			}
			target.SetVec(p, c.Data[b*n+p])
		}
		var coef, fit mat.VecDense
		if err := coef.SolveVec(design, target); err != nil {
			t.Fatal(err)
		}
		fit.MulVec(design, &coef)
		rss := 0.0
		for p := range n {
			r := target.AtVec(p) - fit.AtVec(p)
			rss += r * r
		}
		sigmas[b] = math.Sqrt(rss / float64(n-nb))
	}
	return sigmas
}

func TestRegressionMatchesDirectLeastSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, size := range [][3]int{{9, 7, 5}, {6, 6, 2}, {5, 11, 8}} {
		c := cubetest.Uniform(rng, size[0], size[1], size[2], 0, 255)
		// Correlate the bands a little, as real spectra are.
		n := size[0] * size[1]
		for b := 1; b < c.Bands; b++ {
			for p := range n {
				c.Data[b*n+p] += 0.7 * c.Data[(b-1)*n+p]
			}
		}
		got, err := EstimateRegression(c)
		if err != nil {
			t.Fatal(err)
		}
		want := directRegressionSigmas(t, c)
		for b := range want {
			if math.Abs(got[b]-want[b]) > 1e-9*want[b] {
				t.Errorf("%v band %d: σ %.15g, direct least squares %.15g", size, b, got[b], want[b])
			}
		}
	}
}

// lowRankCube is a spectrally correlated cube: three smooth abundance maps
// mixed by three random positive spectra, like a scene of three materials.
func lowRankCube(rng *rand.Rand, h, w, bands int) *msi.Cube {
	spectra := make([][3]float64, bands)
	for k := range 3 {
		// A smooth random spectrum: a bump at a random centre.
		centre, width := float64(bands)*rng.Float64(), 3+float64(bands)*rng.Float64()
		for b := range bands {
			d := (float64(b) - centre) / width
			spectra[b][k] = 0.3 + math.Exp(-d*d)
		}
	}
	c := msi.NewCube(h, w, bands)
	for y := range h {
		for x := range w {
			fy, fx := float64(y), float64(x)
			a := [3]float64{
				60 + 50*math.Sin(0.05*fx+0.03*fy),
				60 + 50*math.Cos(0.04*fy-0.02*fx),
				60 + 50*math.Sin(0.03*(fx+fy)+1),
			}
			for b := range bands {
				c.Set(y, x, b, a[0]*spectra[b][0]+a[1]*spectra[b][1]+a[2]*spectra[b][2])
			}
		}
	}
	return c
}

// TestEstimatorsRecoverBandSigmas adds noise of known per-band σ to a
// spectrally low-rank, spatially smooth cube: both estimators must find
// every band's σ, the MAD within 6%, the regression within 10%. The
// regression's error is its upward bias (TestRegressionPredictedBias),
// small here because 31 bands of a rank-3 signal predict each band well and
// the band σs differ by at most 2× (a quiet band among loud ones is
// predicted from noisier data).
func TestEstimatorsRecoverBandSigmas(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	clean := lowRankCube(rng, 128, 128, 31)
	noisy, applied, err := Simulate(nil, clean, Spec{SigmaRange: Range{10, 20}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{MAD, Regression, Smaller} {
		got, err := EstimateBands(noisy, name)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for b, s := range applied.Sigmas {
			rel := got[b]/s - 1
			worst = max(worst, math.Abs(rel))
			if tol := map[string]float64{MAD: 0.06, Regression: 0.1, Smaller: 0.06}[name]; math.Abs(rel) > tol {
				t.Errorf("%s band %d: σ %.3f estimated %.3f (%+.1f%%)", name, b, s, got[b], 100*rel)
			}
		}
		t.Logf("%s: worst band error %.2f%%", name, 100*worst)
	}
}

// TestRegressionPredictedBias checks the regression estimate against its
// population value: with Σ the covariance of the noisy spectra (the clean
// cube's sample covariance plus diag(σ_b²)), the residual variance of band
// b regressed on the others is 1/(Σ⁻¹)_bb = σ_b² + var(x_b | other bands),
// above σ_b² by the signal the noisy bands cannot predict. Sixteen bands of
// a rank-3 signal make that excess large (10–20% of σ), so this also shows
// the estimator's known upward bias.
func TestRegressionPredictedBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	clean := lowRankCube(rng, 128, 128, 16)
	noisy, applied, err := Simulate(nil, clean, Spec{SigmaRange: Range{5, 40}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	got, err := EstimateRegression(noisy)
	if err != nil {
		t.Fatal(err)
	}
	n, nb := clean.Height*clean.Width, clean.Bands
	cov := mat.NewSymDense(nb, nil)
	means := make([]float64, nb)
	for b := range nb {
		means[b] = mean(clean.Band(b))
	}
	for i := range nb {
		for j := i; j < nb; j++ {
			s := 0.0
			for p := range n {
				s += (clean.Data[i*n+p] - means[i]) * (clean.Data[j*n+p] - means[j])
			}
			cov.SetSym(i, j, s/float64(n))
		}
		cov.SetSym(i, i, cov.At(i, i)+applied.Sigmas[i]*applied.Sigmas[i])
	}
	var chol mat.Cholesky
	if !chol.Factorize(cov) {
		t.Fatal("covariance not positive definite")
	}
	var inv mat.SymDense
	if err := chol.InverseTo(&inv); err != nil {
		t.Fatal(err)
	}
	worstBias := 0.0
	for b, s := range applied.Sigmas {
		want := math.Sqrt(1 / inv.At(b, b))
		worstBias = max(worstBias, want/s-1)
		// The sample residual deviates from the population one by about
		// 1/√(2N) ≈ 0.6% relative; 3% is a wide margin.
		if math.Abs(got[b]/want-1) > 0.03 {
			t.Errorf("band %d: σ %.3f, estimate %.3f, population value %.3f", b, s, got[b], want)
		}
	}
	t.Logf("largest predicted upward bias %.1f%%", 100*worstBias)
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// TestRegressionOfDegenerateCubes: a constant band, two identical bands and
// a noise-free low-rank cube make the scatter matrix singular; the estimate
// must still be finite, 0 for the constant band and small for the rest.
func TestRegressionOfDegenerateCubes(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	clean := lowRankCube(rng, 32, 32, 8)
	got, err := EstimateRegression(clean)
	if err != nil {
		t.Fatal(err)
	}
	for b, s := range got {
		if !(s >= 0 && s < 0.5) {
			t.Errorf("noise-free rank-3 cube, band %d: σ %g", b, s)
		}
	}

	c := Add(nil, clean, 10, 3)
	n := c.Height * c.Width
	for p := range n {
		c.Data[2*n+p] = 42            // a constant band
		c.Data[5*n+p] = c.Data[4*n+p] // band 5 repeats band 4
	}
	got, err = EstimateRegression(c)
	if err != nil {
		t.Fatal(err)
	}
	for b, s := range got {
		if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
			t.Errorf("band %d: σ %g", b, s)
		}
	}
	if got[2] != 0 {
		t.Errorf("constant band: σ %g, want 0", got[2])
	}
	if got[4] > 1 || got[5] > 1 {
		t.Errorf("repeated bands: σ %g and %g, want near 0 (each predicts the other)", got[4], got[5])
	}
	for _, b := range []int{0, 1, 3, 6, 7} {
		if math.Abs(got[b]/10-1) > 0.2 {
			t.Errorf("band %d: σ %g, want about 10", b, got[b])
		}
	}
}

func TestRegressionRejectsSmallCubes(t *testing.T) {
	for _, c := range []*msi.Cube{msi.NewCube(8, 8, 1), msi.NewCube(2, 2, 4)} {
		if _, err := EstimateRegression(c); err == nil {
			t.Errorf("%s: no error", c.Size())
		}
	}
	_, err := EstimateBands(msi.NewCube(4, 4, 2), "hysime")
	var oe *option.Error
	if !errors.As(err, &oe) || oe.Field != "sigma-estimator" {
		t.Errorf("unknown estimator: error %v, want an option error for sigma-estimator", err)
	}
}

func TestSmallerIsTheBandwiseMinimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	noisy, _, err := Simulate(nil, lowRankCube(rng, 40, 40, 12), Spec{SigmaRange: Range{1, 30}, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	mad := Estimate(noisy)
	reg, err := EstimateRegression(noisy)
	if err != nil {
		t.Fatal(err)
	}
	got, err := EstimateBands(noisy, Smaller)
	if err != nil {
		t.Fatal(err)
	}
	fromEach := [2]int{}
	for b := range got {
		switch got[b] {
		case min(mad[b], reg[b]):
			if got[b] == mad[b] {
				fromEach[0]++
			} else {
				fromEach[1]++
			}
		default:
			t.Errorf("band %d: %g, MAD %g, regression %g", b, got[b], mad[b], reg[b])
		}
	}
	t.Logf("%d bands from the MAD estimate, %d from the regression", fromEach[0], fromEach[1])
}
