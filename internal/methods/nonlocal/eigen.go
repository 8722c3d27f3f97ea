package nonlocal

import (
	"math"

	"tdsc/internal/msi"
	"tdsc/internal/stages/subspace"
)

// The band handling of the chain: on a cube of many bands the pilot, the
// Wiener passes and the low-rank rounds run on its k spectral eigen-images
// instead of its B bands.
//
// The signal of a natural scene lies close to a subspace of a few tens of
// dimensions whatever the band count, while the pilot and the Wiener passes
// cost about as much per band as per pixel. With μ the noisy cube's mean
// spectrum and E (B×k) the leading eigenvectors of its spectral covariance,
// the eigen-images Z = (Y − μ)E keep white noise of the same σ (E is
// orthonormal), so the chain denoises Z as it would a k-band cube and
// returns ẐEᵀ + μ: what lies outside the subspace, noise but for a signal
// power too small to be told from it, is discarded. The low-rank rounds
// discard it anyway (their estimate lies in a subspace of the pilot's),
// but the full-spectrum Wiener pass does not, and on 31 bands it is worth
// 0.3–0.6 dB over Wiener passes on eigen-images: the chain stays on the
// bands unless eigen-images cut them by eigenBandRatio (useEigenImages).

// eigenImagesMin is the least number of eigen-images the chain works on:
// the least subspace of the first Wiener pass (WienerSubspace), and above
// ChooseRank's ranks at σ ≥ 10 on every CAVE scene (at most 15), so the
// low-rank rounds find every direction they keep. On the 256×256 balloons
// crop resampled to 224 bands, 16 eigen-images fitted on the noisy cube
// (σ = 30) hold the clean cube to 49.6 dB (55.9 dB at σ = 10), far above
// what the method reaches.
const eigenImagesMin = wienerSubspaceMin

// eigenImagesMargin multiplies the number of directions whose power the
// noisy cube shows to be signal: weaker directions of the signal (those the
// low-rank rounds keep once the pilot has removed most noise) hide below the
// noise in the noisy cube's eigenvalues.
const eigenImagesMargin = 2

// eigenBandRatio is how many times fewer eigen-images than bands the chain
// needs to work on eigen-images (useEigenImages).
const eigenBandRatio = 4

// EigenImages returns the number k of spectral eigen-images that the chain
// works on for a noisy cube of the given number of pixels whose spectral
// covariance (about its mean) has the given eigenvalues (all B of them, in
// decreasing order) under white noise of standard deviation sigma:
// eigenImagesMargin times the number of eigenvalues above the largest that
// noise alone reaches, at least eigenImagesMin and at most B.
//
// Noise alone spreads the eigenvalues of the sample covariance of N pixels
// of B bands up to about σ²(1 + √(B/N))² (Marchenko–Pastur), so a signal
// direction counts when its eigenvalue exceeds that edge by more than
// rankZ standard errors σ²·√(2/N) (as ChooseRank counts them). Without the
// edge, every second direction of a 224-band cube would count at σ = 30.
func EigenImages(eigenvalues []float64, pixels int, sigma float64) int {
	bands, n := float64(len(eigenvalues)), float64(pixels)
	s2 := sigma * sigma
	edge := s2*(1+math.Sqrt(bands/n))*(1+math.Sqrt(bands/n)) + rankZ*s2*math.Sqrt(2/n)
	signal := 0
	for _, v := range eigenvalues {
		if v <= edge {
			break
		}
		signal++
	}
	return min(len(eigenvalues), max(eigenImagesMin, eigenImagesMargin*signal))
}

// useEigenImages reports whether the chain works on k eigen-images of a
// cube of the given number of bands: when they are at most a quarter of the
// bands (eigenBandRatio). Below that ratio the full-spectrum chain costs at
// most eigenBandRatio times the eigen-image chain and keeps what lies
// outside the subspace; a cube of fewer than eigenBandRatio·eigenImagesMin
// bands (64; every CAVE scene's 31) always keeps it.
func useEigenImages(bands, k int) bool {
	return bands >= eigenBandRatio*k
}

// eigenBasis returns the basis of the eigen-images that the chain works on
// for the noisy cube y with noise sigma, nil if it works on the bands: k =
// EigenImages of y's spectral covariance, raised to the given least
// dimension (the low-rank rank and the pilot's spectral depth, which
// must fit in k bands). A cube too small in bands for any k is not fitted.
// A nonzero force overrides the rule: -1 keeps the bands, k > 0 (at most
// the bands) works on k eigen-images.
func eigenBasis(y *msi.Cube, sigma float64, least, force int) (*subspace.Basis, error) {
	if force < 0 || force == 0 && !useEigenImages(y.Bands, max(eigenImagesMin, least)) {
		return nil, nil
	}
	full, err := subspace.Fit(y, nil, y.Bands)
	if err != nil {
		return nil, err
	}
	if force > 0 {
		return full.Leading(force), nil
	}
	k := max(least, EigenImages(full.Eigenvalues, y.Height*y.Width, sigma))
	if !useEigenImages(y.Bands, k) {
		return nil, nil
	}
	return full.Leading(k), nil
}
