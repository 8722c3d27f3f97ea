package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/report"
	"tdsc/internal/shard"
	"tdsc/internal/stages/bandwhiten"
	"tdsc/internal/stages/noiselevel"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/tile"
)

// defaultMemoryFraction of the machine's RAM is the default memory budget;
// fallbackMemory is the budget where the RAM is not known.
const (
	defaultMemoryFraction = 0.5
	fallbackMemory        = 4 << 30
)

// FixedMemory is the part of a run's memory that does not grow with the
// strip: the Go runtime, OpenBLAS's buffers, a method's training sample
// and dictionary. Strips are sized to the budget less this. (A 1024²×64
// cube in 2dsc strips sized to the whole budget peaked at 1547 MiB for a
// 1536 MiB budget.)
const FixedMemory = 128 << 20

// sigmaWindowLines bounds the lines read to estimate σ of a cube denoised
// in strips, when σ is not given.
const sigmaWindowLines = 512

// DefaultBudget returns the memory budget when none is given: half of the
// machine's RAM, or 4 GiB where it is not known.
func DefaultBudget() int64 {
	if total, ok := totalMemory(); ok {
		return int64(defaultMemoryFraction * float64(total))
	}
	return fallbackMemory
}

// CheckBudget returns an error for a memory budget of n bytes larger than
// the machine's RAM, where that is known. The message reads after the
// budget as the user gave it ("2T is more than …").
func CheckBudget(n int64) error {
	if total, ok := totalMemory(); ok && n > total {
		return fmt.Errorf("is more than the machine's RAM (%s)", msi.FormatBytes(total))
	}
	return nil
}

// wholeCubeNeeds says why the job needs the whole cube in memory, or ""
// when it can run in strips.
func (j *Job) wholeCubeNeeds() string {
	var why []string
	if j.Ref != "" {
		why = append(why, "--ref needs the whole cube (score the output with tdsc eval instead)")
	}
	if j.Noise.PerBand == On && j.Noise.Sparse == Off {
		why = append(why, "--sigma-per-band with --sparse-noise off estimates σ from the whole cube")
	}
	if j.Noise.Estimator != "" {
		why = append(why, "--sigma-estimator estimates σ from the whole cube")
	}
	if j.Mask != "" {
		why = append(why, "--mask needs the whole cube")
	}
	if (j.Noise.Signal == SignalPoissonGaussian || j.Noise.Params != nil) && j.Noise.Sparse == Off {
		why = append(why, "the Poisson-Gaussian model (--noise-model "+string(SignalPoissonGaussian)+", --noise-params) with --sparse-noise off stabilises the whole cube (in strips its band means are taken in the noise model's pass)")
	}
	return strings.Join(why, "; ")
}

// decideStrips returns the input opened for reading in windows of lines
// when the job runs strip by strip, nil when it runs whole: strips when
// j.Strips.Lines is given, or when the input is in a format that reads
// windows of lines and its whole-cube run would need more than the budget
// (the method's BytesPerVoxel per voxel, and FixedMemory). Strips need an
// input and an output in formats that read and write windows
// (formats.Source.Windows, formats.Target.Windows) and nothing that needs
// the whole cube (wholeCubeNeeds); a forced run without them is an error,
// an automatic one says why it cannot tile and runs whole.
func (j *Job) decideStrips(budget int64, log report.Reporter) (msi.WindowReader, error) {
	if j.Strips.Lines < 0 {
		return nil, fmt.Errorf("--tile must be a number of lines ≥ 1 (0: automatic), got %d", j.Strips.Lines)
	}
	readErr, writeErr := j.in.Windows(), j.out.Windows()
	var maskErr, residualErr error
	if j.SaveMask != "" {
		maskErr = j.mask.Windows()
	}
	if j.SaveResidual != "" {
		residualErr = j.residual.Windows()
	}
	var why string
	switch {
	case readErr != nil:
		why = "the input is " + readErr.Error()
	case writeErr != nil:
		why = "the output is " + writeErr.Error()
	case maskErr != nil:
		why = "the mask --save-mask is " + maskErr.Error()
	case residualErr != nil:
		why = "the residual --save-residual is " + residualErr.Error()
	default:
		why = j.wholeCubeNeeds()
	}
	forced := ""
	switch {
	case j.Strips.Shard.Count > 0:
		forced = "--shard"
	case j.Strips.Lines > 0:
		forced = "--tile"
	}
	if forced != "" && why != "" {
		return nil, fmt.Errorf("%s: %s", forced, why)
	}
	if readErr != nil {
		return nil, nil // its size is known only once it is read
	}
	in, err := j.in.OpenWindow()
	if err != nil {
		return nil, err
	}
	if forced != "" {
		return in, nil
	}
	h, w, b := in.Size()
	need := float64(h)*float64(w)*float64(b)*j.Spec.BytesPerVoxel + FixedMemory
	if need <= float64(budget) {
		in.Close()
		return nil, nil
	}
	if why != "" {
		in.Close()
		log.Logf("%s: the whole cube needs about %s, more than the memory budget of %s, but it cannot be denoised in strips: %s",
			j.Input, tile.FormatBytes(int64(need)), tile.FormatBytes(budget), why)
		return nil, nil
	}
	return in, nil
}

// runStrips denoises the input in, opened for windows, into j.Out strip
// by strip: the scale found (one pass over the file when it needs the
// largest value), the noise model of the whole cube fitted in windows of
// lines (stripNoise: the path, σ), the strips planned for the method and
// the budget, what the method learns from the whole cube learned (a
// Tiler or a StripPreparer, denoise.PrepareStrips, from the lines as the
// strips' method sees them: stripNoise.lines), then every strip denoised
// by the path and its core written, in the input's units, its missing
// voxels filled before and written back as missing, with its mask and
// residual when asked for. The header records the settings of the last
// strip's run (a method that neither is a Tiler nor a StripPreparer
// chooses per strip). in is closed when it returns.
func (j *Job) runStrips(ctx context.Context, in msi.WindowReader, budget int64, set *outputSet, out *Outcome, log report.Reporter) error {
	defer in.Close()
	height, width, bands := in.Size()
	// The windows of the passes and the strips are garbage as soon as the
	// next is read: the limit makes the collector return them. It binds
	// only Go's own memory, so it is set again at every strip for what is
	// resident outside it (at the whole budget, with a fixed reserve for
	// that, a 4096²×64 run peaked 15 MiB over it).
	limit := limitMemory(budget)
	defer limit.restore()
	passed, endPass := report.Lazy(log, "finding the largest value (for the units)", "lines", int64(height))
	err := in.Prepare(ctx, func(lines int) { passed(int64(lines)) })
	endPass()
	if err != nil {
		return err
	}
	meta, err := in.Metadata()
	if err != nil {
		return err
	}
	log.Logf("%s", formats.ReadLine(j.Input, height, width, bands, &meta, -1))
	if j.Noise.signalAuto() && j.Sigma == 0 && j.Noise.Sparse == Off {
		log.Logf("with --sparse-noise off, strips do not look for a signal-dependent noise level (that is fitted in the noise model's pass): the noise is taken as Gaussian")
	}
	if err := j.checkShape(height, width, bands, false); err != nil {
		return err
	}
	plan, err := j.stripNoise(ctx, in, meta.Stored, out, log)
	if err != nil {
		return err
	}
	if err := plan.fitPivots(ctx, in, log); err != nil {
		return err
	}
	sigma := out.Sigma
	geom, exact := denoise.TileGeometry(j.Method, sigma)
	lines := j.Strips.Lines
	if least := max(geom.Halo, geom.Align); lines > 0 && lines < least {
		// Every strip reads its halo above and below: a core thinner than
		// the halo repeats the method's work over more lines than it keeps
		// (--tile 1 with a halo of 10: 21 lines denoised for each kept).
		log.Logf("--tile %d is fewer lines than the halo of %d that every strip reads above and below: using strips of %d lines", lines, geom.Halo, least)
		lines = least
	}
	if lines == 0 {
		if lines, err = tile.LinesFor(budget-FixedMemory, width, bands, j.Spec.BytesPerVoxel, geom); err != nil {
			return fmt.Errorf("%s: %v (the budget of %s less %s that does not grow with the strip): raise --max-memory",
				j.Input, err, tile.FormatBytes(budget), tile.FormatBytes(FixedMemory))
		}
	}
	if geom.MaxLines > 0 && lines > geom.MaxLines {
		// A taller strip would be denoised at once (tile.Geometry).
		log.Logf("the method denoises a cube in blocks of %d lines, as a whole run does: using strips of %d lines", geom.MaxLines, geom.MaxLines)
		lines = geom.MaxLines
	}
	if j.Strips.Shard.Count > 0 {
		lines = j.shardLines(lines, height, geom, log)
	}
	strips := tile.Plan(height, lines, geom)
	out.Strips = len(strips)
	how := "each strip denoised on its own, so the result is close to, not the same as, the whole cube's"
	if _, shares := j.Method.(denoise.StripPreparer); shares {
		how = "what the method learns shared by every strip, learned from the whole cube, so the result is close to, not the same as, the whole cube's"
	}
	switch {
	case plan.stab != nil && exact:
		// The transform is the whole cube's, but the σ and the sparse
		// noise of the stabilised cube are found per window and strip.
		how = "the method's model learned from the whole cube, every strip stabilised with the whole cube's transform, its σ and sparse noise found per strip, so the result is close to, not the same as, the whole cube's"
	case plan.stab != nil:
		how = "every strip stabilised with the whole cube's transform, " + how
	case exact && plan.path != PathGaussian:
		// The repair's and the whitening's statistics are a strip's.
		how = "the method's model learned from the whole cube, the rest of the sparse-noise path per strip, so the result is close to, not the same as, the whole cube's"
	case exact:
		how = "the same result as the whole cube"
	}
	log.Logf("%s is %d×%d×%d: denoising it in %d strips of %d lines (halo %d; %s); memory budget %s",
		j.Input, height, width, bands, len(strips), strips[0].Core.Len(), geom.Halo, how, tile.FormatBytes(budget))

	// The job's method, counting the directions of signal when the
	// stabilised path counted them.
	jobMethod := j.Method
	if plan.method != nil {
		jobMethod = plan.method
	}
	method, prepared := jobMethod, denoise.Result{}
	if plan.path != PathUnchanged {
		if method, prepared, err = denoise.PrepareStrips(ctx, method, plan.lines(in), strips, sigma); err != nil {
			return err
		}
	}
	if plan.path == PathRepair {
		// The first pass's draft: the prepared method's, or else the
		// job's (learning what it learns per strip).
		draftOf := method
		if _, ok := method.(denoise.Drafter); !ok {
			draftOf = jobMethod
		}
		plan.opts = withDraft(plan.opts, draftOf)
	}
	var last denoise.Result
	w := j.newStripOutputs(strips)
	denoiseStrip := func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
		limit.update()
		result, mask, err := plan.denoise(ctx, method, c, &last)
		if err == nil {
			w.keep(c, result, mask)
		}
		return result, err
	}
	denoiseOwn := func(ctx context.Context, o *stripOutputs, own []tile.Strip, _ shard.Set) error {
		return j.denoiseStrips(ctx, in, o, own, denoiseStrip, log)
	}
	if lastPass := sweptLastPass(plan, method); lastPass != nil {
		sw := &sweeps{j: j, in: in, plan: plan, strips: strips, sigma: sigma, method: method, lastPass: lastPass, limit: limit, last: &last}
		denoiseOwn = func(ctx context.Context, o *stripOutputs, own []tile.Strip, parts shard.Set) error {
			return sw.run(ctx, o, own, parts, log)
		}
	}
	processing := func() string { return j.describe(sigma, last) + plan.how }
	if j.Strips.Shard.Count > 0 {
		return j.runShard(ctx, in, w, denoiseOwn, processing, sigma, meta, prepared, set, out, log)
	}
	if err := j.createStripOutputs(ctx, w, height, width, bands, meta); err != nil {
		return err
	}
	if err := denoiseOwn(ctx, w, strips, j.shardSet(w, sigma, width, bands)); err != nil {
		w.abort()
		return err
	}
	return j.commitStripOutputs(w, processing(), prepared, set)
}

// denoiseStrips denoises strips of in with fn and writes their cores to
// w, saying how far it is on log.
func (j *Job) denoiseStrips(ctx context.Context, in tile.Reader, w tile.Writer, strips []tile.Strip, fn tile.Func, log report.Reporter) error {
	report.StartSteps(log, "denoising strips", "strips", int64(len(strips)))
	defer log.Finish()
	return tile.Run(ctx, in, w, strips, fn, func(done, _ int) { log.Update(int64(done), "") })
}

// commitStripOutputs puts the outputs of o, whose lines are all written,
// in place in set: the result with the processing line processing, the
// dictionary of prepared when it is to be saved, then the mask and the
// residual when asked for. On error it removes what o wrote.
func (j *Job) commitStripOutputs(o *stripOutputs, processing string, prepared denoise.Result, set *outputSet) error {
	err := j.saveDictionary(set, prepared)
	if err == nil {
		o.result.SetProcessing(processing)
		err = set.write(j.out.Outputs(), o.result.Commit)
	}
	for _, k := range []struct {
		w msi.WindowWriter
		t formats.Target
	}{{o.mask, j.mask}, {o.residual, j.residual}} {
		if err == nil && k.w != nil {
			err = set.write(k.t.Outputs(), k.w.Commit)
		}
	}
	if err != nil {
		o.abort()
	}
	return err
}

// modelWindowVoxels bounds the voxels of a window of lines the noise
// model is fitted over (16 MiB of float64s), and minModelWindowLines the
// lines, whatever the width and bands: the model of a cube depends on its
// shape alone, not on the strips or the budget, so that every run (and
// every shard) fits the same one.
const (
	modelWindowVoxels   = 1 << 21
	minModelWindowLines = 16
)

// modelWindowLines returns the lines of a window of the noise model's
// passes over a height×width×bands cube (modelWindowVoxels).
func modelWindowLines(height, width, bands int) int {
	return min(height, max(minModelWindowLines, modelWindowVoxels/(width*bands)))
}

// stripNoise returns how the strips of in are denoised, and sets out's
// Path, Sigma, BandSigmas and Found: with the sparse noise looked for
// (j.Noise.Sparse), by the path the noise model of the whole cube
// (noiseModel) chooses, as the whole-cube run chooses it from the same
// model, and unless the model is SignalGaussian with the noise
// stabilised when the whole run would stabilise it (streamedStabiliser,
// stabilisedStrips); without, with one σ
// (stripSigma). stored is how the cube is stored, for σ in its units.
func (j *Job) stripNoise(ctx context.Context, in tile.Reader, stored msi.Storage, out *Outcome, log report.Reporter) (*stripNoise, error) {
	if j.Noise.Sparse == Off {
		sigma, err := j.stripSigma(in, stored, log)
		if err != nil {
			return nil, err
		}
		out.Sigma, out.Path = sigma, PathGaussian
		if sigma == 0 {
			out.Path = PathUnchanged
		}
		return &stripNoise{path: out.Path, sigma: sigma}, nil
	}
	height, width, bands := in.Size()
	model, stream, window, took, err := j.noiseModel(ctx, in, log)
	if err != nil {
		return nil, err
	}
	out.Detect += took
	if model.Missing == height*width*bands {
		return nil, fmt.Errorf("%s: every voxel is missing (no data): nothing to denoise", j.Input)
	}
	if j.Sigma == 0 && j.Known == 0 {
		if why := noise.BelowDetection(model.Sigma); why != "" {
			log.Logf("%s; the input is written unchanged (--sigma denoises it anyway)", why)
			out.Path, out.Sigma = PathUnchanged, 0
			return &stripNoise{path: PathUnchanged, model: model, parts: j.Noise}, nil
		}
	}
	out.Found = model
	sayFound(stored.Scale, model, "", took, log)
	if stream != nil {
		stab, err := j.streamedStabiliser(bands, stream, log)
		if err != nil {
			return nil, err
		}
		if stab != nil {
			return j.stabilisedStrips(ctx, in, stored, stab, model, window, out, log)
		}
	}
	return j.stripPath(in, model, stored, out, log)
}

// noiseModel fits the noise model of the whole cube of in as every run
// that looks for sparse noise fits it, whole or in strips: in windows of
// lines (sparsenoise.Fit, windows of modelWindowLines, which it returns)
// and, unless the model is SignalGaussian, with the bands' noise-level
// functions and band means streamed in its second pass (the stream; nil
// for SignalGaussian), every window's sparse noise left out. It returns
// the time the fit took.
func (j *Job) noiseModel(ctx context.Context, in tile.Reader, log report.Reporter) (*sparsenoise.Report, *noiselevel.Stream, int, time.Duration, error) {
	height, width, bands := in.Size()
	window := modelWindowLines(height, width, bands)
	log.Logf("fitting the noise model of the whole cube in windows of %d lines", window)
	var stream *noiselevel.Stream
	var local func(*msi.Cube, *sparsenoise.Report)
	if j.Noise.Signal != SignalGaussian {
		stream = noiselevel.NewStream(height, width, bands)
		local = func(c *msi.Cube, found *sparsenoise.Report) { stream.Add(c, sparseMask(j.Noise.withParts(found))) }
	}
	model, took, err := j.fitModel(ctx, in, "noise model", func(ctx context.Context, r tile.Reader, progress func(lines, pass int)) (*sparsenoise.Report, error) {
		return sparsenoise.Fit(ctx, r, window, progress, local)
	}, log)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	return model, stream, window, took, nil
}

// fitModel fits the noise model of the cube of in with fit
// (sparsenoise.Fit or FitCubeWide, in two passes, the second of which may
// be left out), with the parts the job switches off removed, and returns
// it and the time it took (added to out's Detect time by the caller),
// saying how far it is on log as what.
func (j *Job) fitModel(ctx context.Context, in tile.Reader, what string, fit func(context.Context, tile.Reader, func(lines, pass int)) (*sparsenoise.Report, error), log report.Reporter) (*sparsenoise.Report, time.Duration, error) {
	height, _, _ := in.Size()
	log.Start(what, "lines", 2*int64(height))
	start := time.Now()
	fitted, err := fit(ctx, in, func(lines, pass int) {
		log.Update(int64((pass-1)*height+lines), fmt.Sprintf("pass %d of 2", pass))
	})
	if err == nil {
		log.Update(2*int64(height), "") // the second pass may be left out
	}
	log.Finish()
	if err != nil {
		return nil, 0, err
	}
	return j.Noise.withParts(fitted), time.Since(start), nil
}

// stripPath returns how the strips of in, whose noise model is model, are
// denoised: the path the model chooses and what it needs, as the whole
// run chooses it from its report of the same model; it sets out's Path, Sigma
// and BandSigmas.
func (j *Job) stripPath(in tile.Reader, model *sparsenoise.Report, stored msi.Storage, out *Outcome, log report.Reporter) (*stripNoise, error) {
	height, width, bands := in.Size()
	path, note := j.Noise.choosePath(model, j.Sigma != 0)
	if note != "" {
		log.Logf("%s", note)
	}
	out.Path = path
	if j.Sigma != 0 {
		j.sayGivenSigma(bandwhiten.Reference(model.Sigma, bandwhiten.ReferenceMedian), stored.Scale, log)
	}
	s := &stripNoise{path: path, model: model, parts: j.Noise, sigmas: model.Sigma}
	var err error
	switch path {
	case PathGaussian:
		if s.sigma, err = j.stripSigma(in, stored, log); err != nil {
			return nil, err
		}
		out.Sigma = s.sigma
		return s, nil
	case PathWhitened:
		out.BandSigmas = model.Sigma
		out.Sigma = bandwhiten.Reference(model.Sigma, bandwhiten.ReferenceMedian)
		log.Logf("denoising with the bands whitened to σ = %.4g", out.Sigma)
		s.how = fmt.Sprintf(" (bands whitened to σ = %.4g by their %s estimates)", out.Sigma, j.sigmaSource())
	case PathRepair:
		s.sigmas, s.opts = j.repairOptions(model, out, log)
		s.how = j.repairNote(model, s.opts, out.Sigma)
	case PathFill:
		if s.sigmas, s.opts, s.how, err = j.fillOptions(model, stored.Scale, out, log); err != nil {
			return nil, err
		}
	}
	s.sigma = out.Sigma
	if err := j.Method.Check(s.sigma, height, width, bands); err != nil {
		return nil, err
	}
	return s, nil
}

// stripNoise is how every strip of a cube is denoised: the path the
// cube's noise is denoised by, the level the method runs at, and what the
// path needs: the cube's noise model (nil when the sparse noise is not
// looked for), the parts of it treated, the bands' σ and the options of
// the repair, and the processing line's note.
type stripNoise struct {
	path   Path
	sigma  float64
	model  *sparsenoise.Report
	parts  NoiseModel
	sigmas []float64
	opts   repair.Options
	how    string
	// stab, when not nil, stabilises every strip before the path and
	// inverts its result (the model is then the stabilised cube's), and
	// method is the job's method counting the directions of signal it
	// counted (nil: the job's).
	stab   *stripStabiliser
	method denoise.Method
}

// detect returns what the model and the strip c say of c's sparse noise
// (sparsenoise.DetectWith, with the parts switched off removed), or nil
// without a model. For a stabilised strip, pixels is what the input's
// model finds in its lines, and the report is that with the model's σ and
// stripes (withNoiseOf): its impulses, dead pixels and missing voxels are
// the input's, and nothing is looked for in c.
func (s *stripNoise) detect(c *msi.Cube, pixels *sparsenoise.Report) *sparsenoise.Report {
	switch {
	case s.model == nil:
		return nil
	case pixels != nil:
		return withNoiseOf(pixels, s.model)
	}
	return s.parts.withParts(sparsenoise.DetectWith(c, s.model))
}

// denoise denoises the strip c by the path with method (the job's, or
// the one a Tiler prepared for the strips), keeps the Result of its last
// run in res, and returns the result, with c's missing voxels written
// back as missing, and the strip's mask (nil without a model): the mask
// a whole-cube run saves.
func (s *stripNoise) denoise(ctx context.Context, method denoise.Method, c *msi.Cube, res *denoise.Result) (*msi.Cube, []uint8, error) {
	if s.path == PathUnchanged {
		return c, nil, nil
	}
	raw := c
	c, det := s.detectStrip(raw)
	var mask []uint8
	if det != nil {
		mask = det.Mask
	}
	run := runner(method, res)
	var out *msi.Cube
	var err error
	switch s.path {
	case PathGaussian, PathWhitened:
		filled, _, fillErr := repair.FillMissing(c)
		if errors.Is(fillErr, repair.ErrAllMasked) {
			return raw, mask, nil // no data at all: written back as missing
		}
		if s.path == PathGaussian {
			out, err = run(ctx, filled, s.sigma)
		} else {
			out, err = bandwhiten.Denoise(ctx, run, filled, s.sigmas, bandwhiten.Options{Pivots: s.opts.Pivots})
		}
	case PathRepair, PathFill:
		var removed *repair.Result
		removed, err = repair.Remove(ctx, c, withSigmas(det, s.sigmas), run, s.opts)
		if errors.Is(err, repair.ErrAllMasked) {
			return raw, mask, nil // nothing left to estimate the strip from: written back
		}
		if err == nil {
			out = removed.Estimate
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return s.inInput(raw, out), mask, nil
}

// inInput returns out, the path's estimate of the strip raw (as read),
// in the input's units (the stabilisation inverted, when the path
// stabilises), with raw's missing voxels written back as missing.
func (s *stripNoise) inInput(raw, out *msi.Cube) *msi.Cube {
	if s.stab != nil {
		out = s.stab.Inverse(nil, out)
	}
	for i, v := range raw.Data {
		if math.IsNaN(v) {
			out.Data[i] = math.NaN()
		}
	}
	return out
}

// lines returns the lines of in as the strips' method sees them, for
// what it learns from the whole cube (a Tiler's PrepareTiles): with the
// missing voxels filled, and on the paths that treat them the stripes
// subtracted, the impulse and dead pixels filled and the bands whitened,
// as the first pass of every strip's repair has them; on the path that
// repairs in more passes than one, with which voxels were filled
// (denoise.RepairLines), since the later passes set them to the first
// pass's estimate.
func (s *stripNoise) lines(in tile.Reader) tile.Reader {
	switch {
	case s.path == PathGaussian || s.path == PathUnchanged:
		if s.stab != nil {
			in = stabilisedLines{in, s.stab}
		}
		return filledLines{in}
	case s.path == PathRepair && s.opts.Passes != 1:
		return repairLines{modelLines{in, s}}
	}
	return modelLines{in, s}
}

// modelLines reads the lines of a cube as a strip's first denoising pass
// sees them (stripNoise.lines).
type modelLines struct {
	tile.Reader
	noise *stripNoise
}

// ReadLines returns the lines, prepared; lines without any data are
// returned as zeros, as filledLines returns them.
func (r modelLines) ReadLines(y0, n int) (*msi.Cube, error) {
	z, _, err := r.read(y0, n)
	return z, err
}

// read returns the lines, prepared, and the mask of the voxels the
// preparation filled (nil on the whitened path and for lines without any
// data).
func (r modelLines) read(y0, n int) (*msi.Cube, []uint8, error) {
	s := r.noise
	z, mask, err := s.readPrepared(r.Reader, y0, n)
	if errors.Is(err, repair.ErrAllMasked) {
		clear(z.Data)
		return z, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	if s.whitens() {
		z, _, err = bandwhiten.Whiten(z, s.sigmas, bandwhiten.Options{Pivots: s.opts.Pivots})
	}
	return z, mask, err
}

// repairLines reads the lines of a cube as modelLines does, and which of
// their voxels the repair filled (denoise.RepairLines).
type repairLines struct{ modelLines }

// ReadFilled returns the lines, prepared, and which of their voxels the
// repair filled (none of lines without any data, returned as zeros).
func (r repairLines) ReadFilled(y0, n int) (*msi.Cube, []bool, error) {
	z, mask, err := r.read(y0, n)
	if err != nil {
		return nil, nil, err
	}
	if mask == nil { // lines without any data
		return z, make([]bool, len(z.Data)), nil
	}
	return z, filledVoxels(mask), nil
}

// readPrepared reads the lines y0..y0+n−1 of in and prepares them
// (prepare). One line is read with its neighbour below (above, for the
// cube's last line), prepared with it and cut back: the sparse-noise test
// needs two lines (sparsenoise.DetectWith), and the windows of the passes
// over the whole cube can be of one line (the last window of a strip's
// core, the last of the band means'). With repair.ErrAllMasked it
// returns the lines as read.
func (s *stripNoise) readPrepared(in tile.Reader, y0, n int) (*msi.Cube, []uint8, error) {
	top, lines := y0, n
	if height, _, _ := in.Size(); n == 1 && height > 1 {
		top, lines = min(y0, height-2), 2
	}
	c, err := in.ReadLines(top, lines)
	if err != nil {
		return nil, nil, err
	}
	z, mask, err := s.prepare(c)
	if errors.Is(err, repair.ErrAllMasked) {
		z, mask = c, nil
	} else if err != nil {
		return nil, nil, err
	}
	if lines == n {
		return z, mask, err
	}
	off := y0 - top
	if mask != nil {
		mask = sparsenoise.CropMask(mask, z, off, n)
	}
	return z.Crop(off, 0, 0, n, z.Width, z.Bands), mask, err
}

// prepare returns the lines c as the first pass of a strip's repair has
// them before it whitens them (stabilised, the stripes subtracted, the
// impulse, dead and missing pixels filled; on the whitened path the
// missing ones alone), and on the repair's paths the mask of the voxels
// it filled (repair.Prepare), or repair.ErrAllMasked.
func (s *stripNoise) prepare(c *msi.Cube) (*msi.Cube, []uint8, error) {
	var pixels *sparsenoise.Report
	if s.stab != nil {
		c, pixels = s.stab.forward(c)
	}
	if s.path == PathWhitened {
		z, _, err := repair.FillMissing(c)
		return z, nil, err
	}
	return repair.Prepare(c, s.detect(c, pixels), s.opts)
}

// whitens says whether the path whitens the bands.
func (s *stripNoise) whitens() bool {
	switch s.path {
	case PathWhitened:
		return true
	case PathRepair, PathFill:
		return !s.opts.NoWhiten
	}
	return false
}

// fitPivots sets the values every strip's bands are whitened around
// (repair.Options.Pivots) to the band means of the whole cube as the
// first pass prepares it (prepare), read in windows of lines, when the
// path whitens: the whole run whitens around its cube's means, and a
// strip's own means, of its fewer lines, moved its whitened bands by
// offsets of their own (on full balloons with QRNN3D's mixture strips of
// 128 lines ended 0.17 dB below the whole run with them, 0.04 with the
// cube's, docs/results.md).
// Windows without data are left out; with none left, every strip keeps
// its own means.
func (s *stripNoise) fitPivots(ctx context.Context, in tile.Reader, log report.Reporter) error {
	if !s.whitens() {
		return nil
	}
	height, width, bands := in.Size()
	window := modelWindowLines(height, width, bands)
	sums := make([]float64, bands)
	pixels := 0
	log.Start("band means", "lines", int64(height))
	defer log.Finish()
	for y0 := 0; y0 < height; y0 += window {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(window, height-y0)
		z, _, err := s.readPrepared(in, y0, n)
		if errors.Is(err, repair.ErrAllMasked) {
			continue
		} else if err != nil {
			return err
		}
		for b := range bands {
			for _, v := range z.Band(b) {
				sums[b] += v
			}
		}
		pixels += n * width
		log.Update(int64(y0+n), "")
	}
	if pixels == 0 {
		return nil
	}
	for b := range sums {
		sums[b] /= float64(pixels)
	}
	s.opts.Pivots = sums
	return nil
}

// stripOutputs writes the cores of the strips to the result and, when
// asked, to the mask and the residual, from what the strip's denoising
// kept (keep) until its core is written: to the outputs' writers, or in a
// shard to its part, as its layers (the result, the mask, the residual).
type stripOutputs struct {
	strips                 []tile.Strip
	saveMask, saveResidual bool
	// The writers of the outputs (createStripOutputs), or the part.
	result, mask, residual msi.WindowWriter
	part                   *shard.Part
	// maskLines and residualLines are the kept strip's, as read.
	maskLines, residualLines *msi.Cube
}

// newStripOutputs returns the outputs of the job's strips, with neither
// writers nor a part yet.
func (j *Job) newStripOutputs(strips []tile.Strip) *stripOutputs {
	return &stripOutputs{strips: strips, saveMask: j.SaveMask != "", saveResidual: j.SaveResidual != ""}
}

// layers returns the number of outputs o writes: the result, and the mask
// and the residual when asked for.
func (o *stripOutputs) layers() int {
	n := 1
	for _, on := range []bool{o.saveMask, o.saveResidual} {
		if on {
			n++
		}
	}
	return n
}

// createStripOutputs opens o's result and the mask and residual asked
// for, for writing in windows of lines.
func (j *Job) createStripOutputs(ctx context.Context, o *stripOutputs, height, width, bands int, meta msi.Metadata) error {
	var err error
	if o.result, err = j.out.CreateWindow(height, width, bands, meta, j.writeOptions(ctx, meta.Stored)); err != nil {
		return err
	}
	if o.saveMask {
		m := meta
		m.Fields = nil
		m.Processing = fmt.Sprintf("%s denoise: mask of the pixels treated as missing (1 impulse, 2 dead, 3 both, 4 added for no data) in %s", j.Program, j.Input)
		if o.mask, err = j.mask.CreateWindow(height, width, bands, m, msi.WriteOptions{Force: j.Force}); err != nil {
			o.abort()
			return err
		}
	}
	if o.saveResidual {
		if o.residual, err = j.residual.CreateWindow(height, width, bands, meta, j.writeOptions(ctx, meta.Stored)); err != nil {
			o.abort()
			return err
		}
	}
	return nil
}

// keep keeps the mask and the residual of the strip c (as read) whose
// result is result and mask mask (nil: only its missing voxels), when
// they are asked for.
func (o *stripOutputs) keep(c, result *msi.Cube, mask []uint8) {
	if o.saveMask {
		o.maskLines = msi.NewCube(c.Height, c.Width, c.Bands)
		for i, v := range c.Data {
			switch {
			case mask != nil:
				o.maskLines.Data[i] = MaskCode(mask[i])
			case math.IsNaN(v):
				o.maskLines.Data[i] = MaskCode(sparsenoise.Missing)
			}
		}
	}
	if o.saveResidual {
		o.residualLines = msi.NewCube(c.Height, c.Width, c.Bands)
		for i, v := range c.Data {
			o.residualLines.Data[i] = v - result.Data[i]
		}
	}
}

// WriteLines writes core, the core of the strip whose core starts at line
// y0, to the result, and the same lines of the kept mask and residual;
// in a shard, all of them to its part.
func (o *stripOutputs) WriteLines(core *msi.Cube, y0 int) error {
	layers := []*msi.Cube{core}
	if o.saveMask || o.saveResidual {
		i := slices.IndexFunc(o.strips, func(s tile.Strip) bool { return s.Core.Start == y0 })
		top := y0 - o.strips[i].Read.Start
		for _, k := range []struct {
			on    bool
			lines *msi.Cube
		}{{o.saveMask, o.maskLines}, {o.saveResidual, o.residualLines}} {
			if k.on {
				layers = append(layers, k.lines.Crop(top, 0, 0, core.Height, core.Width, core.Bands))
			}
		}
	}
	if o.part != nil {
		return o.part.WriteLines(y0, layers...)
	}
	return o.writeLayers(y0, layers)
}

// writeLayers writes the lines from y0 of every layer (the result, then
// the mask and the residual asked for) to its output's writer.
func (o *stripOutputs) writeLayers(y0 int, layers []*msi.Cube) error {
	writers := []msi.WindowWriter{o.result}
	for _, w := range []msi.WindowWriter{o.mask, o.residual} {
		if w != nil {
			writers = append(writers, w)
		}
	}
	for i, w := range writers {
		if err := w.WriteLines(layers[i], y0); err != nil {
			return err
		}
	}
	return nil
}

// abort removes what was written of every output.
func (o *stripOutputs) abort() {
	for _, w := range []msi.WindowWriter{o.result, o.mask, o.residual} {
		if w != nil {
			w.Abort()
		}
	}
}

// stripSigma returns the given σ, or the σ a given dictionary records, or
// the estimate from at most sigmaWindowLines lines at the middle of the
// cube (the whole cube's estimate would need the whole cube), 0 when the
// noise of those lines is below detection (said on log), which a
// given σ is also checked against (sayGivenSigma), from at most
// checkWindowVoxels voxels. stored is how the cube is stored, for σ in
// its units.
func (j *Job) stripSigma(in tile.Reader, stored msi.Storage, log report.Reporter) (float64, error) {
	height, width, bands := in.Size()
	if j.Sigma != 0 && noise.CheckSize(height, width, bands) == nil {
		n := min(height, sigmaWindowLines, max(2, checkWindowVoxels/(width*bands)))
		window, err := in.ReadLines((height-n)/2, n)
		if err != nil {
			return 0, err
		}
		j.sayGivenSigma(noise.EstimateMedian(window), stored.Scale, log)
	}
	if j.Sigma != 0 || j.Known != 0 {
		return denoise.ResolveSigma(nil, j.Sigma, j.Known, log)
	}
	n := min(height, sigmaWindowLines)
	y0 := (height - n) / 2
	window, err := in.ReadLines(y0, n)
	if err != nil {
		return 0, err
	}
	window.Stored = stored
	log.Logf("estimating σ from lines %d–%d", y0, y0+n-1)
	if why := noise.BelowDetection(noise.Estimate(window)); why != "" {
		log.Logf("%s; the input is written unchanged (--sigma denoises it anyway)", why)
		return 0, nil
	}
	return denoise.ResolveSigma(window, 0, 0, log)
}

// checkWindowVoxels bounds the voxels read to check a given σ of a cube
// denoised in strips (a few lines of a wide cube are enough to tell a σ
// four times off).
const checkWindowVoxels = 1 << 22

// filledLines reads the lines of a cube with their missing voxels filled
// (repair.FillMissing), for what a method learns from the whole cube.
type filledLines struct{ tile.Reader }

// ReadLines returns the lines, filled; lines without any data are
// returned as zeros, flat patches, from which a patch method, which
// removes every patch's mean, learns nothing.
func (r filledLines) ReadLines(y0, n int) (*msi.Cube, error) {
	c, err := r.Reader.ReadLines(y0, n)
	if err != nil {
		return nil, err
	}
	filled, _, err := repair.FillMissing(c)
	if errors.Is(err, repair.ErrAllMasked) {
		clear(c.Data)
		return c, nil
	}
	return filled, err
}
