package nonlocal

import (
	"context"
	"math"

	"tdsc/internal/denoise"
	"tdsc/internal/methods/twodsc"
	"tdsc/internal/msi"
	"tdsc/internal/report"
	"tdsc/internal/stages/subspace"
	"tdsc/internal/tile"
)

// stripHalo is the context, in lines, that every strip of nonlocal reads
// above and below its core (rounded up to the pilot's step, StripGeometry).
// No halo makes a strip exact: every stage reaches farther than the one
// before it (a Wiener or low-rank group gathers patches from a 31×31
// window around its reference, matched on the estimate of the stage
// before), and the stages fit their spectral subspaces on the strip. What
// a strip lacks near its edge is patches to group with, whose effect
// fades within a search window. Full balloons at σ = 30 in strips of 128
// lines (docs/results.md): with halos of 16, 20, 24 and 32 lines the whole
// result is within 0.01 dB of the others (all 0.38 dB above the chain run
// on the whole cube at once, the strips' subspaces being more local: why
// a whole cube that tall now runs in blocks, blocks.go), and at no line
// near a join below that chain's; 16 dips at the joins to 0.04 dB above it,
// against 0.2–0.45 dB elsewhere, 32 not at all. 16 is the smallest of
// them, and reads 608 lines for the 512 of the cube (1.19×) where 32 reads
// 704 (1.375×).
const stripHalo = 16

// StripGeometry returns the strips nonlocal is denoised in (package tile):
// stripHalo lines of context, cores and reads starting at multiples of the
// pilot's step, so that a strip's pilot codes the patches at the whole
// cube's positions, and cores of at most blockLines lines (down to a
// multiple of the step), the blocks a whole cube is denoised in
// (blocks.go, which plans them so): a strip is denoised at once, and
// a taller one would lose what the blocks gain. On the 512×512 balloons
// scene resampled to 224 bands with QRNN3D's case 5, strips of 256 and
// 512 lines had ended 0.15 and 0.50 dB below the whole run, where strips
// of 128 lines end 0.007 above it (docs/results.md); strips sized to a
// memory budget were as tall as it allowed.
func (d *Denoiser) StripGeometry(sigma float64) tile.Geometry {
	o := d.Options.Resolve(sigma)
	align := max(1, o.Pilot.Stride)
	return tile.Geometry{Halo: align * ((stripHalo + align - 1) / align), Align: align, MaxLines: align * max(1, blockLines/align)}
}

// PrepareStrips readies the denoising of the cube of r strip by strip
// (StripGeometry) with what nonlocal learns from the whole cube. On many
// bands (eigen.go) that is first the basis of the eigen-images, μ, E and
// k, and the choice of them over the bands, from the block means of the
// whole cube streamed in windows of lines (streamedEigenBasis); the rest is
// then learned on the eigen-images of the lines (eigenLines), as the whole
// cube's chain learns it on its eigen-images. Then the pilot's dictionary,
// learned from the sample that the whole cube's run learns it from
// (twodsc's PrepareTiles: on the bands, the same dictionary bit for bit),
// and the rank of the low-rank stage, unless Options.Rank gives it
// (over the strips' lines: StreamedRank on the bands; on eigen-images
// streamedEigenRank, ChooseRank's rule along E's directions smoothed as
// bandPilot smooths the whole run's), or from the directions of signal
// the caller counted (WithSignalDirections), as in the whole run.
// The Denoiser it returns projects every strip on the basis, denoises it
// with the pilot and the rank, and returns to the bands as the whole run
// does, through the pilot of its low-rank rounds fitted on the strip
// (bandPilot). An earlier fit of each image's spectrum to a strip's noisy
// bands (least squares, without bandPilot's smoothing) cost 0.5 dB against
// μ + ẐEᵀ on the 256×256 balloons crop at 224 bands in strips of 64 lines,
// its noise (σ²·r/N per voxel) large on a strip's fewer pixels; bandPilot
// gains 0.58 dB over μ + ẐEᵀ there, as in the whole run
// (docs/results.md). The Denoiser reports its stages but no log lines
// (the caller reports the strips, the stages as their progress); its
// Draft keeps all of it.
//
// On the lines of a repair (denoise.RepairLines) the passes before the
// last (the Draft) work on the basis the repair's later passes choose
// (laterMoments), as a whole run's first pass does (PrepareRepair, whose
// Draft keeps its basis here when the cube runs in blocks): a first pass
// that chose on its own lines kept the bands of the 256×256 balloons crop
// resampled to 224 bands with QRNN3D's case 5, its fill's noise and the
// stripes left counted as signal, where the second pass worked on 30
// eigen-images; in strips of 64 lines both passes on the later passes'
// 26 cost 1.1 times that whole run's CPU and ended 0.9 dB above it, where
// the first pass on the bands cost 2.1 times and ended 0.5 dB above it
// (docs/results.md). The last pass is not prepared here: the Denoiser
// keeps the method it is prepared from (LastPass), on the cube the strips'
// first passes leave, as a whole run's last pass counts its rank and
// eigen-images on its cube: the filled voxels then hold the first pass's
// estimate, which no statistic streamed before the first pass has. The
// low-rank rounds of every pass of a repair on eigen-images work in
// spectra fitted on the whole cube (roundSpectra, from the block means
// the first pass's basis is chosen from): bandPilot's fit on a strip has
// the noise of its fewer pixels (docs/results.md).
// The Wiener and low-rank stages group the patches of a strip and its
// halo, and fit their subspaces on the strip: in strips of blockLines
// lines the result is Denoise's on the whole cube bit for bit (a whole
// cube taller than blockLines runs in those blocks), in strips of other
// heights close to it. The Result is empty: the whole cube's run saves
// no dictionary either.
func (d *Denoiser) PrepareStrips(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64) (denoise.Method, denoise.Result, error) {
	o := d.Options.Resolve(sigma)
	h, w, b := r.Size()
	if err := o.Validate(h, w, b); err != nil {
		return nil, denoise.Result{}, err
	}
	log := report.OrDiscard(d.Report)
	// A repair's pass in blocks keeps the repair's spectra (PrepareRepair),
	// its first pass its basis too.
	basis, spectra := d.basis, d.spectra
	var later *laterBases
	if !d.chosen {
		var err error
		if basis, later, err = streamedEigenBasis(ctx, r, streamLines(w, b, eigenBlock), sigma, max(o.Rank, o.Pilot.Depth), d.eigenImages, log); err != nil {
			return nil, denoise.Result{}, err
		}
		if later != nil && later.spectra != nil {
			spectra = later.spectra
		}
	}
	_, repairing := r.(denoise.RepairLines)
	switch {
	case repairing && basis != nil:
		log.Logf("the repair's first pass works on %d eigen-images of the %d bands, fitted on the whole cube (on the voxels it does not fill, each column of blocks' mean taken off)", basis.K, b)
	case repairing && mayUseEigenImages(h, w, b, max(o.Rank, o.Pilot.Depth), d.eigenImages):
		log.Logf("the repair's first pass works on the %d bands, chosen on the whole cube (on the voxels it does not fill, each column of blocks' mean taken off)", b)
	case basis != nil:
		log.Logf("eigen-images: %d of the %d bands, fitted on the whole cube", basis.K, b)
	}
	lines := r // the pilot's: the bands or their eigen-images
	if basis != nil {
		lines = eigenLines{r: r, basis: basis}
	}
	pilot := &twodsc.Denoiser{Options: o.Pilot, Report: d.Report}
	stripPilot, _, err := pilot.PrepareTiles(ctx, lines, strips, sigma)
	if err != nil {
		return nil, denoise.Result{}, err
	}
	prepared := &Denoiser{Options: d.Options, Report: report.StagesOnly(d.Report), pilot: stripPilot, basis: basis,
		signalDirections: d.signalDirections, counted: d.counted, spectra: spectra}
	if repairing {
		// The passes before the last work on basis (Draft); the last is
		// prepared on the whole cube the first passes leave (LastPass).
		prepared.basis, prepared.firstPasses, prepared.readied = nil, basis, true
		prepared.lastPass = d.repairOf(basis, later)
	} else if d.readied {
		// A repair's last pass in blocks (denoiseBlocks): its rounds'
		// spectra fitted on the repair's statistics of the whole cube
		// and each block's pilot, as its strips' are (stripSpectra).
		prepared.later = d.repairLater
	}
	if prepared.Options.Rank == 0 && !d.counted {
		if basis != nil {
			prepared.Options.Rank, err = streamedEigenRank(ctx, r, strips, basis, (h/eigenBlock)*(w/eigenBlock), sigma, log)
		} else {
			prepared.Options.Rank, err = StreamedRank(ctx, r, strips, sigma, log)
		}
		if err != nil {
			return nil, denoise.Result{}, err
		}
		log.Logf("spectral subspace: rank %d, chosen from the whole cube", prepared.Options.Rank)
	}
	return prepared, denoise.Result{}, nil
}

// repairOf returns d as PrepareRepair readies it for a repair whose first
// passes work on basis (nil: the bands), from the whole cube's statistics
// later of the lines they denoise (nil: none, d's basis chosen already or
// too few bands or blocks for eigen-images: d itself), as
// streamedEigenBasis gives them.
func (d *Denoiser) repairOf(basis *subspace.Basis, later *laterBases) *Denoiser {
	c := *d
	if later != nil && !d.chosen {
		c.firstPasses, c.readied, c.spectra, c.repairLater = basis, true, later.spectra, later
	}
	return &c
}

// LastPass returns the method that a repair's last pass in strips is
// prepared from (PrepareStrips) on the whole cube the strips' first passes
// leave, as a whole run's last pass, in its blocks, prepares it on its
// cube (denoiseBlocks): the Denoiser that PrepareStrips was called on,
// readied as PrepareRepair readies it (denoise.LastPasser). Its strips of
// blockLines lines then give the whole run's last pass on the same cube,
// to rounding: the statistics of the first pass's lines are streamed in
// windows here, summed at once there (TestLastPass). It returns nil for a
// Denoiser not returned by PrepareStrips on denoise.RepairLines.
//
// Why: the last pass's rank and eigen-images are those of the cube after
// the first pass, which no statistic of the lines before it has. Strips
// whose last pass shared the rank streamed before the first pass (and
// counted their eigen-images on their own lines and the first pass's
// statistics) ended 0.12–0.33 dB below the whole run on
// three crops of 224 bands with QRNN3D's case 5, whose whole runs' last
// passes count ranks of 7 and 8 where their first passes count 6–15; the
// whole run's last-pass rank alone closed those gaps to 0.03 dB
// (docs/results.md).
func (d *Denoiser) LastPass() denoise.Method {
	if d.lastPass == nil {
		return nil // not a nil *Denoiser in an interface
	}
	return d.lastPass
}

// streamValues bounds the values of a window of lines that StreamedRank
// and streamedEigenBasis read at once (64 MiB as float64).
const streamValues = 1 << 23

// streamLines returns the lines of a window of at most streamValues
// values of lines of width×bands, a multiple of align (at least align).
func streamLines(width, bands, align int) int {
	return align * max(1, streamValues/(width*bands*align))
}

// directionBox is the radius of the box mean, in lines and in columns of
// a half, that StreamedRank takes the directions of a half from: a 5×5
// mean of a half's pixels spans 5 lines and 9 columns of the cube.
const directionBox = 2

// StreamedRank returns the dimension of the spectral subspace for the
// noisy cube of r with noise σ, read a window of lines at a time within
// the cores of strips (with directionBox lines beyond them), each core
// line once: what ChooseRank chooses on a whole cube, from statistics that
// a stream of lines gives, without the Wiener estimate along whose
// spectral directions ChooseRank measures the noisy cube's power.
//
// The directions come from the cube itself by two-fold cross validation
// over its columns: the spectral directions of a box mean (directionBox)
// of the even columns, a cheap estimate whose noise is a fraction of the
// cube's, the power of the odd columns' noisy spectra along them beyond
// σ², and the other way round, the two averaged direction by direction.
// Each half's noise is independent of the other's, so the power along a
// direction that holds only noise is zero within σ²·√(2/N) for N pixels,
// as along the directions of ChooseRank's estimate, and the rank is
// counted by ChooseRank's rule (leading directions above rankZ standard
// errors, at least RankFor(σ)). The directions of the noisy spectra
// themselves would not do: the largest eigenvalues of white noise's
// sample covariance exceed σ² by about 2σ²·√(B/N) (Marchenko–Pastur),
// several standard errors, and every noise direction would count; those
// of the other half's noisy spectra, unsmoothed, spread the signal's
// power over more directions than an estimate's (full balloons at σ = 50:
// rank 9 where ChooseRank chooses 7; with the box mean 7, and at σ = 10
// and 30 ChooseRank's 13 and 7, docs/results.md). It stops with ctx.Err()
// between windows when ctx is cancelled.
func StreamedRank(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64, log report.Reporter) (int, error) {
	h, w, b := r.Size()
	if w < 2 {
		return min(b, RankFor(sigma)), nil // no columns to cross-validate over
	}
	var noisy, smooth [2]*subspace.Moments
	err := eachCoreWindow(ctx, strips, h, streamLines(w, b, 1), log, func(y0, y1 int) error {
		top, bottom := max(0, y0-directionBox), min(h, y1+directionBox)
		c, err := r.ReadLines(top, bottom-top)
		if err != nil {
			return err
		}
		for parity := range noisy {
			half := everyOtherColumn(c, parity)
			core := half.Crop(y0-top, 0, 0, y1-y0, half.Width, b)
			boxed := boxMean(half, directionBox).Crop(y0-top, 0, 0, y1-y0, half.Width, b)
			if noisy[parity] == nil {
				shift := subspace.MeanSpectrum(core)
				noisy[parity], smooth[parity] = subspace.NewMoments(shift), subspace.NewMoments(shift)
			}
			noisy[parity].Add(core)
			smooth[parity].Add(boxed)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return crossValidatedRank(noisy, smooth, sigma)
}

// eachCoreWindow calls window(y0, y1) for the lines y0..y1−1 of the cores
// of strips in their order, at most lines of them at a time and each core
// line once, reporting the lines done of the cube's height as "spectral
// statistics" on log: the pass of the rank's statistics over a cube. It
// stops with ctx.Err()
// between windows when ctx is cancelled, and with window's error.
func eachCoreWindow(ctx context.Context, strips []tile.Strip, height, lines int, log report.Reporter, window func(y0, y1 int) error) error {
	log.Start("spectral statistics", "lines", int64(height))
	defer log.Finish()
	for _, s := range strips {
		n := min(s.Core.Len(), lines)
		for y0 := s.Core.Start; y0 < s.Core.End; y0 += n {
			if err := ctx.Err(); err != nil {
				return err
			}
			y1 := min(y0+n, s.Core.End)
			if err := window(y0, y1); err != nil {
				return err
			}
			log.Update(int64(y1), "")
		}
	}
	return nil
}

// crossValidatedRank returns the rank of StreamedRank from the moments of
// the two halves of a cube's pixels, noisy and box-averaged.
func crossValidatedRank(noisy, smooth [2]*subspace.Moments, sigma float64) (int, error) {
	n := noisy[0].N + noisy[1].N
	mean := noisy[0].Mean()
	for i, v := range noisy[1].Mean() {
		mean[i] = (float64(noisy[0].N)*mean[i] + float64(noisy[1].N)*v) / float64(n)
	}
	var power []float64
	for half := range noisy {
		basis, err := subspace.FitMoment(smooth[half].SecondMoment(mean), mean, len(mean))
		if err != nil {
			return 0, err
		}
		p := basis.Power(noisy[1-half].SecondMoment(mean), sigma)
		if power == nil {
			power = p
			continue
		}
		for i := range power {
			power[i] = (power[i] + p[i]) / 2
		}
	}
	return rankFromPower(power, sigma, n), nil
}

// rankFromPower returns ChooseRank's rank from the signal power along the
// leading spectral directions (all of the bands') of a cube of n pixels
// with noise σ: the directions before the first whose power is at most
// rankZ·σ²·√(2/n), at least RankFor(σ), at most the bands.
func rankFromPower(power []float64, sigma float64, n int) int {
	threshold := rankZ * sigma * sigma * math.Sqrt(2/float64(n))
	k := 0
	for _, p := range power {
		if p <= threshold {
			break
		}
		k++
	}
	return min(len(power), max(k, RankFor(sigma)))
}

// everyOtherColumn returns the columns parity, parity+2, … of c.
func everyOtherColumn(c *msi.Cube, parity int) *msi.Cube {
	w := (c.Width - parity + 1) / 2
	out := msi.NewCube(c.Height, w, c.Bands)
	for b := range c.Bands {
		in, o := c.Band(b), out.Band(b)
		for y := range c.Height {
			for x := range w {
				o[y*w+x] = in[y*c.Width+2*x+parity]
			}
		}
	}
	return out
}

// boxMean returns the mean of every band of c over the (2r+1)×(2r+1)
// pixels around each pixel, clipped to the cube (fewer pixels near its
// edges). The box is separable: a mean along the lines, then along the
// columns.
func boxMean(c *msi.Cube, r int) *msi.Cube {
	h, w := c.Height, c.Width
	out := msi.NewCube(h, w, c.Bands)
	rows := make([]float64, h*w)
	for b := range c.Bands {
		in, o := c.Band(b), out.Band(b)
		for y := range h {
			for x := range w {
				s := 0.0
				for k := max(0, x-r); k <= min(w-1, x+r); k++ {
					s += in[y*w+k]
				}
				rows[y*w+x] = s
			}
		}
		for y := range h {
			y0, y1 := max(0, y-r), min(h-1, y+r)
			for x := range w {
				s := 0.0
				for k := y0; k <= y1; k++ {
					s += rows[k*w+x]
				}
				n := (y1 - y0 + 1) * (min(w-1, x+r) - max(0, x-r) + 1)
				o[y*w+x] = s / float64(n)
			}
		}
	}
	return out
}
