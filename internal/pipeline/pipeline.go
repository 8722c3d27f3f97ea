// Package pipeline runs one denoising job from the input file to the
// output files: the policy between reading a cube and writing the result,
// so that the command line only turns flags into a Job.
//
// A job reads its input, finds what noise it has, resolves σ, denoises,
// and writes every output as one (nothing half-written, and on any error
// or cancellation none of the outputs, with what they would have replaced
// put back):
//
//  1. Strips. A cube in a format read in windows of lines is denoised in
//     strips when asked (Strips.Lines) or when its whole-cube run would not
//     fit the memory budget (the method's BytesPerVoxel per voxel plus
//     FixedMemory). Signal-dependent noise is then stabilised strip by
//     strip with the whole cube's transform (stabilise_strips.go).
//  2. What the noise is (NoiseModel). Missing voxels (no data: NaN in the
//     cube, and the voxels a --mask file marks) are data of no kind: they
//     are left out of every statistic, filled before denoising (package
//     repair) and written back as they were. By default one noise model
//     of the whole cube is fitted over windows of lines, whole or in
//     strips (sparsenoise.Fit): the stripes, dead columns and a σ per
//     band that the sparse noise does not inflate, with the bands'
//     noise-level functions in the same pass (noiselevel.Stream); the
//     local sparse noise (impulses, dead lines) is found with it in the
//     whole cube or in each strip (sparsenoise.DetectWith), and its
//     Summary is logged. Then:
//     sparse noise found (impulse or dead bands, or stripes of at least
//     StripeSignificance·σ) is removed around the method by package repair,
//     the bands whitened by their σ; otherwise bands whose σ differ by more
//     than DifferRatio are whitened and denoised (package bandwhiten);
//     otherwise the method runs with one σ (given, or noise.EstimateMedian's)
//     on the cube as it is, exactly as without the detector; a cube with
//     missing voxels and no sparse noise has them filled first (PathFill).
//     A given σ more than denoise.SigmaMismatch times away from the
//     estimate is warned of. Signal-dependent noise (the bands'
//     noise-level functions fitted by package noiselevel, or given) is
//     first stabilised (package vst; stripes the detector found in the
//     input subtracted before), the stabilised cube denoised by the paths
//     above with the impulses and dead pixels found in the input, and the
//     result inverted without bias (PathStabilised, stabilise.go).
//  3. Outputs: the result, and on request the learned dictionary, the mask
//     of the pixels treated as missing and the residual noisy − result,
//     each with the input's metadata and a processing line that says how
//     it was made.
//  4. Scores: with a reference (Job.Ref), the metrics of the input and of
//     the result against it, in the Outcome.
//
// Every path is resolved to its format once, when the job starts
// (formats.Source, formats.Target), and carried through it. The other
// commands that make cubes are jobs here too: TrainJob (tdsc train) and
// NoiseJob (tdsc noise).
//
// σ is on the [0, 255] scale of package msi; the log says it in the
// input's units too.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"tdsc/internal/atomicfile"
	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/formats/array"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/option"
	"tdsc/internal/parallel"
	"tdsc/internal/report"
	"tdsc/internal/shard"
	"tdsc/internal/stages/bandwhiten"
	"tdsc/internal/stages/noiselevel"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/stages/vst"
	"tdsc/internal/tile"
)

// Job is one denoising run.
type Job struct {
	// Input is the noisy cube's path, read with Read.
	Input string
	Read  msi.ReadOptions
	// Mask, if not empty, is the path of a cube of the input's height and
	// width, with one band or the input's bands, whose nonzero (or NaN)
	// voxels mark the input's voxels as missing: left out of the data and
	// written back as they were (see ApplyMask), read with MaskRead.
	Mask     string
	MaskRead msi.ReadOptions
	// Ref, if not empty, is the path of the clean cube, read with RefRead
	// once the input is read and checked to be of its size: the job
	// scores the input and the result against it (Outcome.Scores), and
	// so needs the whole cube.
	Ref     string
	RefRead msi.ReadOptions
	// Spec is the method's declaration and Method the method built from
	// it (Spec.Build); Known is the σ its given dictionary records (0:
	// none).
	Spec   denoise.Spec
	Method denoise.Method
	Known  float64
	// Sigma is the noise level on the [0, 255] scale, 0 to resolve it
	// (Known, else an estimate from the input).
	Sigma float64
	// Noise chooses which parts of the noise are looked for and treated.
	Noise NoiseModel
	// Strips chooses whether the job runs strip by strip.
	Strips Strips

	// Out is the result's path. SaveDictionary, SaveMask and SaveResidual,
	// if not empty, are the paths of the dictionary the method learned
	// (dictfile), the mask of the pixels treated as missing (a cube of
	// the codes of MaskCode) and the removed component noisy − result.
	Out, SaveDictionary, SaveMask, SaveResidual string
	// DType is the element type of the result and the residual in a
	// format that takes one (see WriteOptions); they are written in the
	// input's units. The mask is written with the format's defaults.
	DType string
	// Force replaces existing outputs.
	Force bool

	// Program names the program and its version in processing lines
	// ("tdsc v1.2").
	Program string
	// Report receives the log lines and progress (nil: none).
	Report report.Reporter

	// in, out, mask and residual are Input, Out, SaveMask and
	// SaveResidual resolved to their formats, once, by Run (mask and
	// residual when asked for); clean is the reference, once read.
	in                  formats.Source
	out, mask, residual formats.Target
	clean               *msi.Cube
}

// Strips chooses how a job is cut into strips of lines.
type Strips struct {
	// Lines is the number of lines of every strip's core: 0 to run whole
	// unless the cube does not fit Budget (then strips that fit it), a
	// positive number to run in strips of that many lines (rounded down
	// to the method's alignment).
	Lines int
	// Budget is the memory budget in bytes (0: DefaultBudget).
	Budget int64
	// Shard, when its Count is not 0, runs the job's share of the strips
	// (it implies strips) and writes it as a part beside the output, with
	// the lines of the mask and the residual when they are asked for; the
	// shard that finds every part there writes the outputs (package
	// shard). Key identifies the settings of the run that decide the
	// outputs (a command's flags less those that do not, one
	// "--name=value" a line, as a part of another run's are compared with
	// them in its error): shards of one output must all be given the same.
	Shard shard.Spec
	Key   string
}

// Outcome is what a job did.
type Outcome struct {
	// Path is how the cube was denoised.
	Path Path
	// Sigma is the σ the method ran at: the one σ, or the reference level
	// the bands were whitened to.
	Sigma float64
	// BandSigmas are the bands' σ the cube was whitened by (nil on
	// PathGaussian).
	BandSigmas []float64
	// Found is what the sparse-noise detector found (with the parts
	// switched off removed; on the stabilised cube on PathStabilised);
	// nil when it did not run.
	Found *sparsenoise.Report
	// Stabilised is the variance-stabilising transform on PathStabilised
	// (nil on the others).
	Stabilised *vst.Transform
	// Strips is the number of strips, 0 for a whole-cube run.
	Strips int
	// Waiting is true for a shard (Strips.Shard) that wrote its part but
	// not the output, which the shard that finishes last writes.
	Waiting bool
	// Noisy and Result are the input and the result of a whole-cube run
	// (nil in strips).
	Noisy, Result *msi.Cube
	// Scores are the metrics of the input and of the result against the
	// reference, in that order, when Job.Ref is given.
	Scores []Score
	// Detect is the time the detector took, Total the whole job's.
	Detect, Total time.Duration
}

// Score is the metrics of a cube against the reference.
type Score struct {
	// Path is the cube's path; Wavelengths its bands' (nil if unknown).
	Path        string
	Wavelengths []float64
	Report      *metrics.Report
}

// MaskCode is the value of a voxel in a saved mask: 0 for a pixel that
// was denoised as it was, MaskCode(sparsenoise.Impulse) = 1 for an
// impulse, MaskCode(sparsenoise.Dead) = 2 for a pixel of a dead column or
// line, 3 for both, and 4 added for a missing voxel (no data).
func MaskCode(bits uint8) float64 {
	return float64(bits & (sparsenoise.Impulse | sparsenoise.Dead | sparsenoise.Missing))
}

// Validate returns an error for settings of j that contradict each other,
// naming the flags of the command line.
func (j *Job) Validate() error {
	n := j.Noise
	if j.Sigma != 0 {
		if err := denoise.CheckSigma(j.Sigma); err != nil {
			return err
		}
		if n.PerBand == On {
			return fmt.Errorf("--sigma and --sigma-per-band=on contradict each other: one σ for every band, or one per band")
		}
	}
	if n.Params != nil && n.Signal == SignalGaussian {
		return fmt.Errorf("--noise-params give a Poisson-Gaussian model: they do not go with --noise-model %s", n.Signal)
	}
	if j.Sigma != 0 && (n.Signal == SignalPoissonGaussian || n.Params != nil) {
		return fmt.Errorf("--sigma is one σ for every value, the Gaussian model: it does not go with --noise-model %s or --noise-params", SignalPoissonGaussian)
	}
	if n.Estimator != "" {
		switch {
		case n.PerBand == Off:
			return fmt.Errorf("--sigma-estimator applies only with per-band σ (--sigma-per-band on or auto)")
		case j.Sigma != 0:
			return fmt.Errorf("--sigma-estimator applies only without --sigma")
		}
		if err := noise.CheckEstimator("sigma-estimator", n.Estimator); err != nil {
			return err
		}
	}
	if n.Sparse == Off {
		if n.Stripes == Off || n.Impulses == Off || n.Dead == Off {
			return fmt.Errorf("--stripes, --impulses and --dead-lines choose parts of the sparse noise: they do not apply with --sparse-noise off")
		}
		if j.SaveMask != "" {
			return fmt.Errorf("--save-mask needs the sparse-noise detection: drop --sparse-noise off")
		}
	}
	for _, p := range []struct{ flag, path string }{{"--save-mask", j.SaveMask}, {"--save-residual", j.SaveResidual}, {"--save-dict", j.SaveDictionary}} {
		if p.path != "" && sameOutput(p.path, j.Out) {
			return fmt.Errorf("%s %s is the output --out too", p.flag, p.path)
		}
	}
	if j.SaveMask != "" && sameOutput(j.SaveMask, j.SaveResidual) {
		return fmt.Errorf("--save-mask and --save-residual are both %s", j.SaveMask)
	}
	return nil
}

// sameOutput reports whether writing a and b would write a common file.
func sameOutput(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	for _, p := range formats.ForWrite(a).Outputs(a) {
		if slices.Contains(formats.ForWrite(b).Outputs(b), p) {
			return true
		}
	}
	return a == b
}

// Run runs the job. On error, or when ctx is cancelled, no output is
// left and the files the outputs would have replaced are as they were.
func Run(ctx context.Context, j *Job) (*Outcome, error) {
	start := time.Now()
	log := report.OrDiscard(j.Report)
	if err := j.Validate(); err != nil {
		return nil, err
	}
	j.out, j.mask, j.residual, j.clean = formats.NewTarget(j.Out), formats.NewTarget(j.SaveMask), formats.NewTarget(j.SaveResidual), nil
	for _, t := range []formats.Target{j.out, j.mask, j.residual} {
		if t.Path == "" {
			continue
		}
		if err := t.Check(0, 0, 0, msi.WriteOptions{Force: j.Force}); err != nil {
			return nil, err
		}
	}
	if err := atomicfile.Check(j.Force, j.SaveDictionary); err != nil {
		return nil, err
	}
	var err error
	if j.in, err = formats.NewSource(j.Input, j.Read); err != nil {
		return nil, err // missing, of no format, or read with options it does not take
	}
	if err := j.checkSizeEarly(); err != nil {
		return nil, err
	}
	budget := j.Strips.Budget
	if budget == 0 {
		budget = DefaultBudget()
	}
	strips, err := j.decideStrips(budget, log)
	if err != nil {
		return nil, err
	}
	out := &Outcome{}
	set := &outputSet{force: j.Force}
	if strips != nil {
		err = j.runStrips(ctx, strips, budget, set, out, log)
	} else {
		err = j.runWhole(ctx, set, out, log)
	}
	if err != nil {
		set.rollback()
		return nil, err
	}
	set.commit()
	out.Total = time.Since(start)
	if out.Waiting {
		log.Logf("shard %s: %.1f s in all", j.Strips.Shard, out.Total.Seconds())
		return out, nil
	}
	log.Logf("wrote %s (%.1f s in all)", j.Out, out.Total.Seconds())
	if j.clean != nil {
		if err := j.score(ctx, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// score scores the input and the result against the reference, into
// out.Scores.
func (j *Job) score(ctx context.Context, out *Outcome) error {
	for _, c := range []struct {
		path string
		cube *msi.Cube
	}{{j.Input, out.Noisy}, {j.Out, out.Result}} {
		rep, err := metrics.Evaluate(ctx, j.clean, c.cube)
		if err != nil {
			return err
		}
		out.Scores = append(out.Scores, Score{Path: c.path, Wavelengths: c.cube.Wavelengths, Report: rep})
	}
	return nil
}

// runWhole reads the whole cube, denoises it by the path the noise model
// chooses and writes the outputs into set.
func (j *Job) runWhole(ctx context.Context, set *outputSet, out *Outcome, log report.Reporter) error {
	noisy, err := open(j.in, log)
	if err != nil {
		return err
	}
	if j.Ref != "" {
		if err := j.readRef(ctx, noisy, log); err != nil {
			return err
		}
	}
	if err := j.checkOutputSizes(ctx, noisy); err != nil {
		return err
	}
	var masked []Masked
	if j.Mask != "" {
		if masked, err = ApplyMask(noisy, j.Mask, j.MaskRead); err != nil {
			return err
		}
	}
	missing, err := j.checkMissing(noisy, log)
	if err != nil {
		return err
	}
	if err := j.checkShape(noisy.Height, noisy.Width, noisy.Bands, missing > 0); err != nil {
		return err
	}
	det, levels, took, err := j.detect(ctx, noisy, missing, out, log)
	if err != nil {
		return err
	}
	if j.Sigma == 0 && j.Known == 0 {
		if why := belowDetection(noisy, det); why != "" {
			// Sparse noise is judged against the Gaussian noise's σ: with
			// none to measure, what the detector found is not said.
			log.Logf("%s; the input is written unchanged (--sigma denoises it anyway)", why)
			return j.writeUnchanged(ctx, set, noisy, masked, det, out, log)
		}
	}
	sayFound(noisy.Stored.Scale, out.Found, "", took, log)
	// Signal-dependent noise is denoised on its stabilised cube (work),
	// by the path the noise found there chooses, and the result inverted.
	stab, err := j.stabiliser(noisy, det, levels, log)
	if err != nil {
		return err
	}
	work, method := noisy, j.Method
	if stab != nil {
		// Stripes are an offset of the input's values: subtracted there,
		// where they are one offset per column; on the stabilised cube
		// they would vary with the signal down the column.
		if j.Noise.Stripes != Off && det != nil && len(significantStripes(det)) > 0 {
			work = repair.SubtractStripes(noisy, det.StripeOffsets)
			log.Logf("stripes subtracted from the input before stabilising: %d bands", len(det.StripedBands()))
		}
		if method, err = stab.countSignal(method, work, det, log); err != nil {
			return err
		}
		work = stab.Forward(nil, work)
		log.Logf("variance stabilised band by band (generalised Anscombe transform with the %s a and b): the noise σ is %.4g on the stabilised cube", stab.source, stab.Scale)
		// Its σ and stripes are fitted without the input's impulses
		// and dead pixels. Its own test for impulses misses some of
		// them: the input's stripe offsets, subtracted before the
		// transform, move a stuck value by a column's offset, and it is
		// one value no more. On the 256×256 chart_and_stuffed_toy crop
		// at 224 bands with Poisson-Gaussian noise and QRNN3D's case 5,
		// the model of the stabilised cube in strips missed about 150 of
		// the 6 400 impulses of a band of density 0.7 in every window of
		// 36 lines, and put its σ at 30.4 where the transform leaves 10.4
		// (docs/results.md).
		if det, took, err = j.detectStabilised(ctx, work, missing, det, out, log); err != nil {
			return err
		}
		sayFound(work.Stored.Scale, out.Found, "on the stabilised cube (impulses and dead pixels as found in the input): ", took, log)
		if err := stab.checkFit(work, det); err != nil {
			return fmt.Errorf("%s: %w", j.Input, err)
		}
	}
	path, note := j.Noise.choosePath(det, j.Sigma != 0)
	if note != "" {
		log.Logf("%s", note)
	}
	out.Path = path
	if j.Sigma != 0 {
		// The detector's σ when it ran, which leaves out what is not
		// Gaussian noise; else the estimate a missing σ would have.
		var estimate float64
		switch {
		case det != nil:
			estimate = bandwhiten.Reference(det.Sigma, bandwhiten.ReferenceMedian)
		case noise.CheckSize(noisy.Height, noisy.Width, noisy.Bands) == nil:
			estimate = noise.EstimateMedian(noisy)
		}
		j.sayGivenSigma(estimate, noisy.Stored.Scale, log)
	}
	var (
		result *msi.Cube
		res    denoise.Result
		how    string
	)
	run := runner(method, &res)
	switch path {
	case PathGaussian:
		if out.Sigma, err = denoise.ResolveSigma(work, j.Sigma, j.Known, log); err != nil {
			return err
		}
		result, err = run(ctx, work, out.Sigma)
	case PathWhitened:
		var by string
		if out.BandSigmas, by, err = j.bandSigmas(work, det, log); err != nil {
			return err
		}
		out.Sigma = bandwhiten.Reference(out.BandSigmas, bandwhiten.ReferenceMedian)
		log.Logf("denoising with the bands whitened to σ = %.4g", out.Sigma)
		result, err = bandwhiten.Denoise(ctx, run, work, out.BandSigmas, bandwhiten.Options{})
		how = fmt.Sprintf(" (bands whitened to σ = %.4g by their %s estimates)", out.Sigma, by)
	case PathRepair:
		var removed *repair.Result
		removed, how, err = j.repair(ctx, method, work, det, &res, out, log)
		if err == nil {
			result = removed.Estimate
		}
	case PathFill:
		var filled *repair.Result
		filled, how, err = j.fill(ctx, work, det, run, out, log)
		if err == nil {
			result = filled.Estimate
		}
	}
	if err != nil {
		return err
	}
	if stab != nil {
		result = stab.Inverse(nil, result)
		out.Path, out.Stabilised = PathStabilised, stab.Transform
		how = fmt.Sprintf(" (signal-dependent noise: variance stabilised with the %s a and b of every band, noise σ %.4g after it, inverted without bias)", stab.source, stab.Scale) + how
	}
	Restore(result, noisy, masked)
	result.Metadata = noisy.Metadata // the scene's, unchanged
	result.Processing = j.describe(out.Sigma, res) + how
	out.Noisy, out.Result = noisy, result
	return j.writeWhole(ctx, set, noisy, result, det, res, how, log)
}

// checkShape returns an error for a cube of height×width×bands too small
// for the job, before any work, saying the size needed: measuring the
// noise (an estimated σ, the sparse-noise search, the σ of a cube with
// missing voxels) needs noise.MinSide×MinSide pixels; the method needs
// its own (Method.Check), checked here when σ is known and otherwise
// once it is estimated.
func (j *Job) checkShape(height, width, bands int, missing bool) error {
	sigma := j.Sigma
	if sigma == 0 {
		sigma = j.Known
	}
	if err := noise.CheckSize(height, width, bands); err != nil && (sigma == 0 || j.Noise.Sparse != Off || missing) {
		return fmt.Errorf("%s: %w (or, with --sigma and --sparse-noise off, a size the method takes)", j.Input, err)
	}
	if sigma != 0 {
		return j.Method.Check(sigma, height, width, bands)
	}
	return nil
}

// checkOutputSizes returns an error for an output that cannot hold a cube
// of noisy's size (formats.CheckOutput), before the work.
func (j *Job) checkOutputSizes(ctx context.Context, noisy *msi.Cube) error {
	opts := j.writeOptions(ctx, noisy.Stored)
	for _, t := range []formats.Target{j.out, j.residual, j.mask} {
		if t.Path == "" {
			continue
		}
		if t == j.mask {
			opts = msi.WriteOptions{Force: j.Force} // the format's defaults
		}
		if err := t.Check(noisy.Height, noisy.Width, noisy.Bands, opts); err != nil {
			return err
		}
	}
	return nil
}

// checkSizeEarly asks the result's and the residual's formats whether
// they hold a cube of the input's size, with the size from the input's
// header where its format gives one (ENVI, .npy, GDAL), before anything
// is read: a level-5 MAT-file holds at most 2 GiB a variable. With
// --dtype input the element type is known only once the input is read,
// and the check after the read (checkOutputSizes) decides.
func (j *Job) checkSizeEarly() error {
	if j.DType == "input" {
		return nil
	}
	h, w, b, err := j.in.Size()
	if err != nil || h == 0 {
		return nil // a cube it cannot read is said by the read
	}
	opts := msi.WriteOptions{Force: j.Force, DType: j.DType}
	for _, t := range []formats.Target{j.out, j.residual} {
		if t.Path == "" {
			continue
		}
		if err := t.Check(h, w, b, opts); err != nil {
			return err
		}
	}
	return nil
}

// detect finds the noise of the input c as the job's noise model asks,
// and returns it, the noise-level functions and band means streamed with
// it (nil unless the sparse noise is looked for and the model is not
// SignalGaussian) and the time it took. With the sparse noise looked
// for, the noise model of the whole cube is fitted as a run in strips
// fits it (noiseModel: in windows of lines), and the local sparse noise
// (impulses, dead lines, missing voxels) found in c with it
// (sparsenoise.DetectWith), as every strip finds its own: one model of
// the cube's noise, whole or in strips. Without, the report is nil when
// c has no missing voxel, else the missing voxels alone. It sets out's
// Found and adds to its Detect time.
func (j *Job) detect(ctx context.Context, c *msi.Cube, missing int, out *Outcome, log report.Reporter) (*sparsenoise.Report, *noiselevel.Stream, time.Duration, error) {
	switch {
	case j.Noise.Sparse != Off:
		model, stream, _, took, err := j.noiseModel(ctx, tile.Lines{Cube: c}, log)
		if err != nil {
			return nil, nil, 0, err
		}
		t := time.Now()
		det := j.Noise.withParts(sparsenoise.DetectWith(c, model))
		took += time.Since(t)
		out.Detect += took
		out.Found = det
		return det, stream, took, nil
	case missing > 0:
		return sparsenoise.MissingOnly(c), nil, 0, nil
	}
	return nil, nil, 0, nil
}

// detectStabilised finds the noise of work, the stabilised cube of the
// input whose noise detect reported as input, as a run in strips finds
// it (stabilisedStrips): its σ and stripes fitted in windows of lines
// with the input's impulse and dead pixels missing (stabilisedModel),
// its impulses, dead pixels and missing voxels the input's, since they
// replace the data and are found where they are the values they were set
// to, and the transform, steep at the dark end of a band, would make
// outliers of dark pixels' noise. The pixels are set to NaN in work for
// the fit and set back after it, which holds their values instead of a
// copy of work (withoutSparse's, in strips). It sets out's Found and adds
// to its Detect time; without the sparse noise looked for, work's
// missing voxels alone (nil when it has none).
func (j *Job) detectStabilised(ctx context.Context, work *msi.Cube, missing int, input *sparsenoise.Report, out *Outcome, log report.Reporter) (*sparsenoise.Report, time.Duration, error) {
	if j.Noise.Sparse == Off {
		if missing > 0 {
			return sparsenoise.MissingOnly(work), 0, nil
		}
		return nil, 0, nil
	}
	mask := sparseMask(input)
	var held []float64
	for i, m := range mask {
		if m != 0 {
			held = append(held, work.Data[i])
			work.Data[i] = math.NaN()
		}
	}
	window := modelWindowLines(work.Height, work.Width, work.Bands)
	model, took, err := j.stabilisedModel(ctx, tile.Lines{Cube: work}, window, input, log)
	k := 0
	for i, m := range mask {
		if m != 0 {
			work.Data[i], k = held[k], k+1
		}
	}
	if err != nil {
		return nil, 0, err
	}
	out.Detect += took
	out.Found = model
	return model, took, nil
}

// sayFound says on log, after prefix, what the detector found in a cube
// (found nil: it did not run), and the median σ in the cube's units
// when they are not the working scale (scale, its Storage.Scale, neither
// 0 nor 1).
func sayFound(scale float64, found *sparsenoise.Report, prefix string, took time.Duration, log report.Reporter) {
	if found == nil {
		return
	}
	log.Logf("%s%s (found in %.1f s)", prefix, found.Summary(), took.Seconds())
	if scale != 0 && scale != 1 {
		log.Logf("median noise σ in the input's units: %.4g (the σ above are on the working [0, 255] scale)",
			bandwhiten.Reference(found.Sigma, bandwhiten.ReferenceMedian)/scale)
	}
}

// withNoiseOf returns pixels, the report of a cube's impulses, dead
// pixels and missing voxels (the input's, for its stabilised cube), with
// the σ of every band and the stripe offsets of model (the stabilised
// cube's model) in place of its own. Its Mask is pixels'; neither report
// is changed.
func withNoiseOf(pixels, model *sparsenoise.Report) *sparsenoise.Report {
	out := *pixels
	out.Sigma, out.StripeOffsets = slices.Clone(model.Sigma), model.StripeOffsets
	return &out
}

// belowDetection says why the noise of noisy is below detection (see
// noise.BelowDetection), from the detector's σ of its bands when det is
// not nil, else from noise.Estimate's; "" when it is not.
func belowDetection(noisy *msi.Cube, det *sparsenoise.Report) string {
	if det != nil {
		return noise.BelowDetection(det.Sigma)
	}
	return noise.BelowDetection(noise.Estimate(noisy))
}

// writeUnchanged writes noisy, whose noise is below detection, as the
// result: its missing voxels and those masked as they were, a residual of
// 0 and a mask of the missing voxels alone (nothing was treated as
// sparse noise); no dictionary is learned.
func (j *Job) writeUnchanged(ctx context.Context, set *outputSet, noisy *msi.Cube, masked []Masked, det *sparsenoise.Report, out *Outcome, log report.Reporter) error {
	out.Path, out.Sigma = PathUnchanged, 0
	result := noisy.Clone()
	Restore(result, noisy, masked)
	result.Metadata = noisy.Metadata
	result.Processing = j.Program + " denoise: written unchanged, its noise below detection"
	if det != nil {
		kept := *det
		kept.Mask = make([]uint8, len(det.Mask))
		for i, v := range det.Mask {
			kept.Mask[i] = v & sparsenoise.Missing
		}
		det = &kept
	}
	if j.SaveDictionary != "" {
		log.Logf("--save-dict %s: not written, no dictionary was learned", j.SaveDictionary)
	}
	out.Noisy, out.Result = noisy, result
	return j.writeWhole(ctx, set, noisy, result, det, denoise.Result{}, "", log)
}

// bandSigmas returns the bands' σ to whiten noisy by: the estimator's the
// job names, else the detector's, else noise.EstimateBands' mad; and the
// name of where they came from.
func (j *Job) bandSigmas(noisy *msi.Cube, det *sparsenoise.Report, log report.Reporter) ([]float64, string, error) {
	est := j.Noise.Estimator
	if est == "" && det != nil {
		return det.Sigma, "sparse-noise detector's", nil
	}
	if est == "" {
		est = noise.MAD
	}
	sigmas, err := noise.EstimateBands(noisy, est)
	if err != nil {
		return nil, "", err
	}
	log.Logf("estimated σ per band (%s): %s", est, FormatSigmas(sigmas))
	return sigmas, est, nil
}

// runner returns m's Denoise as a repair.Method that keeps the Result of
// its last run in res (nil: none).
func runner(m denoise.Method, res *denoise.Result) repair.Method {
	return func(ctx context.Context, c *msi.Cube, s float64) (*msi.Cube, error) {
		x, r, err := m.Denoise(ctx, c, s)
		if res != nil {
			*res = r
		}
		return x, err
	}
}

// repair removes the sparse noise det found around method (the job's, or
// on PathStabilised the job's counting the input's directions of signal;
// its draft for the first pass when it has one, denoise.Drafter), keeps the
// last pass's Result in res, and returns the processing line's note (see
// repairOptions).
func (j *Job) repair(ctx context.Context, method denoise.Method, noisy *msi.Cube, det *sparsenoise.Report, res *denoise.Result, out *Outcome, log report.Reporter) (*repair.Result, string, error) {
	det, err := j.withBandSigmas(noisy, det, log)
	if err != nil {
		return nil, "", err
	}
	sigmas, opts := j.repairOptions(det, out, log)
	// The method's settings are checked before the cube is repaired, so
	// that a setting the cube cannot take is said as such.
	if err := method.Check(out.Sigma, noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return nil, "", err
	}
	det = withSigmas(det, sigmas)
	method, err = forRepair(method, noisy, det, opts)
	var removed *repair.Result
	if err == nil {
		removed, err = repair.Remove(ctx, noisy, det, runner(method, res), withDraft(opts, method))
	}
	if errors.Is(err, repair.ErrAllMasked) {
		return nil, "", fmt.Errorf("%s: %w", j.Input, err)
	} else if err != nil {
		return nil, "", err
	}
	return removed, j.repairNote(det, opts, out.Sigma), nil
}

// forRepair returns method readied for every pass of the repair of noisy
// with the sparse noise det found (det.Sigma the bands' σ) and opts, when
// it is a denoise.RepairPreparer and the repair has more passes than one:
// from the cube its first pass denoises (repair.Prepare, whitened as
// repair.Remove whitens it, at the level Remove runs the method at) and
// the voxels that pass filled, as the strips' method is readied from their
// lines (stripNoise.lines). Otherwise it returns method.
func forRepair(method denoise.Method, noisy *msi.Cube, det *sparsenoise.Report, opts repair.Options) (denoise.Method, error) {
	p, ok := method.(denoise.RepairPreparer)
	if !ok || opts.Passes == 1 {
		return method, nil
	}
	first, mask, err := repair.Prepare(noisy, det, opts)
	if err != nil {
		return nil, err
	}
	level := bandwhiten.Reference(det.Sigma, bandwhiten.ReferenceMedian)
	if !opts.NoWhiten {
		if first, level, err = bandwhiten.Whiten(first, det.Sigma, bandwhiten.Options{Pivots: opts.Pivots}); err != nil {
			return nil, err
		}
	}
	return p.PrepareRepair(first, filledVoxels(mask), level)
}

// filledVoxels returns which voxels the mask of a repair (repair.Prepare)
// says were filled: those it marks nonzero.
func filledVoxels(mask []uint8) []bool {
	filled := make([]bool, len(mask))
	for i, m := range mask {
		filled[i] = m != 0
	}
	return filled
}

// repairOptions returns the bands' σ and the options with which the
// sparse noise det found (det.Sigma the bands' σ) is removed; it says
// the choice on log and sets out's Sigma and BandSigmas. A given σ is
// every band's σ and the bands are not whitened; so too with PerBand
// Off, at the median of the bands'.
func (j *Job) repairOptions(det *sparsenoise.Report, out *Outcome, log report.Reporter) ([]float64, repair.Options) {
	opts := repair.Options{KeepStripes: j.Noise.Stripes == Off}
	sigmas := det.Sigma
	switch {
	case j.Sigma != 0:
		sigmas = make([]float64, det.Bands)
		for b := range sigmas {
			sigmas[b] = j.Sigma
		}
		opts.NoWhiten = true
		log.Logf("removing the sparse noise, then denoising every band at the given σ = %g (not whitened)", j.Sigma)
	case j.Noise.PerBand == Off:
		opts.NoWhiten = true
		log.Logf("removing the sparse noise, then denoising every band at the median σ = %.4g (--sigma-per-band off: not whitened)",
			bandwhiten.Reference(sigmas, bandwhiten.ReferenceMedian))
	default:
		out.BandSigmas = sigmas
		log.Logf("removing the sparse noise, then denoising with the bands whitened to σ = %.4g",
			bandwhiten.Reference(sigmas, bandwhiten.ReferenceMedian))
	}
	out.Sigma = bandwhiten.Reference(sigmas, bandwhiten.ReferenceMedian)
	return sigmas, opts
}

// repairNote is the processing line's note of the removal of the sparse
// noise det found with opts, the method run at sigma.
func (j *Job) repairNote(det *sparsenoise.Report, opts repair.Options, sigma float64) string {
	how := " (sparse noise removed: " + kinds(det) + "; "
	if opts.NoWhiten {
		return how + fmt.Sprintf("bands not whitened, σ = %.4g)", sigma)
	}
	return how + fmt.Sprintf("bands whitened to σ = %.4g by their %s estimates)", sigma, j.sigmaSource())
}

// withSigmas returns det with the bands' σ sigmas (det itself when they
// are its own). det is not changed.
func withSigmas(det *sparsenoise.Report, sigmas []float64) *sparsenoise.Report {
	if slices.Equal(det.Sigma, sigmas) {
		return det
	}
	d := *det
	d.Sigma = sigmas
	return &d
}

// withDraft returns opts with m's draft for every pass but the last, when
// m has one (denoise.Drafter).
func withDraft(opts repair.Options, m denoise.Method) repair.Options {
	if d, ok := m.(denoise.Drafter); ok {
		opts.Draft = runner(d.Draft(), nil)
	}
	return opts
}

// fill denoises a cube with missing voxels and no sparse noise with run
// (see fillOptions), and returns the processing line's note.
func (j *Job) fill(ctx context.Context, noisy *msi.Cube, det *sparsenoise.Report, run repair.Method, out *Outcome, log report.Reporter) (*repair.Result, string, error) {
	det, err := j.withBandSigmas(noisy, det, log)
	if err != nil {
		return nil, "", err
	}
	sigmas, opts, how, err := j.fillOptions(det, noisy.Stored.Scale, out, log)
	if err != nil {
		return nil, "", err
	}
	if err := j.Method.Check(out.Sigma, noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return nil, "", err
	}
	removed, err := repair.Remove(ctx, noisy, withSigmas(det, sigmas), run, opts)
	if err != nil {
		return nil, "", err
	}
	return removed, how, nil
}

// fillOptions returns the bands' σ and the options with which a cube
// with missing voxels and no sparse noise is denoised (det holds its
// missing voxels and the bands' σ, estimated without them), and the
// processing line's note: the missing voxels filled (the mirror image of
// the data beside them, see repair.FillMissing), the method run once
// with one σ (given, or the median of the bands' σ), or with the bands
// whitened by their σ as the Gaussian paths would whiten them
// (--sigma-per-band on, or auto when they differ). It says the choice on
// log (σ in the units of scale too) and sets out's Sigma and BandSigmas.
func (j *Job) fillOptions(det *sparsenoise.Report, scale float64, out *Outcome, log report.Reporter) ([]float64, repair.Options, string, error) {
	opts := repair.Options{Passes: 1, KeepStripes: true}
	whiten := j.Sigma == 0 && (j.Noise.PerBand == On || j.Noise.PerBand == Auto && BandsDiffer(det.Sigma))
	sigmas := det.Sigma
	if j.Sigma != 0 {
		sigmas = make([]float64, det.Bands)
		for b := range sigmas {
			sigmas[b] = j.Sigma
		}
	}
	out.Sigma = bandwhiten.Reference(sigmas, bandwhiten.ReferenceMedian)
	how := fmt.Sprintf(" (%d missing voxels filled; ", det.Missing)
	if whiten {
		out.BandSigmas = sigmas
		log.Logf("filling the missing voxels, then denoising with the bands whitened to σ = %s", denoise.InUnits(out.Sigma, scale))
		how += fmt.Sprintf("bands whitened to σ = %.4g by their %s estimates)", out.Sigma, j.sigmaSource())
	} else {
		opts.NoWhiten = true
		log.Logf("filling the missing voxels, then denoising every band at σ = %s", denoise.InUnits(out.Sigma, scale))
		how += fmt.Sprintf("σ = %.4g)", out.Sigma)
	}
	if err := denoise.CheckSigma(out.Sigma); err != nil {
		return nil, opts, "", option.Errorf("sigma", out.Sigma, "could not estimate the noise level of the input (is it noise-free?): give it")
	}
	return sigmas, opts, how, nil
}

// sayGivenSigma says a given σ in the input's units, when they are not
// the working scale, and warns when it is far from the estimate
// (denoise.GivenSigmaWarning).
func (j *Job) sayGivenSigma(estimate, scale float64, log report.Reporter) {
	if scale != 0 && scale != 1 {
		log.Logf("σ = %s, as given", denoise.InUnits(j.Sigma, scale))
	}
	if w := denoise.GivenSigmaWarning(j.Sigma, estimate, scale); w != "" {
		log.Logf("%s", w)
	}
}

// withBandSigmas returns det with the bands' σ of the estimator the job
// names, if it names one.
func (j *Job) withBandSigmas(noisy *msi.Cube, det *sparsenoise.Report, log report.Reporter) (*sparsenoise.Report, error) {
	if j.Noise.Estimator == "" || j.Sigma != 0 {
		return det, nil
	}
	sigmas, err := noise.EstimateBands(noisy, j.Noise.Estimator)
	if err != nil {
		return nil, err
	}
	log.Logf("estimated σ per band (%s): %s", j.Noise.Estimator, FormatSigmas(sigmas))
	d := *det
	d.Sigma = sigmas
	return &d, nil
}

// sigmaSource names where the bands' σ of a repair came from.
func (j *Job) sigmaSource() string {
	if j.Noise.Estimator != "" {
		return j.Noise.Estimator
	}
	return "sparse-noise detector's"
}

// kinds names the kinds of sparse noise det holds, for processing lines.
func kinds(det *sparsenoise.Report) string {
	var k []string
	if n := len(det.StripedBands()); n > 0 {
		k = append(k, fmt.Sprintf("stripes in %d bands", n))
	}
	if n := len(det.DeadBands()); n > 0 {
		k = append(k, fmt.Sprintf("dead columns or lines in %d bands", n))
	}
	if n := len(det.ImpulseBands()); n > 0 {
		k = append(k, fmt.Sprintf("impulses in %d bands", n))
	}
	return strings.Join(k, ", ")
}

// writeWhole writes the dictionary (small, first), the result, the mask
// and the residual into set.
func (j *Job) writeWhole(ctx context.Context, set *outputSet, noisy, result *msi.Cube, det *sparsenoise.Report, res denoise.Result, how string, log report.Reporter) error {
	if err := j.saveDictionary(set, res); err != nil {
		return err
	}
	opts := j.writeOptions(ctx, noisy.Stored)
	if _, err := writeCube(set, j.out, result, opts, log); err != nil {
		return err
	}
	if j.SaveMask != "" {
		mask := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
		mask.Metadata = noisy.Metadata
		mask.Fields = nil
		if det != nil {
			for i, v := range det.Mask {
				mask.Data[i] = MaskCode(v)
			}
		}
		mask.Processing = fmt.Sprintf("%s denoise: mask of the pixels treated as missing (1 impulse, 2 dead, 3 both, 4 added for no data) in %s", j.Program, j.Input)
		if _, err := writeCube(set, j.mask, mask, msi.WriteOptions{Force: j.Force}, log); err != nil {
			return err
		}
	}
	if j.SaveResidual != "" {
		residual := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
		for i, v := range noisy.Data {
			residual.Data[i] = v - result.Data[i]
		}
		residual.Metadata = noisy.Metadata
		residual.Processing = "residual input − result of " + result.Processing
		if _, err := writeCube(set, j.residual, residual, opts, log); err != nil {
			return err
		}
	}
	return nil
}

// saveDictionary writes the dictionary a run learned, when asked for.
func (j *Job) saveDictionary(set *outputSet, res denoise.Result) error {
	if j.SaveDictionary == "" || res.Dictionary == nil {
		return nil
	}
	return set.write([]string{j.SaveDictionary}, func() error { return res.Dictionary.WriteFile(j.SaveDictionary, j.Force) })
}

// writeCube writes c to t with opts into set (nil: on its own) and says
// on log which of c's metadata the output's format cannot keep.
func writeCube(set *outputSet, t formats.Target, c *msi.Cube, opts msi.WriteOptions, log report.Reporter) (msi.WriteInfo, error) {
	var info msi.WriteInfo
	write := func() (err error) {
		info, err = t.Write(c, opts)
		return err
	}
	var err error
	if set != nil {
		err = set.write(t.Outputs(), write)
	} else {
		err = write()
	}
	if err == nil {
		if lost := t.Lost(c); len(lost) > 0 {
			report.OrDiscard(log).Logf("%s: a %s keeps no %s", t.Path, t.Format.Info().Label, strings.Join(lost, ", "))
		}
		if note := formats.ScaleNote(t.Path, opts); note != "" {
			report.OrDiscard(log).Logf("%s", note)
		}
	}
	return info, err
}

// writeOptions returns how to write the result of an input stored as src
// (WriteOptions).
func (j *Job) writeOptions(ctx context.Context, src msi.Storage) msi.WriteOptions {
	return WriteOptions(ctx, src, j.DType, j.Force)
}

// WriteOptions returns how to write a cube made from one read as src: in
// the input's units (msi.WriteOptions.Like: its scale, gains and offsets
// undone) and, for an array output, its axes, with the element type dtype
// ("": the format's default); with dtype "input", the input's, or for a
// type that is read but not written the one that holds it
// (array.Writable). An existing output is replaced when force is set; the
// write stops, leaving nothing, once ctx is cancelled.
func WriteOptions(ctx context.Context, src msi.Storage, dtype string, force bool) msi.WriteOptions {
	w := msi.WriteOptions{Force: force, Context: ctx}.Like(src, dtype == "input")
	if dtype != "input" {
		w.DType = dtype
	} else if w.DType != "" {
		w.DType = array.Writable(w.DType)
	}
	return w
}

// describe is the output's processing line: the method, the noise level
// and the settings the run used.
func (j *Job) describe(sigma float64, res denoise.Result) string {
	parts := []string{j.Program + " denoise --method " + j.Spec.Name, "sigma=" + fmt.Sprint(sigma)}
	for _, p := range res.Settings {
		parts = append(parts, p.Name+"="+p.Value)
	}
	return strings.Join(parts, " ")
}

// open reads the cube in and says on log how it was read
// (formats.ReadLine).
func open(in formats.Source, log report.Reporter) (*msi.Cube, error) {
	cube, err := in.Open()
	if err != nil {
		return nil, err
	}
	report.OrDiscard(log).Logf("%s", formats.ReadLine(in.Path, cube.Height, cube.Width, cube.Bands, &cube.Metadata, cube.Missing()))
	return cube, nil
}

// read resolves the cube at path to its format and reads it whole with
// opts, saying on log how it was read; a signal (ctx) abandons the read.
// A cube over the memory budget is an error that says what helps
// (TooLargeHelp).
func read(ctx context.Context, path string, opts msi.ReadOptions, log report.Reporter) (*msi.Cube, error) {
	in, err := formats.NewSource(path, opts)
	if err != nil {
		return nil, err
	}
	return readSource(ctx, in, log)
}

// readSource is read of a resolved cube.
func readSource(ctx context.Context, in formats.Source, log report.Reporter) (*msi.Cube, error) {
	c, err := parallel.Interruptible(ctx, func() (*msi.Cube, error) { return open(in, log) })
	if err != nil {
		return nil, TooLargeHelp(err)
	}
	return c, nil
}

// readRef reads the reference, which must be of noisy's size, into
// j.clean.
func (j *Job) readRef(ctx context.Context, noisy *msi.Cube, log report.Reporter) error {
	clean, err := read(ctx, j.Ref, j.RefRead, log)
	if err != nil {
		return err
	}
	if !clean.SameSize(noisy) {
		return fmt.Errorf("reference %s is %s but the input %s is %s", j.Ref, clean.Size(), j.Input, noisy.Size())
	}
	// One scene on one scale (msi.Agree): the input's is the output's,
	// so a reference on another is refused rather than the input read
	// again.
	if scale, err := msi.Agree(clean.Stored, noisy.Stored); err != nil || scale != 0 {
		if err == nil {
			err = fmt.Errorf("one scene must be read on one scale: give --scale %.6g (the reference's)", scale)
		}
		return fmt.Errorf("the input %s is read %s, but the reference %s %s: %w", j.Input, noisy.Stored.Units, j.Ref, clean.Stored.Units, err)
	}
	j.clean = clean
	return nil
}

// TooLargeHelp adds to an error for a cube that does not fit the memory
// budget (*msi.TooLargeError) what helps; other errors are returned as
// they are.
func TooLargeHelp(err error) error {
	var tl *msi.TooLargeError
	if !errors.As(err, &tl) {
		return err
	}
	return fmt.Errorf("%w: give a larger --max-memory if the machine has the memory, or denoise the cube in strips (tdsc denoise --tile, %s cubes)",
		err, strings.Join(formats.WindowLabels(), " and "))
}

// FormatSigmas lists per-band noise levels on one line.
func FormatSigmas(s []float64) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(parts, " ")
}
