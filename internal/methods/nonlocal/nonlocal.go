// Package nonlocal is tdsc's nonlocal, spectrally global denoiser (the
// method "nonlocal"): a 2DSC pilot estimate, then collaborative stages on
// groups of similar patches matched on the current estimate.
//
// The chain, for a noisy cube Y with noise σ:
//
//  1. Pilot: the 2DSC pipeline of package twodsc, X₀ (its local,
//     spectrally banded model gives block matching a clean image to match
//     on; a plain blur is a worse pilot at high σ).
//  2. Wiener passes (Options.Wiener of them): Xᵢ = collaborative empirical
//     Wiener filtering of Y with Xᵢ₋₁ as the oracle (BM3D's second stage;
//     package groupwiener): every pass but the last on the patches of the
//     eigen-images of Xᵢ₋₁'s leading spectral subspace (WienerSubspace),
//     the last on full-spectrum patches.
//  3. Low-rank rounds (Options.Rounds): X = spectral-subspace nonlocal
//     low-rank estimate of Y with the last estimate as pilot (NGmeet's
//     spatial step; packages subspace and wnnm), in a subspace whose
//     dimension is chosen once, before the first round, from Y and the
//     Wiener estimate (ChooseRank) unless Options.Rank fixes it. Each
//     further round denoises Y' = λY + (1−λ)X with X as pilot and the
//     remaining noise level σ' = δ·√|σ² − mean((Y − Y')²)| (iterative
//     regularisation), with λ = 0.1 and δ = 0.6.
//
// Bands: on a cube of B bands whose signal the k spectral eigen-images hold
// with k ≤ B/4 (EigenImages, useEigenImages), the pilot and the Wiener
// passes run on the eigen-images Z = (Y − μ)E instead of the bands (they
// keep white noise of the same σ; E the leading spectral directions of the
// means of 4×4 blocks of pixels), the last Wiener pass on all k of them in
// the estimate's basis instead of the full spectrum; the low-rank rounds
// then take a pilot whose spectra are fitted to Y outside E and smoothed
// (bandPilot): the pilot and the Wiener passes cost k bands' worth instead
// of B. Fewer bands (every
// 31-band CAVE scene) keep the chain on the bands. See eigen.go.
//
// A cube denoised in strips (package tile) learns once, from the whole
// cube, what every strip shares: on many bands the basis of the
// eigen-images, then the pilot's dictionary and the rank (PrepareStrips,
// streamedEigenBasis, StreamedRank); the rest is each strip's, with a halo
// of lines around it (StripGeometry), in strips of at most 128 lines. A
// whole cube taller than 128 lines is denoised the same way, in blocks of
// 128 lines (blocks.go): the stages' spectral subspaces fitted per block
// are more local than one fitted on the whole scene, and better, and a
// run whole then gives what a run in strips of 128 lines gives. The
// low-rank rounds of a repair's passes on eigen-images work, in every
// block and strip, in spectra fitted on the whole cube (roundSpectra),
// not on the block's or strip's fewer pixels.
//
// docs/results.md has the ablation behind every stage and default.
package nonlocal

import (
	"context"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/denoise"
	"tdsc/internal/methods/twodsc"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/report"
	"tdsc/internal/stages/blockmatch"
	"tdsc/internal/stages/subspace"
)

// Options are the settings of the nonlocal method; a zero field takes its
// default (Resolve).
type Options struct {
	// Pilot are the settings of the 2DSC pilot.
	Pilot twodsc.Options
	// Wiener is the number of collaborative Wiener passes (-1: none).
	Wiener int
	// Rounds is the number of low-rank rounds (at least 1).
	Rounds int
	// Rank is the dimension k of the spectral subspace of the low-rank
	// stage, at most the number of bands; 0 chooses it from the data
	// (ChooseRank).
	Rank int
	// Group is the number of patches K of a low-rank group.
	Group int
	// Threads is the number of worker goroutines (0: GOMAXPROCS); the
	// output does not depend on it.
	Threads int
}

// The fixed geometry of the stages: the prototype's values, but with
// references every 4 pixels instead of 3 for the low-rank groups (their
// patch size, the largest step that still covers every pixel) and every 6
// for the Wiener groups (their patch size), which cost −0.01 to +0.01 dB
// against step 5 and 0.00–0.03 dB against step 3, and save 30 % and 70 %
// of the groups (docs/results.md).
var (
	lowRankShape = blockmatch.Options{Patch: 4, Step: 4, Window: 31}
	wienerShape  = blockmatch.Options{Patch: 6, Step: 6, Window: 31, K: 64}
)

// The defaults of Options (Resolve).
const (
	DefaultWiener = 2
	DefaultRounds = 2
	// DefaultGroup is 256 rather than the prototype's 128: +0.2–0.5 dB and
	// a higher SSIM on every full scene at σ = 30, mixed on the crops
	// (docs/results.md).
	DefaultGroup = 256
)

const (
	pilotStride    = 4   // default spatial step of the 2DSC pilot
	pilotCodeIters = 30  // default FISTA iterations of the pilot's coding
	wnnmC          = 8.0 // c of the WNNM weights c·√K·σ²/(ŝ + ε)
	matchFeatures  = 8   // spectral eigen-images every stage's groups are matched on
	regLambda      = 0.1 // λ of iterative regularisation
	regDelta       = 0.6 // δ of iterative regularisation
)

// Resolve returns o with its zero settings, the pilot's included, set to
// their defaults for noise of standard deviation sigma (fields), and the
// pilot's Threads set to o's.
func (o Options) Resolve(sigma float64) Options {
	o = fields.Resolve(o, sigma)
	o.Pilot.Threads = o.Threads
	return o
}

// WienerSubspace returns the dimension of the spectral subspace that every
// Wiener pass but the last works in, for a cube of the given number of
// bands: half of them, at least 16 (all of them if fewer). The subspace
// drops the noise outside it, so such a pass gives the next a better
// oracle at half the cost (+0.0–0.07 dB at the end on the crops of every
// CAVE scene, −0.03 at worst, docs/results.md); the last pass works on the
// full spectrum, so that nothing outside the subspace is lost.
func WienerSubspace(bands int) int {
	return min(bands, max(wienerSubspaceMin, (bands+1)/2))
}

// wienerSubspaceMin is the least dimension of WienerSubspace.
const wienerSubspaceMin = 16

// RankFor returns the least dimension of the spectral subspace that
// ChooseRank picks for noise σ: 10 for σ ≤ 15, else 6 (below that level
// more spectral detail rises above the noise).
func RankFor(sigma float64) int {
	if sigma <= lowNoiseSigma {
		return lowNoiseRank
	}
	return highNoiseRank
}

// The least ranks of RankFor, below and above lowNoiseSigma.
const (
	lowNoiseSigma = 15
	lowNoiseRank  = 10
	highNoiseRank = 6
)

// rankZ is how many standard errors above zero the signal power along a
// direction must be for ChooseRank to count it.
const rankZ = 3

// ChooseRank returns the dimension of the spectral subspace for the noisy
// cube y with noise σ and the estimate x: the larger of RankFor(σ) and the
// number of leading spectral directions of x (about y's mean) along which
// y holds signal beyond its noise by more than rankZ standard errors,
// SignalPower > rankZ·σ²·√(2/N) for N pixels.
//
// Why both: the σ rule was tuned on crops of 10⁴ pixels, where the
// directions past it hold too little signal to earn their noise; a whole
// scene has more materials, and 16 times the pixels make weaker directions
// significant (full balloons at σ = 30: rank 9 gains 0.7 dB over 6,
// docs/results.md).
//
// The count stops at the first direction without signal, so the power is
// measured along the leading rankDirections directions, then twice as
// many, until one of them holds none: the same rank as along all of
// them (each direction's power is its own sum), at a fraction of the cost
// on a cube of many bands, where the rank is a few directions of hundreds.
func ChooseRank(y, x *msi.Cube, sigma float64) (int, error) {
	bs, err := subspace.Fit(x, subspace.MeanSpectrum(y), y.Bands)
	if err != nil {
		return 0, err
	}
	for n := min(y.Bands, rankDirections); ; n = min(y.Bands, 2*n) {
		power := bs.Leading(n).SignalPower(y, sigma)
		if rank := rankFromPower(power, sigma, y.Height*y.Width); rank < n || n == y.Bands {
			return rank, nil
		}
	}
}

// rankDirections is the number of leading directions along which
// ChooseRank first measures the power: above RankFor's ranks, so that a
// rank below it is final.
const rankDirections = 16

// Validate checks resolved options, the pilot's included, against a cube
// of height×width×bands.
func (o *Options) Validate(height, width, bands int) error {
	if err := fields.Check(o); err != nil {
		return err
	}
	if o.Rank > bands {
		return option.Errorf(rankSetting.Name, o.Rank, "rank %d is larger than the %d bands", o.Rank, bands)
	}
	return o.Pilot.Validate(height, width, bands)
}

// Denoiser runs the nonlocal method. It keeps nothing from one run to the
// next, and may be used by several goroutines at once.
type Denoiser struct {
	Options Options
	// Report, if not nil, receives the stages' progress and log lines.
	Report report.Reporter

	// signalDirections, when counted, is the number of spectral
	// directions holding signal that ChooseRank's count gives way to
	// (WithSignalDirections).
	signalDirections int
	counted          bool

	// afterStage, if not nil, is given every stage's estimate and time
	// (the stage table of docs/results.md, BenchmarkStages).
	afterStage func(name string, x *msi.Cube, took time.Duration)
	// eigenImages, if not 0, overrides the rule of the band handling
	// (eigen.go): -1 keeps the bands, k > 0 works on k eigen-images
	// (BenchmarkStages' comparison of the two chains).
	eigenImages int
	// pilot, if not nil, is the pilot's method with the dictionary learned
	// from the whole cube (PrepareStrips); nil learns it from the cube
	// denoised.
	pilot denoise.Method
	// basis, unless Denoise chooses one (choosesBasis), is the basis of
	// the eigen-images that every cube Denoise is given is projected on
	// (nil: the bands), instead of one fitted on that cube: the whole
	// cube's for every strip (PrepareStrips), the repair's later passes'
	// for every pass of a repair but the last (its Draft's, PrepareRepair
	// and PrepareStrips on the lines of a repair).
	basis  *subspace.Basis
	chosen bool
	// firstPasses, when readied (PrepareRepair, or PrepareStrips on the
	// lines of a repair), is the basis its Draft is given (nil: the
	// bands).
	firstPasses *subspace.Basis
	readied     bool
	// spectra, if not nil, are the spectral directions, fitted on the
	// whole cube, that the low-rank rounds of a repair's passes on
	// eigen-images work in (roundSpectra, withinSpectra) on a strip or
	// a block (a pass on a whole cube at once keeps bandPilot's own, and
	// the blocks of a last pass fit them on their pilot too,
	// stripSpectra): PrepareRepair's and PrepareStrips' on
	// denoise.RepairLines, kept by their Draft and their blocks.
	spectra *mat.Dense
	// later, if not nil, are the whole cube's statistics of the lines a
	// repair's first pass denoises, which the blocks of its last pass fit
	// their low-rank rounds' spectra on, with their pilot (stripSpectra):
	// the repairLater of the Denoiser PrepareStrips was called on.
	later *laterBases
	// repairLater, if not nil, are PrepareRepair's statistics of the
	// whole cube, which its last pass's blocks take as later for their
	// rounds' spectra (PrepareStrips on the lines of a whole cube,
	// denoiseBlocks, stripSpectra).
	repairLater *laterBases
	// lastPass, if not nil, is the Denoiser a repair's last pass in
	// strips is prepared from on the cube its first passes leave
	// (LastPass): PrepareStrips' on denoise.RepairLines.
	lastPass *Denoiser
}

// Check returns the error Denoise would return for noise level sigma on a
// cube of height×width×bands.
func (d *Denoiser) Check(sigma float64, height, width, bands int) error {
	o := d.Options.Resolve(sigma)
	return o.Validate(height, width, bands)
}

// Denoise returns the estimate of the clean cube for noise of standard
// deviation sigma > 0 on the [0, 255] scale, and in the Result the rank it
// chose. A cube taller than blockLines lines is denoised in line blocks
// (blocks.go), bit for bit as in strips of blockLines lines. It stops
// with ctx.Err() when ctx is cancelled.
func (d *Denoiser) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	log := report.OrDiscard(d.Report)
	o := d.Options.Resolve(sigma)
	if err := o.Validate(noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return nil, denoise.Result{}, err
	}
	if d.inBlocks(noisy.Height) {
		return d.denoiseBlocks(ctx, noisy, sigma)
	}
	// On many bands the chain runs on the eigen-images (eigen.go): noisy
	// is then their cube, and the bands come back at the end. A strip's
	// Denoiser (PrepareStrips) projects on the basis fitted on the whole
	// cube, on which its pilot's dictionary and rank were learned (nil:
	// they were learned on the bands); a repair's first pass (Draft of
	// PrepareRepair or PrepareStrips) on the basis its later passes
	// choose.
	bands := d.basis
	if d.choosesBasis() {
		var err error
		if bands, err = eigenBasis(noisy, sigma, max(o.Rank, o.Pilot.Depth), d.eigenImages); err != nil {
			return nil, denoise.Result{}, err
		}
	}
	full, wavelengths := noisy, noisy.Wavelengths
	if bands != nil {
		log.Logf("eigen-images: %d of the %d bands", bands.K, noisy.Bands)
		noisy = bands.Project(noisy)
	}
	pilotStart := time.Now()
	pilot := d.pilot
	if pilot == nil {
		pilot = &twodsc.Denoiser{Options: o.Pilot, Report: log}
	}
	x, _, err := pilot.Denoise(ctx, noisy, sigma)
	if err != nil {
		return nil, denoise.Result{}, err
	}
	// What afterStage is given: the estimate on the bands. x holds the
	// coordinates of the pixels on the basis on (nil: the bands).
	on := bands
	onBands := func(x *msi.Cube) *msi.Cube {
		if on == nil {
			return x
		}
		return on.Reconstruct(x)
	}
	if d.afterStage != nil {
		d.afterStage("2DSC pilot", onBands(x), time.Since(pilotStart))
	}
	stage := func(name string, rows int, run func(progress func(int)) (*msi.Cube, error)) error {
		start := time.Now()
		log.Start(name, "rows", int64(rows))
		done := int64(0)
		out, err := run(func(n int) { done += int64(n); log.Update(done, "") })
		log.Finish()
		if err != nil {
			return err
		}
		log.Logf("%s in %.1f s", name, time.Since(start).Seconds())
		x = out
		if d.afterStage != nil {
			d.afterStage(name, onBands(x), time.Since(start))
		}
		return nil
	}
	refRows := func(s blockmatch.Options) int {
		return (noisy.Height-s.Patch+s.Step-1)/s.Step + 1
	}
	for i := range max(o.Wiener, 0) {
		if err := stage(fmt.Sprintf("Wiener pass %d", i+1), refRows(wienerShape), func(pr func(int)) (*msi.Cube, error) {
			if i < o.Wiener-1 {
				return subspaceWienerStage(ctx, noisy, x, sigma, WienerSubspace(noisy.Bands), wienerShape, o.Threads, pr)
			}
			if bands != nil {
				// Eigen-images need no spectral DCT: the last pass works
				// on all of them in the estimate's own basis.
				return subspaceWienerStage(ctx, noisy, x, sigma, noisy.Bands, wienerShape, o.Threads, pr)
			}
			return wienerStage(ctx, noisy, x, sigma, matchFeatures, wienerShape, o.Threads, pr)
		}); err != nil {
			return nil, denoise.Result{}, err
		}
	}
	if on != nil {
		// The low-rank rounds fit their subspace on a pilot whose spectra
		// are not confined to E (bandPilot), and work on its coordinates.
		if on, x, err = bandPilot(full, bands, x, sigma); err != nil {
			return nil, denoise.Result{}, err
		}
		if d.spectra != nil && d.pilot != nil {
			// A strip or a block: the whole cube's spectra
			// (roundSpectra), with the strip's pilot in a repair's last
			// pass on a strip (stripSpectra). A pass on the whole cube at
			// once keeps bandPilot's, fitted on all its pixels.
			spectra := d.spectra
			if d.later != nil {
				_, m := d.spectra.Dims()
				if own := stripSpectra(on, x, d.later, m, sigma); own != nil {
					spectra = own
				}
			}
			on, x = withinSpectra(on, x, spectra)
		}
		noisy = on.Project(full)
	}
	rank := o.Rank
	switch {
	case rank == 0 && d.counted:
		rank = min(noisy.Bands, max(d.signalDirections, RankFor(sigma)))
		log.Logf("spectral subspace: rank %d (%d directions of signal, as counted by the caller)", rank, d.signalDirections)
	case rank == 0:
		if rank, err = ChooseRank(noisy, x, sigma); err != nil {
			return nil, denoise.Result{}, err
		}
		log.Logf("spectral subspace: rank %d", rank)
	default:
		log.Logf("spectral subspace: rank %d (given)", rank)
	}
	lr := lowRankShape
	lr.K = o.Group
	y, s := noisy, sigma
	for i := range o.Rounds {
		if i > 0 {
			y, s = regularise(noisy, x, sigma)
		}
		if err := stage(fmt.Sprintf("low-rank round %d", i+1), refRows(lr), func(pr func(int)) (*msi.Cube, error) {
			return lowRankStage(ctx, y, x, s, rank, lr, wnnmC, o.Threads, pr)
		}); err != nil {
			return nil, denoise.Result{}, err
		}
	}
	res := denoise.Result{Settings: denoise.Params("wiener", o.Wiener, "rounds", o.Rounds, "rank", rank, "group", o.Group,
		"pilot-beta", o.Pilot.Beta, "pilot-stride", o.Pilot.Stride, "pilot-code-iters", o.Pilot.CodeIters, "seed", o.Pilot.Seed)}
	if bands != nil {
		x = on.Reconstruct(x)
		res.Settings = append(res.Settings, denoise.Params("eigen-images", bands.K)...)
	}
	x.Wavelengths = wavelengths
	return x, res, nil
}

// regularise returns Y' = λY + (1−λ)X and its remaining noise level
// δ·√|σ² − mean((Y − Y')²)|.
func regularise(y, x *msi.Cube, sigma float64) (*msi.Cube, float64) {
	out := msi.NewCube(y.Height, y.Width, y.Bands)
	ss := 0.0
	for i, v := range y.Data {
		out.Data[i] = regLambda*v + (1-regLambda)*x.Data[i]
		d := v - out.Data[i]
		ss += d * d
	}
	return out, regDelta * math.Sqrt(math.Abs(sigma*sigma-ss/float64(len(y.Data))))
}

// choosesBasis says whether Denoise chooses the basis of its eigen-images
// on the cube it is given: a whole cube's run does (unless its basis was
// chosen for it, as for a repair's first pass), and so does a repair's
// last pass (readied: PrepareRepair, PrepareStrips on
// denoise.RepairLines, whose Denoiser run as a last pass on a strip
// counts on the strip); any other strip of PrepareStrips projects on the
// whole cube's basis.
func (d *Denoiser) choosesBasis() bool {
	return !d.chosen && (d.pilot == nil || d.readied)
}

// Draft returns the nonlocal method with one Wiener pass (none if d has
// none) and one low-rank round, its other settings d's, and the pilot and
// rank that PrepareStrips shared: a first estimate
// that costs about half a full run. As the first of repair's two passes it
// cost 0.05 dB on the mixed-noise chart crop (docs/results.md).
func (d *Denoiser) Draft() denoise.Method {
	o := d.Options
	if o.Wiener != -1 {
		o.Wiener = 1
	}
	o.Rounds = 1
	basis, chosen := d.basis, d.chosen
	if d.readied {
		basis, chosen = d.firstPasses, true
	}
	return &Denoiser{Options: o, Report: d.Report, pilot: d.pilot, basis: basis, chosen: chosen, signalDirections: d.signalDirections, counted: d.counted,
		eigenImages: d.eigenImages, spectra: d.spectra}
}

// WithSignalDirections returns d choosing the rank of its low-rank rounds
// from k directions of signal, as ChooseRank from its own count: the
// larger of k and RankFor(σ), at most the bands; a rank given in Options
// is kept (denoise.SignalCounter).
func (d *Denoiser) WithSignalDirections(k int) denoise.Method {
	c := *d
	c.signalDirections, c.counted = max(k, 0), true
	return &c
}

// PrepareRepair returns d with a Draft, which runs every pass of a repair
// but the last, that works on the eigen-images the repair's later passes
// would choose (repairBasis: the block means of the voxels that the first
// pass, denoising first, did not fill, each column of blocks' mean taken
// off), or on the bands when they choose the bands; the last pass
// chooses on its own cube, as before. It returns d itself on a cube too
// few in bands or blocks for eigen-images, or when d's basis is chosen
// already (denoise.RepairPreparer).
//
// Why: the first pass's own cube counts the noise of its fill and the
// stripes left in it as signal, and the last pass's cube, with the first
// pass's estimate in the filled voxels, counts fewer directions still when
// that estimate was on eigen-images. On three cubes of 224 bands with
// QRNN3D's case 5 (docs/results.md): the 256×256 balloons crop with
// Poisson-Gaussian noise kept its 224 bands in the first pass and worked
// on 30 eigen-images in the second; now 26 and 20, 1.0 dB higher at half
// the CPU, where its strips (whose passes all work on the repair's basis,
// PrepareStrips on denoise.RepairLines) end 0.1 dB lower; with Gaussian
// noise of σ 10–70, 20 and 16 instead of the bands and 16, 0.08 dB lower
// at a third of the CPU; Indian Pines keeps the bands in the first pass
// (the same bytes). The last pass on the repair's basis instead lost 0.4
// dB (20 against 16) and 0.3 dB (the bands against 52).
func (d *Denoiser) PrepareRepair(first *msi.Cube, filled []bool, sigma float64) (denoise.Method, error) {
	o := d.Options.Resolve(sigma)
	least := max(o.Rank, o.Pilot.Depth)
	if d.chosen || !mayUseEigenImages(first.Height, first.Width, first.Bands, least, d.eigenImages) {
		return d, nil
	}
	basis, later, err := repairBasis(first, filled, sigma, least, d.eigenImages)
	if err != nil {
		return nil, err
	}
	log := report.OrDiscard(d.Report)
	if basis == nil {
		log.Logf("the repair's first pass works on the %d bands (chosen on the voxels it does not fill, each column of blocks' mean taken off)", first.Bands)
	} else {
		log.Logf("the repair's first pass works on %d eigen-images of the %d bands (fitted on the voxels it does not fill, each column of blocks' mean taken off)", basis.K, first.Bands)
	}
	c := *d
	c.firstPasses, c.readied, c.spectra, c.repairLater = basis, true, later.spectra, later
	return &c, nil
}
