package nonlocal

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/denoise"
	"tdsc/internal/methods/twodsc"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/stages/groupwiener"
	"tdsc/internal/stages/subspace"
	"tdsc/internal/testenv/cubetest"
)

// TestEigenImages: directions count when their eigenvalue clears the
// Marchenko–Pastur edge σ²(1 + √(B/N))² by 3σ²√(2/N); k is twice the
// count, at least 16 and at most the bands.
func TestEigenImages(t *testing.T) {
	const sigma, pixels = 30.0, 65536
	edge := func(bands int) float64 {
		r := math.Sqrt(float64(bands) / pixels)
		return sigma * sigma * ((1+r)*(1+r) + 3*math.Sqrt(2.0/pixels))
	}
	// eigenvalues returns bands eigenvalues: the given factors of the
	// edge, then pure noise (σ², below the edge).
	eigenvalues := func(bands int, above ...float64) []float64 {
		v := slices.Repeat([]float64{sigma * sigma}, bands)
		for i, f := range above {
			v[i] = f * edge(bands)
		}
		return v
	}
	for _, tc := range []struct {
		name   string
		values []float64
		want   int
	}{
		{"few signal directions: the least", eigenvalues(224, 100, 10, 2), 16},
		{"twice the count", eigenvalues(224, 100, 50, 20, 10, 5, 3, 2, 1.5, 1.1, 1.01), 20},
		{"a direction just under the edge does not count", eigenvalues(224, 100, 50, 20, 10, 5, 3, 2, 1.5, 1.1, 0.99), 18},
		{"at most the bands", eigenvalues(20, slices.Repeat([]float64{5}, 15)...), 20},
		{"σ² alone is not signal on many bands", eigenvalues(425), 16},
	} {
		if got := EigenImages(tc.values, pixels, sigma); got != tc.want {
			t.Errorf("%s: %d eigen-images, want %d", tc.name, got, tc.want)
		}
	}
	// The edge itself: σ²(1+√(B/N))² is well above σ² on many bands, so
	// a direction at 1.05σ² (below the edge of 224 bands on 65 536
	// pixels, 1.12σ²) is noise.
	if got := EigenImages(eigenvalues(224, 100, 50, 20, 10, 5, 3, 2, 1.5, 1.1, 1.05*sigma*sigma/edge(224)), pixels, sigma); got != 18 {
		t.Errorf("a direction at 1.05σ²: %d eigen-images, want 18", got)
	}
}

// TestUseEigenImages: the chain works on eigen-images when they are at
// most a quarter of the bands, so never on 31 bands.
func TestUseEigenImages(t *testing.T) {
	for _, tc := range []struct {
		bands, k int
		want     bool
	}{
		{31, 16, false}, {31, 1, true}, {63, 16, false}, {64, 16, true}, {224, 16, true}, {224, 56, true}, {224, 57, false},
	} {
		if got := useEigenImages(tc.bands, tc.k); got != tc.want {
			t.Errorf("useEigenImages(%d bands, k %d) = %v, want %v", tc.bands, tc.k, got, tc.want)
		}
	}
}

// manyBandCube returns an h×w×bands cube of r smooth spectra in smooth
// spatial patterns, their weights random per pixel around a pattern.
func manyBandCube(rng *rand.Rand, h, w, bands, r int) *msi.Cube {
	c := msi.NewCube(h, w, bands)
	for j := range r {
		phase := rng.Float64() * 6
		for y := range h {
			for x := range w {
				a := 30 * (1 + math.Sin(float64(x*(j+1))/9+float64(y)/(5+float64(j))+phase))
				for b := range bands {
					s := 1 + math.Cos(phase+float64(b*(j+1))/float64(bands)*3)
					c.Data[(b*h+y)*w+x] += a * s
				}
			}
		}
	}
	return c
}

// TestEigenBasis checks the eigen-images of a many-band cube against an
// explicit computation: the means of the 4×4 blocks summed pixel by pixel
// (a last partial row and column of blocks left out), their covariance
// about the noisy cube's mean, gonum's eigendecomposition of it, the
// projector onto its top k eigenvectors and the eigen-images (Y − μ)E as a
// matrix product; k is the rule's (EigenImages of those eigenvalues, the
// noise σ/4 over the blocks).
func TestEigenBasis(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	const h, w, bands, sigma = 66, 63, 70, 10.0
	noisy := noise.Add(nil, manyBandCube(rng, h, w, bands, 3), sigma, 2)
	basis, err := eigenBasis(noisy, sigma, 0, 0)
	if err != nil || basis == nil {
		t.Fatalf("eigen-images %v, error %v: want eigen-images", basis != nil, err)
	}
	n := h * w
	bh, bw := h/eigenBlock, w/eigenBlock
	y := mat.NewDense(n, bands, nil)
	blocks := mat.NewDense(bh*bw, bands, nil)
	for b := range bands {
		mean := 0.0
		for _, v := range noisy.Band(b) {
			mean += v
		}
		mean /= float64(n)
		if math.Abs(mean-basis.Mean[b]) > 1e-9 {
			t.Fatalf("mean of band %d: %v, want %v", b, basis.Mean[b], mean)
		}
		for p, v := range noisy.Band(b) {
			y.Set(p, b, v-mean)
		}
		for i := range bh {
			for j := range bw {
				s := 0.0
				for dy := range eigenBlock {
					for dx := range eigenBlock {
						s += noisy.At(i*eigenBlock+dy, j*eigenBlock+dx, b)
					}
				}
				blocks.Set(i*bw+j, b, s/(eigenBlock*eigenBlock)-mean)
			}
		}
	}
	var cov mat.SymDense
	cov.SymOuterK(1/float64(bh*bw), blocks.T())
	var eig mat.EigenSym
	if !eig.Factorize(&cov, true) {
		t.Fatal("eigendecomposition failed")
	}
	values := eig.Values(nil)
	slices.Reverse(values)
	wantK := EigenImages(values, bh*bw, sigma/eigenBlock)
	if basis.K != wantK {
		t.Fatalf("%d eigen-images, want %d", basis.K, wantK)
	}
	if wantK*eigenBandRatio > bands || wantK < eigenImagesMin {
		t.Fatalf("test cube gives k = %d: choose another", wantK)
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := vecs.Slice(0, bands, bands-wantK, bands)
	e := mat.NewDense(bands, wantK, basis.E)
	var got, want mat.Dense
	got.Mul(e, e.T())
	want.Mul(top, top.T())
	if !mat.EqualApprox(&got, &want, 1e-8) {
		t.Error("the projector onto the eigen-images is not that of the top eigenvectors of the block means")
	}
	var z mat.Dense
	z.Mul(y, e)
	proj := basis.Project(noisy)
	for i := range wantK {
		for p, v := range proj.Band(i) {
			if math.Abs(v-z.At(p, i)) > 1e-8*(1+math.Abs(v)) {
				t.Fatalf("eigen-image %d, pixel %d: %v, want %v", i, p, v, z.At(p, i))
			}
		}
	}
	// Fewer bands than eigenBandRatio·eigenImagesMin: the bands.
	few, err := eigenBasis(noise.Add(nil, manyBandCube(rng, h, w, 63, 3), sigma, 2), sigma, 0, 0)
	if few != nil || err != nil {
		t.Errorf("63 bands: eigen-images %v, error %v; want the bands", few != nil, err)
	}
	// Fewer 4×4 blocks than bands (7×7 of 70 bands): the bands.
	if few, err = eigenBasis(noise.Add(nil, manyBandCube(rng, 28, 31, bands, 3), sigma, 2), sigma, 0, 0); few != nil || err != nil {
		t.Errorf("49 blocks of 70 bands: eigen-images %v, error %v; want the bands", few != nil, err)
	}
	// A least dimension above a quarter of the bands keeps the bands too.
	if few, err = eigenBasis(noisy, sigma, bands/eigenBandRatio+1, 0); few != nil || err != nil {
		t.Errorf("least dimension %d of %d bands: eigen-images %v, error %v; want the bands", bands/eigenBandRatio+1, bands, few != nil, err)
	}
}

// TestDenoiseEigenImages runs the chain on the eigen-images of a 70-band
// cube: the same output for 1 and 2 threads, well above the noisy PSNR, a
// result whose spectra (about the noisy mean) span at most k dimensions, and
// the number of eigen-images in the settings.
func TestDenoiseEigenImages(t *testing.T) {
	if testing.Short() {
		t.Skip("denoises a 70-band cube twice")
	}
	const h, w, bands, sigma = 40, 36, 70, 20.0
	clean := manyBandCube(rand.New(rand.NewPCG(7, 3)), h, w, bands, 3)
	noisy := noise.Add(nil, clean, sigma, 1)
	basis, err := eigenBasis(noisy, sigma, 0, 0)
	if err != nil || basis == nil {
		t.Fatalf("eigen-images %v, error %v: want eigen-images", basis != nil, err)
	}
	var outs []*msi.Cube
	for _, threads := range []int{1, 2} {
		d := &Denoiser{Options: Options{Threads: threads, Pilot: pilotForTests()}}
		out, res, err := d.Denoise(context.Background(), noisy, sigma)
		if err != nil {
			t.Fatal(err)
		}
		if i := slices.IndexFunc(res.Settings, func(p denoise.Param) bool { return p.Name == "eigen-images" }); i < 0 || res.Settings[i].Value != strconv.Itoa(basis.K) {
			t.Errorf("settings %v: want eigen-images=%d", res.Settings, basis.K)
		}
		outs = append(outs, out)
	}
	if !slices.Equal(outs[0].Data, outs[1].Data) {
		t.Error("1 and 2 threads give different outputs")
	}
	// The spectra about the noisy mean span at most k dimensions.
	own, err := subspace.Fit(outs[0], basis.Mean, basis.K)
	if err != nil {
		t.Fatal(err)
	}
	back := own.Reconstruct(own.Project(outs[0]))
	for i, v := range back.Data {
		if math.Abs(v-outs[0].Data[i]) > 1e-9*(1+math.Abs(v)) {
			t.Fatalf("voxel %d: %v is not in a subspace of %d dimensions (%v)", i, outs[0].Data[i], basis.K, v)
		}
	}
	before, _ := metrics.Evaluate(t.Context(), clean, noisy)
	after, _ := metrics.Evaluate(t.Context(), clean, outs[0])
	t.Logf("PSNR %.2f → %.2f dB on %d eigen-images", before.PSNR, after.PSNR, basis.K)
	if after.PSNR < before.PSNR+10 {
		t.Errorf("PSNR %.2f dB is not 10 dB above the noisy %.2f", after.PSNR, before.PSNR)
	}
}

// TestDenoiseBandsUnchanged: on fewer bands than the rule needs, the chain
// is the one on the bands, bit for bit (the 31-band results of before the
// eigen-images).
func TestDenoiseBandsUnchanged(t *testing.T) {
	noisy := noise.Add(nil, smoothCube(30, 30, 31), 30, 1)
	var outs []*msi.Cube
	for _, force := range []int{0, -1} {
		d := &Denoiser{Options: Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1}, eigenImages: force}
		out, res, err := d.Denoise(context.Background(), noisy, 30)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Settings {
			if p.Name == "eigen-images" {
				t.Errorf("31 bands: settings %v name eigen-images", res.Settings)
			}
		}
		outs = append(outs, out)
	}
	if !slices.Equal(outs[0].Data, outs[1].Data) {
		t.Error("31 bands: the output differs from the chain on the bands")
	}
}

// TestStripDenoiserKeepsBands: a Denoiser prepared for strips (its pilot
// given) without a basis keeps the bands of a cube that the rule would put
// on eigen-images: its pilot's dictionary was learned on band patches.
func TestStripDenoiserKeepsBands(t *testing.T) {
	const sigma = 20.0
	noisy := noise.Add(nil, manyBandCube(rand.New(rand.NewPCG(7, 3)), 40, 36, 70, 3), sigma, 1)
	o := Options{Pilot: pilotForTests(), Wiener: 1, Rounds: 1}
	d := &Denoiser{Options: o, pilot: &twodsc.Denoiser{Options: o.Resolve(sigma).Pilot}}
	out, res, err := d.Denoise(context.Background(), noisy, sigma)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Settings {
		if p.Name == "eigen-images" {
			t.Errorf("settings %v name eigen-images", res.Settings)
		}
	}
	if out.Bands != noisy.Bands {
		t.Errorf("%d bands out of %d", out.Bands, noisy.Bands)
	}
}

// TestBandPilot checks bandPilot on a cube of rank 3 whose spectra lie
// outside the span of a random orthonormal E of 6 directions: given its
// exact eigen-images and no noise to smooth (σ → 0), the pilot is the
// cube itself (the part outside E fitted, the part inside taken from the
// eigen-images); with noise, given the clean cube's eigen-images, the
// pilot is closer to the clean cube than those eigen-images on E are.
func TestBandPilot(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2))
	const h, w, bands, k = 20, 18, 40, 6
	clean := manyBandCube(rng, h, w, bands, 3)
	orth := cubetest.Orthonormal(rng, bands, k)
	e := &subspace.Basis{Bands: bands, K: k, Mean: subspace.MeanSpectrum(clean), E: make([]float64, bands*k)}
	for i := range bands {
		for j := range k {
			e.E[i*k+j] = orth.At(i, j)
		}
	}
	z := e.Project(clean)
	f, coords, err := bandPilot(clean, e, z, 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	// The pilot's basis is orthonormal, about the mean of the eigen-images'.
	fb := mat.NewDense(bands, f.K, f.E)
	var gram mat.Dense
	gram.Mul(fb.T(), fb)
	if !mat.EqualApprox(&gram, eye(f.K), 1e-12) || !slices.Equal(f.Mean, e.Mean) {
		t.Fatalf("basis of the pilot: FᵀF = %v, mean %v; want I and %v", mat.Formatted(&gram), f.Mean, e.Mean)
	}
	got := f.Reconstruct(coords)
	for i, v := range got.Data {
		if want := clean.Data[i]; math.Abs(v-want) > 1e-8*(1+math.Abs(want)) {
			t.Fatalf("voxel %d: %v, want %v", i, v, want)
		}
	}

	const sigma = 10.0
	noisy := noise.Add(nil, clean, sigma, 3)
	e.Mean = subspace.MeanSpectrum(noisy)
	f, coords, err = bandPilot(noisy, e, e.Project(clean), sigma)
	if err != nil {
		t.Fatal(err)
	}
	pilot := f.Reconstruct(coords)
	onE, _ := metrics.Evaluate(t.Context(), clean, e.Reconstruct(e.Project(clean)))
	fitted, _ := metrics.Evaluate(t.Context(), clean, pilot)
	t.Logf("PSNR of the clean cube's eigen-images on E %.2f dB, of the pilot %.2f dB", onE.PSNR, fitted.PSNR)
	if fitted.PSNR < onE.PSNR+10 {
		t.Errorf("pilot %.2f dB is not 10 dB above the eigen-images on E, %.2f", fitted.PSNR, onE.PSNR)
	}
}

// TestSmoothSpectrum: the coefficients of a spectrum in the DCT-II
// (written out with its cosines here) of magnitude at most the threshold
// are removed, the others kept.
func TestSmoothSpectrum(t *testing.T) {
	const bands, threshold = 23, 0.1
	rng := rand.New(rand.NewPCG(5, 5))
	basis := func(k, b int) float64 {
		a := math.Sqrt(2.0 / bands)
		if k == 0 {
			a = math.Sqrt(1.0 / bands)
		}
		return a * math.Cos(math.Pi*float64((2*b+1)*k)/(2*bands))
	}
	u, want := make([]float64, bands), make([]float64, bands)
	for k := range bands {
		c := threshold * (2*rng.Float64() - 1) // below the threshold
		if k%3 == 0 {
			c = math.Copysign(threshold+rng.Float64(), c) // above it
		}
		for b := range bands {
			u[b] += c * basis(k, b)
			if k%3 == 0 {
				want[b] += c * basis(k, b)
			}
		}
	}
	smoothSpectrum(u, groupwiener.DCTMatrix(bands), threshold)
	for b, v := range u {
		if math.Abs(v-want[b]) > 1e-12 {
			t.Fatalf("band %d: %v, want %v", b, v, want[b])
		}
	}
}

// eye returns the n×n identity.
func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}

// TestRoundSpectra: every direction of the repair's block means is kept
// with the DCT coefficients above 3(σ/4)/√(nλ), λ its eigenvalue over n
// block means, the others removed; directions of eigenvalue not above
// zero are left out, and none left gives nil.
func TestRoundSpectra(t *testing.T) {
	const bands, k, n, sigma = 24, 5, 100, 8.0
	rng := rand.New(rand.NewPCG(3, 8))
	dct := groupwiener.DCTMatrix(bands)
	eigenvalues := []float64{4, 2, 1, 0.5, 0}
	full := &subspace.Basis{Bands: bands, K: k, E: make([]float64, bands*k), Eigenvalues: eigenvalues}
	want := mat.NewDense(bands, k, nil)
	for i := range k {
		threshold := 3 * sigma / 4 / math.Sqrt(n*max(eigenvalues[i], 1e-3))
		for c := range bands {
			coef := threshold * 0.9 * (2*rng.Float64() - 1) // removed
			kept := c%4 == i%4
			if kept {
				coef = math.Copysign(threshold*(1.1+rng.Float64()), coef)
			}
			for b := range bands {
				full.E[b*k+i] += coef * dct[c*bands+b]
				if kept {
					want.Set(b, i, want.At(b, i)+coef*dct[c*bands+b])
				}
			}
		}
	}
	got := roundSpectra(full, n, 8, sigma) // more asked than there are
	if r, c := got.Dims(); r != bands || c != k-1 {
		t.Fatalf("spectra %d×%d, want %d×%d: the direction of eigenvalue 0 left out", r, c, bands, k-1)
	}
	if !mat.EqualApprox(got, want.Slice(0, bands, 0, k-1), 1e-12) {
		t.Errorf("spectra\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(want.Slice(0, bands, 0, k-1)))
	}
	if got := roundSpectra(full, n, 2, sigma); !mat.EqualApprox(got, want.Slice(0, bands, 0, 2), 1e-12) {
		t.Error("the two leading spectra are not the first two of all")
	}
	full.Eigenvalues = []float64{0, -1, -1, -1, -1}
	if got := roundSpectra(full, n, k, sigma); got != nil {
		t.Errorf("no eigenvalue above zero: spectra %v, want nil", got)
	}
}

// TestPilotMoment: the second moment of a pilot given on a basis
// (directions not orthonormal, a mean off the spectrum it is taken about)
// is the one of its pixels on the bands.
func TestPilotMoment(t *testing.T) {
	const h, w, bands, k = 6, 5, 11, 4
	rng := rand.New(rand.NewPCG(6, 2))
	on := &subspace.Basis{Bands: bands, K: k, Mean: make([]float64, bands), E: make([]float64, bands*k)}
	about := make([]float64, bands)
	for b := range bands {
		on.Mean[b], about[b] = 50+10*rng.NormFloat64(), 50+10*rng.NormFloat64()
		for i := range k {
			on.E[b*k+i] = rng.NormFloat64()
		}
	}
	x := msi.NewCube(h, w, k)
	for i := range x.Data {
		x.Data[i] = 5*rng.NormFloat64() + 2
	}
	pixels := subspace.NewMoments(make([]float64, bands))
	pixels.Add(on.Reconstruct(x))
	want := pixels.SecondMoment(about)
	if got := pilotMoment(on, x, about); !mat.EqualApprox(got, want, 1e-9) {
		t.Errorf("moment\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(want))
	}
}

// TestStripSpectra: a last pass's spectra on a strip are roundSpectra's of
// the strip's pilot moment and the whole cube's, each weighted by its
// blocks (the strip's pixels in blocks of eigenBlock×eigenBlock).
func TestStripSpectra(t *testing.T) {
	const h, w, bands, k, sigma = 16, 12, 20, 3, 2.0
	rng := rand.New(rand.NewPCG(2, 9))
	orth := cubetest.Orthonormal(rng, bands, k)
	on := &subspace.Basis{Bands: bands, K: k, Mean: make([]float64, bands), E: make([]float64, bands*k)}
	mean := make([]float64, bands)
	for b := range bands {
		on.Mean[b], mean[b] = 100+rng.NormFloat64(), 100+rng.NormFloat64()
		for i := range k {
			on.E[b*k+i] = orth.At(b, i)
		}
	}
	x := msi.NewCube(h, w, k)
	for i := range x.Data {
		x.Data[i] = 20 * rng.NormFloat64()
	}
	// The whole cube's moment: a spectrum the strip's pilot does not hold.
	other := make([]float64, bands)
	for b := range other {
		other[b] = rng.NormFloat64()
	}
	moment := mat.NewSymDense(bands, nil)
	moment.SymOuterK(300, mat.NewDense(bands, 1, other))
	const blocks = 36
	later := &laterBases{moment: moment, mean: mean, blocks: blocks}
	strip := float64((h / eigenBlock) * (w / eigenBlock))
	want := pilotMoment(on, x, mean)
	want.ScaleSym(strip/(strip+blocks), want)
	var weighted mat.SymDense
	weighted.ScaleSym(blocks/(strip+blocks), moment)
	want.AddSym(want, &weighted)
	full, err := subspace.FitMoment(want, mean, bands)
	if err != nil {
		t.Fatal(err)
	}
	got := stripSpectra(on, x, later, 3, sigma)
	if expect := roundSpectra(full, int(strip)+blocks, 3, sigma); !mat.EqualApprox(got, expect, 1e-12) {
		t.Errorf("spectra\n%v\nwant\n%v", mat.Formatted(got), mat.Formatted(expect))
	}
}

// TestWithinSpectra: the pilot's coordinates on its new basis are its
// projection, on the bands, on the span of the spectra (a zero column
// left out) and of its mean less μ, found here by least squares; the
// basis is orthonormal, with the old one's mean, and the pilot's mean is
// kept.
func TestWithinSpectra(t *testing.T) {
	const h, w, bands, k = 5, 4, 30, 6
	rng := rand.New(rand.NewPCG(4, 1))
	orth := cubetest.Orthonormal(rng, bands, k)
	on := &subspace.Basis{Bands: bands, K: k, Mean: make([]float64, bands), E: make([]float64, bands*k)}
	for b := range bands {
		on.Mean[b] = 100 * rng.Float64()
		for i := range k {
			on.E[b*k+i] = orth.At(b, i)
		}
	}
	x := msi.NewCube(h, w, k)
	for i := range x.Data {
		x.Data[i] = 10*rng.NormFloat64() + 3
	}
	spectra := mat.NewDense(bands, 4, nil)
	for b := range bands {
		for i := range 3 { // column 3 stays zero
			spectra.Set(b, i, rng.NormFloat64())
		}
	}
	f, got := withinSpectra(on, x, spectra)
	if f.K != 4 || got.Bands != 4 || !slices.Equal(f.Mean, on.Mean) {
		t.Fatalf("basis of %d directions, coordinates of %d, mean %v; want 4, 4 and the old mean", f.K, got.Bands, f.Mean)
	}
	fb := mat.NewDense(bands, f.K, f.E)
	var gram mat.Dense
	gram.Mul(fb.T(), fb)
	if !mat.EqualApprox(&gram, eye(f.K), 1e-12) {
		t.Fatalf("FᵀF = %v, want I", mat.Formatted(&gram))
	}
	// The oracle: A = [the three spectra, the pilot's mean less μ], the
	// projection A·(AᵀA)⁻¹Aᵀ(p − μ) of every pixel's p on the bands.
	pilot := on.Reconstruct(x)
	pilotMean := subspace.MeanSpectrum(pilot)
	a := mat.NewDense(bands, 4, nil)
	a.Slice(0, bands, 0, 3).(*mat.Dense).Copy(spectra.Slice(0, bands, 0, 3))
	for b := range bands {
		a.Set(b, 3, pilotMean[b]-on.Mean[b])
	}
	n := h * w
	centred := mat.NewDense(bands, n, nil)
	for b := range bands {
		for p, v := range pilot.Band(b) {
			centred.Set(b, p, v-on.Mean[b])
		}
	}
	var coef, projected mat.Dense
	if err := coef.Solve(a, centred); err != nil { // least squares
		t.Fatal(err)
	}
	projected.Mul(a, &coef)
	back := f.Reconstruct(got)
	for b := range bands {
		for p, v := range back.Band(b) {
			if want := projected.At(b, p) + on.Mean[b]; math.Abs(v-want) > 1e-9*(1+math.Abs(want)) {
				t.Fatalf("band %d, pixel %d: %v, want %v", b, p, v, want)
			}
		}
	}
	for b, m := range subspace.MeanSpectrum(back) {
		if math.Abs(m-pilotMean[b]) > 1e-9*(1+math.Abs(m)) {
			t.Fatalf("band %d: mean %v, the pilot's %v", b, m, pilotMean[b])
		}
	}
}

// sameColumnsUpToSign reports whether every column of a equals b's, or
// its negative, within tol (eigenvectors fitted on sums taken in another
// order may come out of the opposite sign).
func sameColumnsUpToSign(a, b *mat.Dense, tol float64) bool {
	ra, ca := a.Dims()
	rb, cb := b.Dims()
	if ra != rb || ca != cb {
		return false
	}
	for j := range ca {
		same, opposite := true, true
		for i := range ra {
			same = same && math.Abs(a.At(i, j)-b.At(i, j)) <= tol
			opposite = opposite && math.Abs(a.At(i, j)+b.At(i, j)) <= tol
		}
		if !same && !opposite {
			return false
		}
	}
	return true
}
