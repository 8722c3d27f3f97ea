package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tdsc/internal/formats/pngstack"
	"tdsc/internal/msi"
	"tdsc/internal/testenv"
)

// TestBalloonsCropReference checks every metric against the values that
// numpy and scikit-image computed for the shared balloons crop at σ = 20.
func TestBalloonsCropReference(t *testing.T) {
	dir := testenv.Path(t, "reference", "balloons_crop")
	var want struct {
		PSNRPerBand []float64 `json:"psnr_per_band"`
		SSIMPerBand []float64 `json:"ssim_per_band"`
		PSNRMean    float64   `json:"psnr_mean"`
		SSIMMean    float64   `json:"ssim_mean"`
		SAMDeg      float64   `json:"sam_deg"`
		ERGAS       float64   `json:"ergas"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("metrics.json: %v", err)
	}
	clean, _, err := pngstack.Read(filepath.Join(dir, "clean"))
	if err != nil {
		t.Fatal(err)
	}
	noisy, _, err := pngstack.Read(filepath.Join(dir, "noisy_sigma20"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Evaluate(t.Context(), clean, noisy)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.BandPSNR) != len(want.PSNRPerBand) || len(got.BandSSIM) != len(want.SSIMPerBand) {
		t.Fatalf("got %d PSNR and %d SSIM bands, want %d and %d",
			len(got.BandPSNR), len(got.BandSSIM), len(want.PSNRPerBand), len(want.SSIMPerBand))
	}
	const absTol, relTol = 1e-6, 1e-6
	var worstPSNR, worstSSIM float64
	for b := range want.PSNRPerBand {
		worstPSNR = max(worstPSNR, math.Abs(got.BandPSNR[b]-want.PSNRPerBand[b]))
		worstSSIM = max(worstSSIM, math.Abs(got.BandSSIM[b]-want.SSIMPerBand[b]))
		if d := math.Abs(got.BandPSNR[b] - want.PSNRPerBand[b]); !(d <= absTol) {
			t.Errorf("band %d: PSNR %.12f, want %.12f", b+1, got.BandPSNR[b], want.PSNRPerBand[b])
		}
		if d := math.Abs(got.BandSSIM[b] - want.SSIMPerBand[b]); !(d <= absTol) {
			t.Errorf("band %d: SSIM %.12f, want %.12f", b+1, got.BandSSIM[b], want.SSIMPerBand[b])
		}
	}
	t.Logf("largest per-band deviation: PSNR %.2g dB, SSIM %.2g; SAM relative %.2g, ERGAS relative %.2g",
		worstPSNR, worstSSIM, math.Abs(got.SAM-want.SAMDeg)/want.SAMDeg, math.Abs(got.ERGAS-want.ERGAS)/want.ERGAS)
	if d := math.Abs(got.PSNR - want.PSNRMean); !(d <= absTol) {
		t.Errorf("mean PSNR %.12f, want %.12f", got.PSNR, want.PSNRMean)
	}
	if d := math.Abs(got.SSIM - want.SSIMMean); !(d <= absTol) {
		t.Errorf("mean SSIM %.12f, want %.12f", got.SSIM, want.SSIMMean)
	}
	if d := math.Abs(got.SAM-want.SAMDeg) / want.SAMDeg; !(d <= relTol) {
		t.Errorf("SAM %.12f°, want %.12f°", got.SAM, want.SAMDeg)
	}
	if d := math.Abs(got.ERGAS-want.ERGAS) / want.ERGAS; !(d <= relTol) {
		t.Errorf("ERGAS %.12f, want %.12f", got.ERGAS, want.ERGAS)
	}
}

// directSSIM is the textbook SSIM: for every interior pixel, the weighted
// statistics over the full 121-tap 2-D Gaussian window.
func directSSIM(ref, x []float64, h, w int) float64 {
	const r = 5
	var win [2*r + 1][2*r + 1]float64
	sum := 0.0
	for i := -r; i <= r; i++ {
		for j := -r; j <= r; j++ {
			win[i+r][j+r] = math.Exp(-float64(i*i+j*j) / (2 * 1.5 * 1.5))
			sum += win[i+r][j+r]
		}
	}
	c1, c2 := math.Pow(0.01*255, 2), math.Pow(0.03*255, 2)
	total, n := 0.0, 0
	for y := r; y < h-r; y++ {
		for x0 := r; x0 < w-r; x0++ {
			var mr, mx float64
			for i := -r; i <= r; i++ {
				for j := -r; j <= r; j++ {
					p := (y+i)*w + x0 + j
					mr += win[i+r][j+r] / sum * ref[p]
					mx += win[i+r][j+r] / sum * x[p]
				}
			}
			// Centred second moments: the exact population statistics.
			var vr, vx, vrx float64
			for i := -r; i <= r; i++ {
				for j := -r; j <= r; j++ {
					p := (y+i)*w + x0 + j
					q := win[i+r][j+r] / sum
					vr += q * (ref[p] - mr) * (ref[p] - mr)
					vx += q * (x[p] - mx) * (x[p] - mx)
					vrx += q * (ref[p] - mr) * (x[p] - mx)
				}
			}
			// A window holding a missing (NaN) voxel is left out.
			if v := (2*mr*mx + c1) * (2*vrx + c2) / ((mr*mr + mx*mx + c1) * (vr + vx + c2)); !math.IsNaN(v) {
				total += v
				n++
			}
		}
	}
	return total / float64(n)
}

func randomBand(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 255 * rng.Float64()
	}
	return v
}

// noisyCopy returns ref plus Gaussian noise of standard deviation sigma.
func noisyCopy(rng *rand.Rand, ref []float64, sigma float64) []float64 {
	v := make([]float64, len(ref))
	for i, r := range ref {
		v[i] = r + sigma*rng.NormFloat64()
	}
	return v
}

func TestSSIMMatchesDirectWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const h, w = 20, 23
	for _, sigma := range []float64{0, 5, 40, 150} {
		ref := randomBand(rng, h*w)
		x := noisyCopy(rng, ref, sigma)
		got, err := SSIM(ref, x, h, w)
		if err != nil {
			t.Fatal(err)
		}
		want := directSSIM(ref, x, h, w)
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("noise σ=%g: SSIM %.16f, direct window %.16f", sigma, got, want)
		}
	}
	// A smooth reference, where the means dominate the variances.
	ref := make([]float64, h*w)
	for i := range ref {
		y, x := i/w, i%w
		ref[i] = 120 + 60*math.Sin(0.3*float64(x)+0.2*float64(y))
	}
	x := noisyCopy(rng, ref, 3)
	got, err := SSIM(ref, x, h, w)
	if err != nil {
		t.Fatal(err)
	}
	if want := directSSIM(ref, x, h, w); math.Abs(got-want) > 1e-12 {
		t.Errorf("smooth band: SSIM %.16f, direct window %.16f", got, want)
	}
}

func TestSSIMOfIdenticalBandsIsOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range [][2]int{{11, 11}, {37, 64}} {
		ref := randomBand(rng, size[0]*size[1])
		got, err := SSIM(ref, ref, size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-1) > 1e-15 {
			t.Errorf("%d×%d: SSIM of a band with itself is %.17g", size[0], size[1], got)
		}
	}
}

func TestSSIMRejectsBadSizes(t *testing.T) {
	for _, tc := range []struct {
		h, w, nr, nx int
		want         string
	}{
		{10, 20, 200, 200, "smaller than the 11×11 window"},
		{20, 10, 200, 200, "smaller than the 11×11 window"},
		{12, 12, 144, 143, "bands of 144 and 143 values"},
	} {
		_, err := SSIM(make([]float64, tc.nr), make([]float64, tc.nx), tc.h, tc.w)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SSIM of %d×%d with %d and %d values: error %v, want one saying %q",
				tc.h, tc.w, tc.nr, tc.nx, err, tc.want)
		}
	}
}

func TestPSNRMatchesFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sigma := range []float64{0.5, 10, 70} {
		ref := randomBand(rng, 1000)
		x := noisyCopy(rng, ref, sigma)
		ss := 0.0
		for i := range ref {
			ss += (ref[i] - x[i]) * (ref[i] - x[i])
		}
		want := 20*math.Log10(255) - 10*math.Log10(ss/1000)
		if got := PSNR(ref, x); math.Abs(got-want) > 1e-10 {
			t.Errorf("σ=%g: PSNR %.14f, want %.14f", sigma, got, want)
		}
	}
	ref := randomBand(rng, 50)
	if got := PSNR(ref, ref); !math.IsInf(got, 1) {
		t.Errorf("PSNR of a band with itself is %g, want +Inf", got)
	}
}

func TestSAMOfScaledSpectraIsZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ref := msi.NewCube(9, 13, 31)
	for i := range ref.Data {
		ref.Data[i] = 1 + 254*rng.Float64()
	}
	x := msi.NewCube(9, 13, 31)
	n := ref.Height * ref.Width
	for p := range n {
		scale := 0.01 + 10*rng.Float64()
		for b := range ref.Bands {
			x.Data[b*n+p] = scale * ref.Data[b*n+p]
		}
	}
	// Round-off leaves |cos| a few ulps from 1, an angle of order 1e-6°.
	if got := SAM(ref, x); !(got >= 0 && got < 1e-5) {
		t.Errorf("SAM of scaled spectra is %g°, want 0", got)
	}
}

func TestSAMKnownAngles(t *testing.T) {
	// Three pixels of two bands: angles 45°, 90° and 0°, and a fourth pixel
	// whose input spectrum is zero, which must be skipped.
	ref := msi.NewCube(1, 4, 2)
	x := msi.NewCube(1, 4, 2)
	spectra := [][4]float64{ // r0, r1, x0, x1
		{3, 0, 2, 2},
		{1, 0, 0, 5},
		{2, 7, 4, 14},
		{6, 1, 0, 0},
	}
	for p, s := range spectra {
		ref.Set(0, p, 0, s[0])
		ref.Set(0, p, 1, s[1])
		x.Set(0, p, 0, s[2])
		x.Set(0, p, 1, s[3])
	}
	if got, want := SAM(ref, x), (45.0+90+0)/3; math.Abs(got-want) > 1e-6 {
		t.Errorf("SAM %.10f°, want %.10f°", got, want)
	}
}

func TestERGASConstructedCase(t *testing.T) {
	// Band b of the reference is μ_b plus a zero-mean ±a checkerboard, and the
	// input adds a ±δ_b pattern, so mean(ref_b) = μ_b and MSE_b = δ_b².
	mu := []float64{100, 50, 20}
	delta := []float64{10, 10, 1}
	ref := msi.NewCube(4, 6, 3)
	x := msi.NewCube(4, 6, 3)
	for b := range 3 {
		for y := range 4 {
			for c := range 6 {
				s := float64(1 - 2*((y+c)%2))
				ref.Set(y, c, b, mu[b]+7*s)
				x.Set(y, c, b, mu[b]+7*s+delta[b]*float64(1-2*(c%2)))
			}
		}
	}
	// 100·sqrt((0.01 + 0.04 + 0.0025)/3)
	want := 100 * math.Sqrt(0.0525/3)
	if got := ERGAS(ref, x); math.Abs(got-want) > 1e-12*want {
		t.Errorf("ERGAS %.15f, want %.15f", got, want)
	}
}

func TestEvaluateAgreesWithSingleMetrics(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	ref := msi.NewCube(17, 21, 7)
	for i := range ref.Data {
		ref.Data[i] = 255 * rng.Float64()
	}
	x := msi.NewCube(17, 21, 7)
	copy(x.Data, noisyCopy(rng, ref.Data, 12))
	r, err := Evaluate(t.Context(), ref, x)
	if err != nil {
		t.Fatal(err)
	}
	psnrSum, ssimSum := 0.0, 0.0
	for b := range ref.Bands {
		p := PSNR(ref.Band(b), x.Band(b))
		s, err := SSIM(ref.Band(b), x.Band(b), ref.Height, ref.Width)
		if err != nil {
			t.Fatal(err)
		}
		if r.BandPSNR[b] != p || r.BandSSIM[b] != s {
			t.Errorf("band %d: Evaluate gives PSNR %g SSIM %g, the single functions %g and %g",
				b, r.BandPSNR[b], r.BandSSIM[b], p, s)
		}
		psnrSum += p
		ssimSum += s
	}
	if math.Abs(r.PSNR-psnrSum/7) > 1e-12 || math.Abs(r.SSIM-ssimSum/7) > 1e-14 {
		t.Errorf("means %g and %g, want %g and %g", r.PSNR, r.SSIM, psnrSum/7, ssimSum/7)
	}
	if sam := SAM(ref, x); r.SAM != sam {
		t.Errorf("Evaluate gives SAM %g, SAM gives %g", r.SAM, sam)
	}
	if ergas := ERGAS(ref, x); math.Abs(r.ERGAS-ergas) > 1e-14*ergas {
		t.Errorf("Evaluate gives ERGAS %g, ERGAS gives %g", r.ERGAS, ergas)
	}
}

func TestEvaluateRejectsBadSizes(t *testing.T) {
	_, err := Evaluate(t.Context(), msi.NewCube(96, 96, 31), msi.NewCube(96, 95, 31))
	if want := "reference is 96×96×31, input is 96×95×31"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one saying %q", err, want)
	}
	_, err = Evaluate(t.Context(), msi.NewCube(10, 40, 3), msi.NewCube(10, 40, 3))
	if want := "smaller than the 11×11 SSIM window"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one saying %q", err, want)
	}
}

func BenchmarkSSIM512(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	ref := randomBand(rng, 512*512)
	x := noisyCopy(rng, ref, 20)
	for b.Loop() {
		if _, err := SSIM(ref, x, 512, 512); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMissingVoxelsLeftOut: voxels missing (NaN) in the reference or the
// input are left out of every metric: the PSNR and ERGAS are those of the
// voxels left, the SAM that of the pixels left, the SSIM the mean over the
// windows that hold no missing voxel, computed directly here; a band
// with nothing left has NaN figures, which the means leave out.
func TestMissingVoxelsLeftOut(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const h, w, bands = 20, 24, 3
	ref, x := msi.NewCube(h, w, bands), msi.NewCube(h, w, bands)
	for i := range ref.Data {
		ref.Data[i] = 20 + 200*rng.Float64()
		x.Data[i] = ref.Data[i] + 10*rng.NormFloat64()
	}
	ref.Set(3, 4, 0, math.NaN()) // missing in the reference
	x.Set(15, 18, 0, math.NaN()) // and in the input
	for i := range x.Band(2) {   // a band with nothing left
		x.Band(2)[i] = math.NaN()
	}
	r, err := Evaluate(t.Context(), ref, x)
	if err != nil {
		t.Fatal(err)
	}
	// Band 0 by hand, over the voxels present in both.
	sum, n, mu := 0.0, 0, 0.0
	rb, xb := ref.Band(0), x.Band(0)
	for i := range rb {
		if !math.IsNaN(rb[i]) && !math.IsNaN(xb[i]) {
			sum += (xb[i] - rb[i]) * (xb[i] - rb[i])
			mu += rb[i]
			n++
		}
	}
	mse0, mu0 := sum/float64(n), mu/float64(n)
	if n != h*w-2 || math.Abs(r.BandPSNR[0]-10*math.Log10(255*255/mse0)) > 1e-9 {
		t.Errorf("band 0: PSNR %v from %d voxels, want %v", r.BandPSNR[0], n, 10*math.Log10(255*255/mse0))
	}
	// SSIM over the windows without a missing voxel, each computed
	// directly.
	if want := directSSIM(rb, xb, h, w); math.Abs(r.BandSSIM[0]-want) > 1e-9 {
		t.Errorf("band 0: SSIM %v, want %v", r.BandSSIM[0], want)
	}
	if !math.IsNaN(r.BandPSNR[2]) || !math.IsNaN(r.BandSSIM[2]) {
		t.Errorf("band 2, all missing: PSNR %v, SSIM %v", r.BandPSNR[2], r.BandSSIM[2])
	}
	if math.Abs(r.PSNR-(r.BandPSNR[0]+r.BandPSNR[1])/2) > 1e-9 || math.Abs(r.SSIM-(r.BandSSIM[0]+r.BandSSIM[1])/2) > 1e-12 {
		t.Errorf("means %v, %v over the bands with data", r.PSNR, r.SSIM)
	}
	mse1 := meanSquaredError(ref.Band(1), x.Band(1))
	mu1 := mean(ref.Band(1))
	if want := 100 * math.Sqrt((mse0/(mu0*mu0)+mse1/(mu1*mu1))/2); math.Abs(r.ERGAS-want) > 1e-9*want {
		t.Errorf("ERGAS %v, want %v", r.ERGAS, want)
	}
	if !math.IsNaN(r.SAM) {
		t.Errorf("SAM %v with a missing voxel in every pixel (band 2)", r.SAM)
	}
	// Without the empty band, SAM is that of the pixels present in both.
	ref2, x2 := ref.Crop(0, 0, 0, h, w, 2), x.Crop(0, 0, 0, h, w, 2)
	angles, pixels := 0.0, 0
	for p := range h * w {
		a, b := []float64{ref2.Data[p], ref2.Data[h*w+p]}, []float64{x2.Data[p], x2.Data[h*w+p]}
		if math.IsNaN(a[0] + a[1] + b[0] + b[1]) {
			continue
		}
		c := (a[0]*b[0] + a[1]*b[1]) / math.Hypot(a[0], a[1]) / math.Hypot(b[0], b[1])
		angles += math.Acos(min(1, c)) * 180 / math.Pi
		pixels++
	}
	if got := SAM(ref2, x2); pixels != h*w-2 || math.Abs(got-angles/float64(pixels)) > 1e-9 {
		t.Errorf("SAM %v, want %v over %d pixels", got, angles/float64(pixels), pixels)
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
