package nonlocal

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/report"
	"tdsc/internal/stages/groupwiener"
	"tdsc/internal/stages/subspace"
	"tdsc/internal/tile"
)

// The band handling of the chain: on a cube of many bands the pilot and
// the Wiener passes run on its k spectral eigen-images instead of its B
// bands.
//
// The signal of a natural scene lies close to a subspace of a few tens of
// dimensions whatever the band count, while the pilot and the Wiener passes
// cost about as much per band as per pixel. With μ the noisy cube's mean
// spectrum and E (B×k) the leading spectral directions of its block means
// (eigenBlock), the eigen-images Z = (Y − μ)E keep white noise of the same
// σ (E is orthonormal), so the chain denoises Z as it would a k-band cube.
// Its low-rank rounds (which work in a subspace of a few dimensions
// anyway) then take a pilot made of the estimated eigen-images with
// spectra not confined to E (bandPilot), on that pilot's few coordinates.
// The noise outside the subspace is discarded. The low-rank rounds on the bands discard what lies outside a
// subspace of their pilot's too, but the full-spectrum Wiener pass does
// not, and on 31 bands it is worth 0.3–0.6 dB over Wiener passes on
// eigen-images: the chain stays on the bands unless eigen-images cut them
// by eigenBandRatio (useEigenImages).

// eigenImagesMin is the least number of eigen-images the chain works on:
// the least subspace of the first Wiener pass (WienerSubspace), and above
// ChooseRank's ranks at σ ≥ 10 on every CAVE scene (at most 15), so the
// low-rank rounds find every direction they keep. More do not help: on
// the 256×256 balloons crop resampled to 224 bands at σ = 30 the chain ends
// at 48.4 dB on 16 and on 32 of them (docs/results.md).
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
	edge := noiseEdge(len(eigenvalues), pixels, sigma)
	signal := 0
	for _, v := range eigenvalues {
		if v <= edge {
			break
		}
		signal++
	}
	return min(len(eigenvalues), max(eigenImagesMin, eigenImagesMargin*signal))
}

// noiseEdge returns the eigenvalue of the sample covariance of a cube of
// the given bands and pixels under white noise of standard deviation
// sigma above which EigenImages counts a direction as signal.
func noiseEdge(bands, pixels int, sigma float64) float64 {
	return sigma*sigma + eigenImageExcess(bands, pixels, sigma) + rankZ*sigma*sigma*math.Sqrt(2/float64(pixels))
}

// eigenImageExcess returns the most power beyond σ² that white noise of
// standard deviation sigma shows along the leading eigenvectors of the
// sample covariance of a cube of the given bands and pixels: the
// Marchenko–Pastur edge σ²(1 + √(B/N))² less σ². The eigen-images are
// such directions of the block means (noise σ/s, N/s² pixels), so the noise
// in the ones that hold no signal has about this excess: ChooseRank's
// threshold, made for directions that the noise did not choose, would count
// them. (Fitted on the pixels themselves, the eigen-images made ChooseRank
// keep all 16 of them on the balloons crop at 224 bands.) Strips count the
// rank along E's directions smoothed, which sheds most of the excess
// (streamedEigenRank). A whole run counts along the directions of
// bandPilot's estimate, which the noise did not choose, and needs no
// excess.
func eigenImageExcess(bands, pixels int, sigma float64) float64 {
	r := math.Sqrt(float64(bands) / float64(pixels))
	return sigma * sigma * ((1+r)*(1+r) - 1)
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

// eigenBlock is the side of the blocks of pixels whose mean spectra the
// eigen-images are fitted on (eigenBasis). The noisy cube's own covariance
// tells a direction of signal from noise only when its power exceeds about
// σ²·√(B/N) (the Marchenko–Pastur spread), and fitted on it 16 eigen-images
// of the balloons crop at 224 bands (σ = 30) hold the clean cube to 49.6
// dB, where the chain on the bands ends at 49.4. The means of s×s blocks
// have noise σ²/s² over N/s² pixels, which lowers that limit s-fold while
// the signal, spatially smooth at that scale, keeps most of its power: 2×2
// blocks give 51.1 dB, 4×4 52.5, 6×6 52.7; and the covariance costs 1/s².
const eigenBlock = 4

// blockMeans returns the cube of the mean spectra of the s×s blocks of y
// (the last rows and columns that do not fill a block left out).
func blockMeans(y *msi.Cube, s int) *msi.Cube {
	h, w := y.Height/s, y.Width/s
	out := msi.NewCube(h, w, y.Bands)
	parallel.Each(y.Bands, func(b int) {
		src, dst := y.Band(b), out.Band(b)
		for i := range h * s {
			row := dst[i/s*w:][:w]
			for j, v := range src[i*y.Width:][:w*s] {
				row[j/s] += v
			}
		}
		for i := range dst {
			dst[i] /= float64(s * s)
		}
	})
	return out
}

// eigenBasis returns the basis of the eigen-images that the chain works on
// for the noisy cube y with noise sigma, nil if it works on the bands: the
// leading directions of the spectral covariance of its eigenBlock×eigenBlock
// block means about y's mean spectrum, k = EigenImages of that covariance
// (noise σ/eigenBlock), raised to the given least dimension (the low-rank
// rank and the pilot's spectral depth, which must fit in k bands). A cube
// too small in bands for any k is not fitted, and one of fewer blocks than
// bands keeps its bands: the covariance of its block means has a rank
// below the bands, and its directions past that rank are arbitrary. A
// nonzero force overrides the rule (not the blocks): -1 keeps the bands,
// k > 0 (at most the bands) works on k eigen-images.
func eigenBasis(y *msi.Cube, sigma float64, least, force int) (*subspace.Basis, error) {
	if !mayUseEigenImages(y.Height, y.Width, y.Bands, least, force) {
		return nil, nil
	}
	blocks := blockMeans(y, eigenBlock)
	full, err := subspace.Fit(blocks, subspace.MeanSpectrum(y), y.Bands)
	if err != nil {
		return nil, err
	}
	return leadingEigenImages(full, full.Eigenvalues, blocks.Height*blocks.Width, sigma, least, force), nil
}

// mayUseEigenImages reports whether a cube of height×width×bands may be
// put on eigen-images (eigenBasis) before its block means are fitted.
func mayUseEigenImages(height, width, bands, least, force int) bool {
	return force >= 0 && (height/eigenBlock)*(width/eigenBlock) >= bands &&
		(force != 0 || useEigenImages(bands, max(eigenImagesMin, least)))
}

// leadingEigenImages returns eigenBasis's basis from the basis of all the
// directions of the block means (blocks of them), nil for the bands, k
// counted on the given eigenvalues of their covariance (full's own, or
// those of the covariance whose noise is white, repairCount).
func leadingEigenImages(full *subspace.Basis, eigenvalues []float64, blocks int, sigma float64, least, force int) *subspace.Basis {
	if force > 0 {
		return full.Leading(force)
	}
	k := max(least, EigenImages(eigenvalues, blocks, sigma/eigenBlock))
	if !useEigenImages(full.Bands, k) {
		return nil
	}
	return full.Leading(k)
}

// streamedEigenBasis returns what eigenBasis returns for the noisy cube of
// r, from statistics of windows of at most the given number of lines (a
// multiple of eigenBlock, so that every window holds whole rows of the
// whole cube's blocks): the sums of the pixels for the mean spectrum μ and
// the moments of the block means (subspace.Moments), their covariance
// taken about μ at the end. Each line is read once. The basis agrees with
// eigenBasis's to rounding (the sums are the same, in another order).
// When r is a denoise.RepairLines, the moments are those of the repair's
// later passes instead (laterMoments), and it returns what else the
// repair's passes take from them too (laterBases; nil for other lines).
// It reports the lines read on log and stops with ctx.Err() between
// windows when ctx is cancelled.
func streamedEigenBasis(ctx context.Context, r tile.Reader, lines int, sigma float64, least, force int, log report.Reporter) (*subspace.Basis, *laterBases, error) {
	h, w, b := r.Size()
	if !mayUseEigenImages(h, w, b, least, force) {
		return nil, nil, nil
	}
	if lines < eigenBlock || lines%eigenBlock != 0 {
		panic(fmt.Sprintf("nonlocal: windows of %d lines are not a multiple of the %d of a block", lines, eigenBlock))
	}
	repairLines, repairing := r.(denoise.RepairLines)
	log.Start("eigen-image statistics", "lines", int64(h))
	defer log.Finish()
	sum := make([]float64, b)
	var blocks *subspace.Moments
	var later *laterMoments
	for y0 := 0; y0 < h; y0 += lines {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		var c *msi.Cube
		var filled []bool
		var err error
		if repairing {
			c, filled, err = repairLines.ReadFilled(y0, min(lines, h-y0))
		} else {
			c, err = r.ReadLines(y0, min(lines, h-y0))
		}
		if err != nil {
			return nil, nil, err
		}
		for band := range b {
			for _, v := range c.Band(band) {
				sum[band] += v
			}
		}
		switch {
		case c.Height < eigenBlock: // the cube's last lines, no whole block
		case repairing:
			later = later.add(c, filled)
		default:
			means := blockMeans(c, eigenBlock)
			if blocks == nil {
				blocks = subspace.NewMoments(subspace.MeanSpectrum(means))
			}
			blocks.Add(means)
		}
		log.Update(int64(y0+c.Height), "")
	}
	mean := make([]float64, b)
	for band, s := range sum {
		mean[band] = s / float64(h*w)
	}
	if repairing {
		return later.basis(mean, sigma, least, force)
	}
	full, err := subspace.FitMoment(blocks.SecondMoment(mean), mean, b)
	if err != nil {
		return nil, nil, err
	}
	return leadingEigenImages(full, full.Eigenvalues, blocks.N, sigma, least, force), nil, nil
}

// repairBasis returns the basis of the eigen-images of the repair's passes
// (nil: the bands) for the cube y as the repair's first pass denoises it,
// filled marking the voxels that pass filled, with the noise sigma and the
// least dimension and override of eigenBasis: what streamedEigenBasis
// returns for y's lines as a denoise.RepairLines (laterMoments), from the
// whole cube at once, and what else the repair's passes take from the
// same statistics (laterBases). The sums are the same, in another order:
// both agree with the streamed ones to rounding.
func repairBasis(y *msi.Cube, filled []bool, sigma float64, least, force int) (*subspace.Basis, *laterBases, error) {
	if !mayUseEigenImages(y.Height, y.Width, y.Bands, least, force) {
		return nil, nil, nil
	}
	var later *laterMoments
	return later.add(y, filled).basis(subspace.MeanSpectrum(y), sigma, least, force)
}

// laterMoments are the statistics of a cube that the basis of the
// eigen-images of the repair's passes is chosen from, as the later passes
// see the cube: the block means of the voxels that the first pass did not
// fill (filledBlockMeans), their moments and the sums of 1/m of every
// band, and the sums of the block means of every column of blocks.
//
// Why: the later passes set the filled voxels to the first pass's
// estimate, and subtract the stripes estimated again on its residual. The
// block means of the lines as the first pass has them keep the noise of
// the filled voxels, copied from a few neighbours and so not averaged
// away, and the stripes that the cube's model left (missed or mis-sized
// columns, constant down a column): both show as directions of signal in
// every band that holds them. The 256×256 balloons crop resampled to 224
// bands with QRNN3D's case 5 counts more than 56 directions on its first
// pass's lines (so keeps the bands), 54 with the filled voxels left out,
// 26 with the columns' means taken off too, where a last pass that
// chose on its own cube worked on 30 eigen-images (docs/results.md). The
// first pass is then given the same basis, in strips and in the whole
// run (repairBasis, PrepareRepair): what its lines hold outside it is
// mostly the fill's and the stripes' noise.
type laterMoments struct {
	blocks  *subspace.Moments
	inverse []float64
	// columns[b·W + c] is the sum of the means of band b in column c of
	// blocks, W wide.
	columns []float64
}

// add adds the lines c, filled marking the voxels the first pass filled,
// to m (nil: none yet) and returns it.
func (m *laterMoments) add(c *msi.Cube, filled []bool) *laterMoments {
	means, inverse := filledBlockMeans(c, filled, eigenBlock)
	if m == nil {
		m = &laterMoments{blocks: subspace.NewMoments(subspace.MeanSpectrum(means)),
			inverse: make([]float64, c.Bands), columns: make([]float64, means.Width*c.Bands)}
	}
	m.blocks.Add(means)
	for b, v := range inverse {
		m.inverse[b] += v
		column := m.columns[b*means.Width:][:means.Width]
		for i, v := range means.Band(b) {
			column[i%means.Width] += v
		}
	}
	return m
}

// laterBases are what the passes of a repair on eigen-images take from
// the whole cube's statistics (laterMoments) besides the basis of the
// passes before the last.
type laterBases struct {
	// spectra are the spectral directions the low-rank rounds of every
	// pass work in on a strip or a block (roundSpectra; nil: none).
	spectra *mat.Dense
	// moment is the second moment, about the whole cube's mean spectrum
	// (mean), of its block means (blocks of them), each column of
	// blocks' mean kept and the excess noise of the filled voxels taken
	// off: the blocks of a last pass fit their rounds' spectra on it and
	// on their pilot (stripSpectra).
	moment *mat.SymDense
	mean   []float64
	blocks int
}

// withStrip returns a strip's second moment about l.mean, of n blocks
// (strip, changed), and the whole cube's (l.moment) together, each
// weighted by its blocks (stripSpectra).
func (l *laterBases) withStrip(strip *mat.SymDense, n int) *mat.SymDense {
	own, whole := float64(n), float64(l.blocks)
	strip.ScaleSym(own/(own+whole), strip)
	var weighted mat.SymDense
	weighted.ScaleSym(whole/(own+whole), l.moment)
	strip.AddSym(strip, &weighted)
	return strip
}

// basis returns the basis of the later passes' eigen-images (nil: the
// bands), of mean spectrum mean, for the noise sigma of the cube, the
// least dimension least and the override force of eigenBasis: the
// directions of the second moment of the block means less each column
// of blocks' mean (columnCentred), with the excess of noise the fewer
// voxels leave taken off its diagonal (repairCovariance), k counted on
// the same moment with every band's noise brought to that of whole
// blocks (repairCount); and, from the same moment with the columns'
// means kept, the rest of laterBases.
func (m *laterMoments) basis(mean []float64, sigma float64, least, force int) (*subspace.Basis, *laterBases, error) {
	cov := columnCentred(m.blocks.SecondMoment(mean), m.columns, mean, m.blocks.N)
	counted, err := repairCount(cov, m.inverse, m.blocks.N)
	if err != nil {
		return nil, nil, err
	}
	full, err := subspace.FitMoment(repairCovariance(cov, m.inverse, m.blocks.N, sigma), mean, len(mean))
	if err != nil {
		return nil, nil, err
	}
	// The rounds' spectra keep the columns' means: they are signal too
	// (roundSpectra, stripSpectra).
	moment := repairCovariance(m.blocks.SecondMoment(mean), m.inverse, m.blocks.N, sigma)
	all, err := subspace.FitMoment(moment, mean, len(mean))
	if err != nil {
		return nil, nil, err
	}
	later := &laterBases{spectra: roundSpectra(all, m.blocks.N, max(eigenImagesMin, least), sigma), moment: moment, mean: mean, blocks: m.blocks.N}
	return leadingEigenImages(full, counted, m.blocks.N, sigma, least, force), later, nil
}

// columnCentred returns cov, the second moment about mean of n block
// means in columns of blocks of equal height (columns[b·W + c] the sum of
// band b's means in column c), as the second moment of the block means
// less their column's mean: cov − (R/n)·Σ_c (m_c − mean)(m_c − mean)ᵀ,
// R = n/W blocks a column, m_c = columns[·, c]/R. The noise of a block
// mean keeps all but 1/R of its variance. cov is changed and returned.
func columnCentred(cov *mat.SymDense, columns, mean []float64, n int) *mat.SymDense {
	bands := len(mean)
	width := len(columns) / bands
	rows := float64(n / width)
	centred := make([]float64, len(columns)) // m_c − mean, band-major
	for b := range bands {
		for c, v := range columns[b*width:][:width] {
			centred[b*width+c] = v/rows - mean[b]
		}
	}
	cov.SymRankK(cov, -rows/float64(n), mat.NewDense(bands, width, centred))
	return cov
}

// filledBlockMeans returns the cube of the mean spectra of the s×s blocks
// of y as blockMeans returns it, but each band's mean taken over the
// voxels of the block that filled does not mark (over all of them where
// it marks every one), and for every band the sum over the blocks of
// 1/m, m the voxels its means were taken over: the noise of those means
// is independent, of σ²/m, where the filled voxels' (copied from a few
// neighbours) does not average away over a block (laterMoments).
func filledBlockMeans(y *msi.Cube, filled []bool, s int) (*msi.Cube, []float64) {
	h, w := y.Height/s, y.Width/s
	out := msi.NewCube(h, w, y.Bands)
	inverse := make([]float64, y.Bands)
	n := y.Height * y.Width
	parallel.Each(y.Bands, func(b int) {
		src, mask, dst := y.Band(b), filled[b*n:(b+1)*n], out.Band(b)
		for i := range h {
			for j := range w {
				sum, all, m := 0.0, 0.0, 0
				for yy := i * s; yy < (i+1)*s; yy++ {
					for xx := j * s; xx < (j+1)*s; xx++ {
						v := src[yy*y.Width+xx]
						all += v
						if !mask[yy*y.Width+xx] {
							sum += v
							m++
						}
					}
				}
				if m == 0 {
					sum, m = all, s*s
				}
				dst[i*w+j] = sum / float64(m)
				inverse[b] += 1 / float64(m)
			}
		}
	})
	return out, inverse
}

// repairCount returns the eigenvalues, in decreasing order, that the
// number of eigen-images of the repair's later passes is counted on: those
// of GCG, C the second moment cov of n block means taken over fewer
// voxels than a block's (filledBlockMeans, inverse[b] the sum of 1/m over
// band b's), G the gains g_b = (n/(eigenBlock²·inverse[b]))^½ that bring
// every band's noise to that of whole blocks.
//
// Why not C less the excess on its diagonal (repairCovariance): the noise
// is then white on average, but the bands with fewer voxels spread their
// sample covariance's eigenvalues as far as their own noise reaches (the
// Marchenko–Pastur edge scales with the variance), beyond EigenImages'
// edge; scaled to white noise, their spread is the edge's. The gains
// scale those bands' signal down too, but the directions of a scene's
// signal span all its bands.
func repairCount(cov *mat.SymDense, inverse []float64, n int) ([]float64, error) {
	bands := len(inverse)
	gain := make([]float64, bands)
	for b, v := range inverse {
		gain[b] = math.Sqrt(float64(n) / (eigenBlock * eigenBlock * v))
	}
	scaled := mat.NewSymDense(bands, nil)
	for i := range bands {
		for j := i; j < bands; j++ {
			scaled.SetSym(i, j, gain[i]*cov.At(i, j)*gain[j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(scaled, false) {
		return nil, fmt.Errorf("nonlocal: the eigendecomposition of the block means' covariance did not converge")
	}
	values := eig.Values(nil)
	slices.Reverse(values)
	return values, nil
}

// repairCovariance returns cov, the second moment of n block means of
// eigenBlock² voxels of white noise σ each taken over m of them
// (filledBlockMeans, inverse[b] the sum of 1/m over band b's), with the
// noise of those means brought to that of whole blocks: σ²·(inverse[b]/n
// − 1/eigenBlock²) taken off its diagonal. The noise of different bands
// is independent, so only the diagonal holds the excess. cov is changed
// and returned.
func repairCovariance(cov *mat.SymDense, inverse []float64, n int, sigma float64) *mat.SymDense {
	for b, v := range inverse {
		excess := sigma * sigma * (v/float64(n) - 1.0/(eigenBlock*eigenBlock))
		cov.SetSym(b, b, cov.At(b, b)-excess)
	}
	return cov
}

// eigenLines reads the eigen-images of the lines of a cube: the lines of
// r projected on basis.
type eigenLines struct {
	r     tile.Reader
	basis *subspace.Basis
}

func (e eigenLines) Size() (height, width, bands int) {
	h, w, _ := e.r.Size()
	return h, w, e.basis.K
}

func (e eigenLines) ReadLines(y0, n int) (*msi.Cube, error) {
	c, err := e.r.ReadLines(y0, n)
	if err != nil {
		return nil, err
	}
	return e.basis.Project(c), nil
}

// bandPilot returns the estimate on the bands that the low-rank rounds
// take as their pilot, as its coordinates on a basis of the spectra it
// holds (pilotCoordinates), from the estimate z of the
// eigen-images of the noisy cube y on basis e (μ, E): the principal images
// Q of z (about their mean z̄, those of a nonzero variance), each with its
// spectrum made of two parts, E's combination v that z gives it and the
// part outside E fitted to the noisy bands, w = (QᵀQ)⁻¹Qᵀ(Y − μ)(I − EEᵀ);
// then each principal spectrum of that estimate smoothed (smoothSpectrum).
// The pilot is μ + Ez̄ + QSᵀ with S those spectra.
//
// Why: the rounds fit their spectral subspace on their pilot, and one that
// lies in span(E) gives them E's error. E, fitted on noisy block means,
// has each direction tilted by noise, by about σ²·B/N of power per pixel
// whatever the signal's strength (N pixels, B bands; the same for block
// means, σ²/s² over N/s² of them): on the 256×256 balloons crop at 224
// bands, σ = 30, the clean cube projected on the rank-8 subspace of the
// eigen-images' Wiener estimate keeps 52.5 dB where on that of the bands'
// Wiener estimate it keeps 54.6 (55.3 on the clean cube's own), and the
// rounds end 0.85 dB lower (docs/results.md). The fit to the noisy bands
// recovers what lies outside E, but by a regression that has the same
// error; smoothing the spectra removes most of it: the projection keeps
// 54.2 dB and the chain ends 0.27 dB below the bands' chain, 0.59 above
// the rounds on the eigen-images. The part inside E
// is not regressed: Q carries the noise of Z = (Y − μ)E, so a regression
// of Y's own part in E on Q would be biased towards it, while Y's noise
// outside E is independent of Z's.
func bandPilot(y *msi.Cube, e *subspace.Basis, z *msi.Cube, sigma float64) (*subspace.Basis, *msi.Cube, error) {
	own, err := subspace.Fit(z, nil, z.Bands)
	if err != nil {
		return nil, nil, err
	}
	r := 0
	for r < own.K && own.Eigenvalues[r] > independentImages*own.Eigenvalues[0] {
		r++
	}
	bands, k, n := y.Bands, e.K, y.Height*y.Width
	// The mean spectrum μ + Ez̄; a flat estimate has it at every pixel.
	mean := e.Reconstruct(&msi.Cube{Height: 1, Width: 1, Bands: k, Data: own.Mean}).Data
	if r == 0 {
		return pilotCoordinates(e.Mean, mean, nil, nil, y.Height, y.Width)
	}
	q := own.Leading(r).Project(z)
	qt := mat.NewDense(r, n, q.Data) // row i: image i, of mean zero
	var gram mat.SymDense
	gram.SymOuterK(1, qt)
	var chol mat.Cholesky
	if !chol.Factorize(&gram) {
		return nil, nil, fmt.Errorf("nonlocal: the principal images of the estimate are linearly dependent")
	}
	// Qᵀ(Y − μ)(I − EEᵀ) = QᵀY − (QᵀY)EEᵀ: Q's columns have mean zero.
	eb := mat.NewDense(bands, k, e.E)
	var cross, inE, w mat.Dense
	cross.Mul(qt, mat.NewDense(bands, n, y.Data).T())
	inE.Mul(&cross, eb)
	var back mat.Dense
	back.Mul(&inE, eb.T())
	cross.Sub(&cross, &back)
	if err := chol.SolveTo(&w, &cross); err != nil {
		return nil, nil, fmt.Errorf("nonlocal: spectra of the eigen-images: %w", err)
	}
	// S = EV + wᵀ (bands×r), V the principal directions of z.
	var s mat.Dense
	s.Mul(eb, mat.NewDense(k, r, own.Leading(r).E))
	s.Add(&s, w.T())
	// The principal spectra of QSᵀ: the eigenvectors U of its second moment
	// S(QᵀQ/N)Sᵀ, the images QSᵀU.
	var sg, cov mat.Dense
	sg.Mul(&s, &gram)
	cov.Mul(&sg, s.T())
	cov.Scale(1/float64(n), &cov)
	sym := mat.NewSymDense(bands, nil)
	for i := range bands {
		for j := i; j < bands; j++ {
			sym.SetSym(i, j, (cov.At(i, j)+cov.At(j, i))/2)
		}
	}
	spectra, err := subspace.FitMoment(sym, mean, r)
	if err != nil {
		return nil, nil, err
	}
	var stu, images mat.Dense
	stu.Mul(s.T(), mat.NewDense(bands, r, spectra.E))
	images.Mul(stu.T(), qt)
	dct := groupwiener.DCTMatrix(bands)
	column := make([]float64, bands)
	for i := range r {
		for b := range bands {
			column[b] = spectra.E[b*r+i]
		}
		smoothSpectrum(column, dct, spectrumZ*sigma/math.Sqrt(float64(n)*spectra.Eigenvalues[i]))
		for b := range bands {
			spectra.E[b*r+i] = column[b]
		}
	}
	return pilotCoordinates(e.Mean, mean, mat.NewDense(bands, r, spectra.E), &images, y.Height, y.Width)
}

// pilotCoordinates returns bandPilot's pilot m + QUᵀ (images Q given as
// the rows of images, spectra U as the columns of spectra, both nil for a
// flat pilot) of height×width pixels as its coordinates on an orthonormal
// basis F of the span of U and m − μ, whose mean is μ: the low-rank rounds
// fit their subspace on the pilot about μ, so it lies in that span, and
// working on F's few coordinates instead of the bands costs them no more
// than the eigen-images did.
func pilotCoordinates(mu, m []float64, spectra, images *mat.Dense, height, width int) (*subspace.Basis, *msi.Cube, error) {
	bands, r := len(mu), 0
	if spectra != nil {
		_, r = spectra.Dims()
	}
	span := mat.NewDense(bands, r+1, nil)
	if spectra != nil {
		span.Slice(0, bands, 0, r).(*mat.Dense).Copy(spectra)
	}
	for b := range bands {
		span.Set(b, r, m[b]-mu[b])
	}
	basis := spanBasis(mu, span)
	// The coordinates QUᵀF + (m − μ)ᵀF of every pixel.
	fb := mat.NewDense(bands, r+1, basis.E)
	x := msi.NewCube(height, width, r+1)
	xt := mat.NewDense(r+1, height*width, x.Data)
	if spectra != nil {
		var uf mat.Dense
		uf.Mul(spectra.T(), fb)
		xt.Mul(uf.T(), images)
	}
	var offset mat.VecDense
	offset.MulVec(fb.T(), span.ColView(r))
	for i := range r + 1 {
		band, o := x.Band(i), offset.AtVec(i)
		for p := range band {
			band[p] += o
		}
	}
	return basis, x, nil
}

// spanBasis returns the basis of mean mu whose directions are an
// orthonormal basis of the span of the columns of span (bands×n, of rank
// n), by its QR factorisation.
func spanBasis(mu []float64, span *mat.Dense) *subspace.Basis {
	bands, n := span.Dims()
	var qr mat.QR
	qr.Factorize(span)
	var f mat.Dense
	qr.QTo(&f)
	basis := &subspace.Basis{Bands: bands, K: n, Mean: mu, E: make([]float64, bands*n)}
	for b := range bands {
		for i := range n {
			basis.E[b*n+i] = f.At(b, i)
		}
	}
	return basis
}

// roundSpectra returns the spectral directions that the low-rank rounds
// of a repair's passes on eigen-images work in, in strips and blocks
// (withinSpectra), as the columns of a bands×m matrix: the leading m
// directions of full, the basis of all the directions of the repair's
// block means (n of them, laterMoments, with the excess noise of the
// filled voxels taken off but each column of blocks' mean kept), each
// smoothed as bandPilot smooths the principal spectra of its estimate
// (smoothSpectrum), the noise of a direction of eigenvalue λ fitted on n
// block means of noise σ/eigenBlock being (σ/eigenBlock)²/(nλ) in every
// DCT coefficient. Directions of an eigenvalue not above zero are left
// out; nil if none is left.
//
// Why: bandPilot fits the spectra of the rounds' pilot on the cube it is
// given, and on a strip or a block of 128 lines that fit has the noise of
// an eighth of the pixels of a 1024-line cube. On that flightline-shaped
// cube of 224 bands with QRNN3D's case 5 the rounds of every strip of
// 128 lines in the span of the whole run's bandPilot spectra ended 1.5
// dB higher than on their own, and in the span of these directions of
// the whole cube's block means 1.2 dB higher (docs/results.md). On a
// whole cube at once bandPilot's own spectra, fitted on all its pixels,
// stay ahead (0.2–0.8 dB on 256×256 and 145×145 cubes), so they are
// kept there. Taking off each column of blocks' mean, as the count of
// the eigen-images does against the stripes left (laterMoments), took
// the signal of those means too: strips of the 256×256 crop ended 0.7
// dB lower.
func roundSpectra(full *subspace.Basis, n, m int, sigma float64) *mat.Dense {
	bands := full.Bands
	m = min(m, full.K)
	for m > 0 && full.Eigenvalues[m-1] <= 0 {
		m--
	}
	if m == 0 {
		return nil
	}
	dct := groupwiener.DCTMatrix(bands)
	spectra := mat.NewDense(bands, m, nil)
	column := make([]float64, bands)
	for i := range m {
		for b := range bands {
			column[b] = full.E[b*full.K+i]
		}
		smoothSpectrum(column, dct, spectrumZ*sigma/eigenBlock/math.Sqrt(float64(n)*full.Eigenvalues[i]))
		spectra.SetCol(i, column)
	}
	return spectra
}

// stripSpectra returns the spectral directions that the low-rank rounds
// of a repair's last pass on a strip work in, as roundSpectra returns
// them (m of them, smoothed), fitted on the second moment about the whole
// cube's mean spectrum of the strip's pilot x (coordinates on the basis
// on, bandPilot's; pilotMoment) and of the whole cube's block means
// (later.moment), each weighted by its blocks: the strip's pixels in
// blocks of eigenBlock×eigenBlock, later.blocks. It returns nil when no
// direction has an eigenvalue above zero or the moment's
// eigendecomposition fails (the caller keeps the whole cube's).
//
// Why: the whole cube's directions alone (roundSpectra) come from the
// noisy block means of the lines before the first pass, and bandPilot's
// own on a strip have the noise of its few pixels: in one strip of all
// the lines of three cubes of 224 bands with QRNN3D's case 5 the whole
// cube's cost 0.2–0.7 dB against the whole run, and bandPilot's own cost
// the 256×256 crop 0.7 dB in strips of 64 lines (docs/results.md, "One
// strip of the whole cube"). The pilot after the Wiener passes is nearly free of
// noise and holds the strip's own materials; the whole cube's block means
// hold the directions its few pixels fit poorly. Together they put the
// strips of every cube of 224 bands measured above the whole run or
// within 0.002 dB of it, where the pilot alone lost 0.6–1.1 dB on three
// of four (docs/results.md, "The rounds of a repair's last pass in
// strips: its pilot and the whole cube").
func stripSpectra(on *subspace.Basis, x *msi.Cube, later *laterBases, m int, sigma float64) *mat.Dense {
	n := (x.Height / eigenBlock) * (x.Width / eigenBlock)
	moment := later.withStrip(pilotMoment(on, x, later.mean), n)
	full, err := subspace.FitMoment(moment, later.mean, len(later.mean))
	if err != nil {
		return nil
	}
	return roundSpectra(full, n+later.blocks, m, sigma)
}

// pilotMoment returns the second moment about the spectrum about of the
// pixels μ + E·x of the pilot x, coordinates on the basis on (mean μ,
// directions E): E·G·Eᵀ + E·x̄·dᵀ + d·x̄ᵀ·Eᵀ + d·dᵀ, G = (1/N) Σ x·xᵀ the
// coordinates' second moment about zero, x̄ their mean and d = μ − about,
// computed on the coordinates rather than on the pixels of every band.
func pilotMoment(on *subspace.Basis, x *msi.Cube, about []float64) *mat.SymDense {
	bands, k := on.Bands, on.K
	coords := subspace.NewMoments(make([]float64, k))
	coords.Add(x)
	g, mean := coords.SecondMoment(nil), coords.Mean()
	e := mat.NewDense(bands, k, on.E)
	var eg, ege mat.Dense
	eg.Mul(e, g)
	ege.Mul(&eg, e.T())
	var ex mat.VecDense
	ex.MulVec(e, mat.NewVecDense(k, mean))
	out := mat.NewSymDense(bands, nil)
	for i := range bands {
		di := on.Mean[i] - about[i]
		for j := i; j < bands; j++ {
			dj := on.Mean[j] - about[j]
			out.SetSym(i, j, (ege.At(i, j)+ege.At(j, i))/2+ex.AtVec(i)*dj+di*ex.AtVec(j)+di*dj)
		}
	}
	return out
}

// withinSpectra returns the pilot x, coordinates on the basis on (the
// pilot of bandPilot), as its coordinates on a basis of the span of
// spectra (roundSpectra) and of the pilot's mean less on's mean: the
// pilot projected on that span, its mean kept. A smoothed direction that
// is zero (every coefficient under its noise) is left out.
func withinSpectra(on *subspace.Basis, x *msi.Cube, spectra *mat.Dense) (*subspace.Basis, *msi.Cube) {
	bands, m := spectra.Dims()
	var kept []int
	for i := range m {
		if mat.Norm(spectra.ColView(i), 2) > 0 {
			kept = append(kept, i)
		}
	}
	span := mat.NewDense(bands, len(kept)+1, nil)
	for j, i := range kept {
		span.SetCol(j, mat.Col(nil, i, spectra))
	}
	// The pilot's mean less μ: E·x̄, x̄ the mean of its coordinates.
	old := mat.NewDense(bands, on.K, on.E)
	var offset mat.VecDense
	offset.MulVec(old, mat.NewVecDense(on.K, subspace.MeanSpectrum(x)))
	span.SetCol(len(kept), offset.RawVector().Data)
	basis := spanBasis(on.Mean, span)
	// The new coordinates Fᵀ(p − μ) = FᵀE·x of every pixel's p = μ + E·x.
	var change mat.Dense
	change.Mul(mat.NewDense(bands, basis.K, basis.E).T(), old)
	n := x.Height * x.Width
	out := msi.NewCube(x.Height, x.Width, basis.K)
	mat.NewDense(basis.K, n, out.Data).Mul(&change, mat.NewDense(on.K, n, x.Data))
	return basis, out
}

// spectrumZ is how many standard deviations of its noise a DCT coefficient
// of a principal spectrum must exceed for bandPilot to keep it.
const spectrumZ = 3

// smoothSpectrum sets to zero, in place, the coefficients of the spectrum
// u (a unit vector of B bands) in the orthonormal DCT dct (B×B, row-major,
// groupwiener.DCTMatrix) of magnitude at most threshold.
//
// Why: a principal spectrum of an estimate whose image has variance λ over
// N pixels, fitted to bands of white noise σ, has white noise of variance
// σ²/(Nλ) in every band, hence in every coefficient of an orthonormal
// transform, while the spectra of natural materials are smooth across
// wavelengths and their DCT is concentrated in few coefficients (the
// bands chain's full-spectrum Wiener pass relies on the same). bandPilot
// keeps the coefficients above spectrumZ standard deviations of that
// noise: of 224 coefficients of noise alone, 0.6 pass.
func smoothSpectrum(u, dct []float64, threshold float64) {
	bands := len(u)
	c := make([]float64, bands)
	for k := range bands {
		row := dct[k*bands:][:bands]
		for b, v := range u {
			c[k] += row[b] * v
		}
		if math.Abs(c[k]) <= threshold {
			c[k] = 0
		}
	}
	clear(u)
	for k, ck := range c {
		if ck == 0 {
			continue
		}
		for b, v := range dct[k*bands:][:bands] {
			u[b] += ck * v
		}
	}
}

// independentImages is the least variance, relative to the first, of a
// principal image that bandPilot fits a spectrum to: below it the image is
// the rounding error of a rank the stages did not keep.
const independentImages = 1e-10
