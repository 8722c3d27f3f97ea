package nonlocal

import (
	"context"
	"math"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/report"
	"tdsc/internal/stages/groupwiener"
	"tdsc/internal/stages/subspace"
	"tdsc/internal/tile"
)

// The rank of the low-rank rounds in strips of a cube on eigen-images.
//
// A whole run counts it with ChooseRank along the principal directions of
// bandPilot's pilot: the spectra of a denoised estimate, each smoothed in
// the DCT, along which the noisy cube's power beyond σ² is measured
// against rankZ standard errors. Strips share one rank chosen before the
// first strip, with no estimate of the cube yet; the estimate they have is
// the block means that the eigen-images' basis is fitted on (noise σ/4),
// and their principal spectra are E's directions. Those are tilted by the
// noise (E is fitted on the same pixels), and along them the noisy cube
// shows noise beyond σ²: StreamedRank on the eigen-images lowered every
// direction's power by the most that noise shows there (eigenImageExcess,
// the Marchenko–Pastur edge), twice the threshold at σ = 30 on a 256×256
// crop of 224 bands, and counted 7, 8 and 8 on balloons, superballs and
// watercolors where the whole run counts 9, 9 and 8 (superballs' strips
// 0.24 dB below the whole run, docs/results.md). A direction that holds
// signal is tilted less than the edge says, and the tilt is noise spread
// over all the bands, where the signal's spectrum is smooth: smoothed as
// bandPilot smooths its spectra, E's directions lose most of it, and the
// count along them needs no excess, as the whole run's needs none.

// smoothedDirections returns E's directions (the leading K of e, fitted on
// the spectral covariance of blocks block means with white noise of
// standard deviation blockSigma) each smoothed in the DCT (smoothSpectrum,
// its coefficients of at most spectrumZ standard deviations of the
// direction's noise set to zero), then made orthonormal in their order
// (Gram–Schmidt), with e's mean: the directions along which strips count
// the rank (streamedEigenRank). It stops before the first direction whose
// eigenvalue is at most the noise's variance or whose smoothed spectrum is
// zero (it holds nothing to count), and returns nil if the first is such.
//
// The noise of a direction: an eigenvector of a sample covariance of N
// pixels with eigenvalue λ, among directions of noise alone of variance
// s², has in each of them an error of variance λs²/(N(λ − s²)²) (Anderson's
// asymptotic covariance of sample eigenvectors), and the noise's
// directions are almost all of the bands'. For strong directions it is
// s²/(Nλ), bandPilot's; for weak ones, whose eigenvector the noise tilts
// most, it is larger, and the smoothing keeps fewer coefficients.
func smoothedDirections(e *subspace.Basis, blocks int, blockSigma float64) *subspace.Basis {
	bands, s2 := e.Bands, blockSigma*blockSigma
	dct := groupwiener.DCTMatrix(bands)
	var columns [][]float64
	for i := range e.K {
		lambda := e.Eigenvalues[i]
		if lambda <= s2 {
			break
		}
		u := make([]float64, bands)
		for b := range bands {
			u[b] = e.E[b*e.K+i]
		}
		smoothSpectrum(u, dct, spectrumZ*blockSigma*math.Sqrt(lambda/float64(blocks))/(lambda-s2))
		if mat.Norm(mat.NewVecDense(bands, u), 2) == 0 {
			break
		}
		columns = append(columns, u)
	}
	m := len(columns)
	if m == 0 {
		return nil
	}
	u := mat.NewDense(bands, m, nil)
	for i, c := range columns {
		u.SetCol(i, c)
	}
	var qr mat.QR
	qr.Factorize(u)
	var q mat.Dense
	qr.QTo(&q)
	d := &subspace.Basis{Bands: bands, K: m, Mean: e.Mean, E: make([]float64, bands*m), Eigenvalues: e.Eigenvalues}
	for b := range bands {
		for i := range m {
			d.E[b*m+i] = q.At(b, i)
		}
	}
	return d
}

// streamedEigenRank returns the rank of the low-rank rounds for strips of
// the noisy cube of r (its bands) on the eigen-images of basis e, fitted
// on the given number of block means (streamedEigenBasis), with noise σ:
// ChooseRank's rule (rankFromPower) on the noisy cube's power beyond σ²
// along e's smoothed directions (smoothedDirections), read a window of
// lines at a time within the cores of strips, each core line once; the
// directions past those smoothedDirections keeps hold nothing. The power
// is summed in the order of the lines, the same for any strips' share and
// threads. It stops with ctx.Err() between windows when ctx is cancelled.
func streamedEigenRank(ctx context.Context, r tile.Reader, strips []tile.Strip, e *subspace.Basis, blocks int, sigma float64, log report.Reporter) (int, error) {
	h, w, b := r.Size()
	power := make([]float64, e.K)
	d := smoothedDirections(e, blocks, sigma/eigenBlock)
	if d == nil {
		return rankFromPower(power, sigma, h*w), nil
	}
	moments := subspace.NewMoments(make([]float64, d.K)) // about μ: the projections are centred
	err := eachCoreWindow(ctx, strips, h, streamLines(w, b, 1), log, func(y0, y1 int) error {
		c, err := r.ReadLines(y0, y1-y0)
		if err != nil {
			return err
		}
		moments.Add(d.Project(c))
		return nil
	})
	if err != nil {
		return 0, err
	}
	second := moments.SecondMoment(nil)
	for i := range d.K {
		power[i] = second.At(i, i) - sigma*sigma
	}
	return rankFromPower(power, sigma, moments.N), nil
}
