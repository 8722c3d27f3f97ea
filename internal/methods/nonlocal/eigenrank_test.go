package nonlocal

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/stages/groupwiener"
	"tdsc/internal/stages/subspace"
	"tdsc/internal/testenv/cubetest"
	"tdsc/internal/tile"
	"tdsc/internal/tile/tiletest"
)

// TestStripsEigenRank: strips of a many-band cube on eigen-images choose
// the rank that ChooseRank chooses with the clean cube as its estimate (the
// whole run's rule along the directions of an estimate), also where
// directions hold only about twice the threshold of signal: the count along
// the eigen-images with their noise's excess (the Marchenko–Pastur edge,
// 1.4 thresholds here) missed those. The spectra are smooth, as materials'
// are, their coefficients the same over 8×8 blocks of pixels.
func TestStripsEigenRank(t *testing.T) {
	for _, tc := range []struct {
		powers []float64 // in units of ChooseRank's threshold, descending
		sigma  float64
	}{
		{append(strongPowers(7), 2, 2), 30},
		{append(strongPowers(6), 3, 2, 1.0/3), 30},
		{append(strongPowers(5), 1.0/3), 30},
		{append(strongPowers(9), 2.5), 10},
		{strongPowers(11), 50},
	} {
		name := fmt.Sprintf("σ %v, powers %v", tc.sigma, tc.powers)
		clean, noisy := smoothCubeWithPowers(tc.powers, tc.sigma)
		want, err := ChooseRank(noisy, clean, tc.sigma)
		if err != nil {
			t.Fatal(err)
		}
		for _, lines := range []int{16, eigenRankSize} {
			d := &Denoiser{Options: Options{Pilot: pilotForTests()}}
			strips := tile.Plan(eigenRankSize, lines, d.StripGeometry(tc.sigma))
			m, _, err := denoise.PrepareStrips(context.Background(), d, tiletest.Lines{Cube: noisy}, strips, tc.sigma)
			if err != nil {
				t.Fatal(err)
			}
			prepared := m.(*Denoiser)
			if prepared.basis == nil {
				t.Fatalf("%s: strips on the bands, want eigen-images", name)
			}
			if got := prepared.Options.Rank; got != want {
				t.Errorf("%s, strips of %d lines: rank %d, ChooseRank with the clean estimate %d", name, lines, got, want)
			}
		}
	}
}

// eigenRankSize and eigenRankBands are the height and width, and the
// bands, of smoothCubeWithPowers' cubes: enough bands for eigen-images
// (useEigenImages), and 4×4 blocks at least as many as the bands.
const eigenRankSize, eigenRankBands = 96, 96

// smoothCubeWithPowers returns a clean cube of eigenRankSize² pixels and
// eigenRankBands bands whose spectra have the given powers (in units of
// ChooseRank's threshold for noise σ) along orthonormal smooth spectra
// (Gram–Schmidt on cosines of the first frequencies across the bands), the
// coefficients random per block of 8×8 pixels and the same within it, and
// the cube with noise σ added.
func smoothCubeWithPowers(powers []float64, sigma float64) (clean, noisy *msi.Cube) {
	const size, bands, block = eigenRankSize, eigenRankBands, 8
	n := len(powers)
	threshold := rankZ * sigma * sigma * math.Sqrt(2.0/(size*size))
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	spectra := mat.NewDense(bands, n, nil)
	for j := range n {
		for b := range bands {
			spectra.Set(b, j, math.Cos(math.Pi*float64(j)*(float64(b)+0.5)/bands+rng.Float64()/4))
		}
	}
	var qr mat.QR
	qr.Factorize(spectra)
	var q mat.Dense
	qr.QTo(&q)
	clean = msi.NewCube(size, size, bands)
	blocks := size / block
	for i := range blocks * blocks {
		for j, p := range powers {
			c := rng.NormFloat64() * math.Sqrt(p*threshold)
			for y := i / blocks * block; y < (i/blocks+1)*block; y++ {
				for x := i % blocks * block; x < (i%blocks+1)*block; x++ {
					for b := range bands {
						clean.Data[(b*size+y)*size+x] += c * q.At(b, j)
					}
				}
			}
		}
	}
	for i := range clean.Data {
		clean.Data[i] += 100
	}
	return clean, noise.Add(nil, clean, sigma, 1)
}

// TestSmoothedDirections checks smoothedDirections against an explicit
// computation on a random basis: each direction's DCT coefficients of at
// most spectrumZ·s·√(λ/N)/(λ − s²) in magnitude set to zero, the spectra
// then orthonormal with the same nested spans (the projector on the first
// j directions equal to that on the first j smoothed spectra); and its
// stops: before a direction whose eigenvalue is at most s², and before a
// direction whose smoothed spectrum is zero.
func TestSmoothedDirections(t *testing.T) {
	const bands, k, blocks, s = 40, 6, 500, 1.0
	rng := rand.New(rand.NewPCG(3, 3))
	e := &subspace.Basis{Bands: bands, K: k, Mean: make([]float64, bands), Eigenvalues: []float64{90, 40, 20, 12, 9, 8}}
	e.Eigenvalues = append(e.Eigenvalues, make([]float64, bands-k)...)
	q := cubetest.Orthonormal(rng, bands, k)
	e.E = mat.DenseCopyOf(q).RawMatrix().Data
	dct := groupwiener.DCTMatrix(bands)
	smoothed := mat.NewDense(bands, k, nil)
	for i := range k {
		lambda := e.Eigenvalues[i]
		threshold := spectrumZ * s * math.Sqrt(lambda/blocks) / (lambda - s*s)
		for c := range bands {
			coef := 0.0
			for b := range bands {
				coef += dct[c*bands+b] * q.At(b, i)
			}
			if math.Abs(coef) <= threshold {
				continue
			}
			for b := range bands {
				smoothed.Set(b, i, smoothed.At(b, i)+coef*dct[c*bands+b])
			}
		}
	}
	d := smoothedDirections(e, blocks, s)
	if directions(d) != k {
		t.Fatalf("%d directions, want %d", directions(d), k)
	}
	got := mat.NewDense(bands, k, d.E)
	var gram mat.Dense
	gram.Mul(got.T(), got)
	for i := range k {
		for j := range k {
			if want := b2f(i == j); math.Abs(gram.At(i, j)-want) > 1e-12 {
				t.Fatalf("DᵀD[%d, %d] = %v, want %v", i, j, gram.At(i, j), want)
			}
		}
	}
	for j := 1; j <= k; j++ {
		if p, w := projector(got.Slice(0, bands, 0, j)), projector(smoothed.Slice(0, bands, 0, j)); !mat.EqualApprox(p, w, 1e-10) {
			t.Errorf("the first %d directions do not span the first %d smoothed spectra", j, j)
		}
	}
	// A weak direction: its eigenvalue at most s², then one whose every
	// coefficient is under its threshold.
	weak := *e
	weak.Eigenvalues = append([]float64{90, 40, s * s}, e.Eigenvalues[3:]...)
	if got := directions(smoothedDirections(&weak, blocks, s)); got != 2 {
		t.Errorf("an eigenvalue of s² third: %d directions, want 2", got)
	}
	weak.Eigenvalues = append([]float64{90, 40, s*s + 1e-9}, e.Eigenvalues[3:]...)
	if got := directions(smoothedDirections(&weak, blocks, s)); got != 2 {
		t.Errorf("a third direction smoothed to zero: %d directions, want 2", got)
	}
	weak.Eigenvalues = append([]float64{s * s}, e.Eigenvalues[1:]...)
	if got := directions(smoothedDirections(&weak, blocks, s)); got != 0 {
		t.Errorf("no direction above the noise: %d directions, want none", got)
	}
}

// projector returns AA⁺, the orthogonal projector on the span of a's
// columns.
func projector(a mat.Matrix) *mat.Dense {
	var ata, inv, p, ap mat.Dense
	ata.Mul(a.T(), a)
	if err := inv.Inverse(&ata); err != nil {
		panic(err)
	}
	ap.Mul(a, &inv)
	p.Mul(&ap, a.T())
	return &p
}

// directions returns the number of directions of d, 0 for nil.
func directions(d *subspace.Basis) int {
	if d == nil {
		return 0
	}
	return d.K
}

// b2f returns 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
