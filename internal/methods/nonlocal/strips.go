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
// Every stage reaches farther than the one before it (a Wiener or
// low-rank group gathers patches from a 31×31 window around its
// reference, on an oracle that the stage before computed from its own
// window), so no halo makes a strip exact; what a strip lacks near its
// edge is patches to group with, and their effect fades within a search
// window. On full balloons at σ = 30 in strips of 128 lines
// (docs/results.md) halos of 16, 20, 24 and 32 lines all stay within 0.1 dB
// of the whole cube, the error near a join no larger than elsewhere; 16,
// one search window's reach past a patch, reads 1.19× the lines of the
// whole cube rather than 1.375× for 32.
const stripHalo = 16

// StripGeometry returns the strips nonlocal is denoised in (package tile):
// stripHalo lines of context, cores and reads starting at multiples of the
// pilot's step, so that a strip's pilot codes the patches at the whole
// cube's positions.
func (d *Denoiser) StripGeometry(sigma float64) tile.Geometry {
	o := d.Options.Resolve(sigma)
	align := max(1, o.Pilot.Stride)
	return tile.Geometry{Halo: align * ((stripHalo + align - 1) / align), Align: align}
}

// PrepareStrips readies the denoising of the cube of r strip by strip
// (StripGeometry) with what nonlocal learns from the whole cube: the
// pilot's dictionary, learned from the sample that the whole cube's run
// learns it from (twodsc's PrepareTiles: the same dictionary bit for bit),
// and the rank of the low-rank stage, unless Options.Rank gives it
// (StreamedRank over the strips' lines). The Denoiser it returns denoises
// every strip with both and logs nothing (the caller reports the strips);
// its Draft keeps them. The strips' results are close to, not the same
// as, the whole cube's: the Wiener and low-rank stages group the patches
// of a strip and its halo, and fit their subspaces on the strip. The
// Result is empty: the whole cube's run saves no dictionary either.
func (d *Denoiser) PrepareStrips(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64) (denoise.Method, denoise.Result, error) {
	o := d.Options.Resolve(sigma)
	h, w, b := r.Size()
	if err := o.Validate(h, w, b); err != nil {
		return nil, denoise.Result{}, err
	}
	pilot := &twodsc.Denoiser{Options: o.Pilot, Report: d.Report}
	stripPilot, _, err := pilot.PrepareTiles(ctx, r, strips, sigma)
	if err != nil {
		return nil, denoise.Result{}, err
	}
	prepared := &Denoiser{Options: d.Options, pilot: stripPilot}
	if prepared.Options.Rank == 0 {
		log := report.OrDiscard(d.Report)
		if prepared.Options.Rank, err = StreamedRank(ctx, r, strips, sigma, log); err != nil {
			return nil, denoise.Result{}, err
		}
		log.Logf("spectral subspace: rank %d, chosen from the whole cube", prepared.Options.Rank)
	}
	return prepared, denoise.Result{}, nil
}

// streamValues bounds the values of a window of lines that StreamedRank
// reads at once (64 MiB as float64).
const streamValues = 1 << 23

// StreamedRank returns the dimension of the spectral subspace for the
// noisy cube of r with noise σ, read a window of lines at a time within
// the cores of strips (never more lines at once than a core), each line
// once: what ChooseRank chooses on a whole cube, but from statistics that
// a stream of lines gives, without the Wiener estimate whose spectral
// directions ChooseRank measures the noisy cube's power along.
//
// The directions come from the noisy cube itself, by two-fold cross
// validation over its columns: the directions of the spectral second
// moment of the even columns (about the whole cube's mean), the power of
// the odd columns along them beyond σ², and the other way round, the two
// averaged direction by direction. Each half's noise is independent of
// the other's, so the power along a direction that holds only noise is
// zero within σ²·√(2/N) for N pixels, as along the directions of
// ChooseRank's estimate, and the rank is counted by ChooseRank's rule
// (leading directions above rankZ standard errors, at least RankFor(σ)).
// The directions of one half's own noisy spectra would not do: the largest
// eigenvalues of white noise's sample covariance exceed σ² by about
// 2σ²·√(B/N) (Marchenko–Pastur), several standard errors for a cube of
// 10⁵ pixels, and every noise direction would count. It stops with
// ctx.Err() between windows when ctx is cancelled.
func StreamedRank(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64, log report.Reporter) (int, error) {
	_, w, b := r.Size()
	if w < 2 {
		return min(b, RankFor(sigma)), nil // no columns to cross-validate over
	}
	var halves [2]*subspace.Moments
	log.Start("spectral statistics", "lines", int64(strips[len(strips)-1].Core.End))
	defer log.Finish()
	for _, s := range strips {
		lines := min(s.Core.Len(), max(1, streamValues/(w*b)))
		for y0 := s.Core.Start; y0 < s.Core.End; y0 += lines {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			c, err := r.ReadLines(y0, min(lines, s.Core.End-y0))
			if err != nil {
				return 0, err
			}
			for parity, half := range halves {
				cols := everyOtherColumn(c, parity)
				if half == nil {
					half = subspace.NewMoments(subspace.MeanSpectrum(cols))
					halves[parity] = half
				}
				half.Add(cols)
			}
			log.Update(int64(y0+c.Height), "")
		}
	}
	return crossValidatedRank(halves[0], halves[1], sigma)
}

// crossValidatedRank returns the rank of StreamedRank from the moments of
// the two halves of a cube's pixels.
func crossValidatedRank(even, odd *subspace.Moments, sigma float64) (int, error) {
	n := even.N + odd.N
	mean := even.Mean()
	for i, v := range odd.Mean() {
		mean[i] = (float64(even.N)*mean[i] + float64(odd.N)*v) / float64(n)
	}
	evenMoment, oddMoment := even.SecondMoment(mean), odd.SecondMoment(mean)
	bands := len(mean)
	evenBasis, err := subspace.FitMoment(evenMoment, mean, bands)
	if err != nil {
		return 0, err
	}
	oddBasis, err := subspace.FitMoment(oddMoment, mean, bands)
	if err != nil {
		return 0, err
	}
	power := evenBasis.Power(oddMoment, sigma)
	for i, p := range oddBasis.Power(evenMoment, sigma) {
		power[i] = (power[i] + p) / 2
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
