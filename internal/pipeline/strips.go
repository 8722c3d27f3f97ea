package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/report"
	"tdsc/internal/stages/repair"
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
	if j.Noise.PerBand == On {
		why = append(why, "--sigma-per-band estimates σ from the whole cube")
	}
	if j.SaveMask != "" {
		why = append(why, "--save-mask needs the whole cube")
	}
	if j.SaveResidual != "" {
		why = append(why, "--save-residual needs the whole cube")
	}
	if j.Mask != "" {
		why = append(why, "--mask needs the whole cube")
	}
	if j.Noise.Signal == SignalPoissonGaussian || j.Noise.Params != nil {
		why = append(why, "the Poisson-Gaussian model (--noise-model "+string(SignalPoissonGaussian)+", --noise-params) stabilises the whole cube")
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
	var why string
	switch {
	case readErr != nil:
		why = "the input is " + readErr.Error()
	case writeErr != nil:
		why = "the output is " + writeErr.Error()
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
// largest value), σ resolved, the strips planned for the method and the
// budget, what the method learns from the whole cube learned (a Tiler or
// a StripPreparer, denoise.PrepareStrips, from the strips with their
// missing voxels filled), then every strip
// denoised and its core written, in the input's units, its missing voxels
// filled before and written back as missing. The header records the
// settings of the last strip's run (a method that neither is a Tiler nor
// a StripPreparer chooses per strip). Sparse noise is not looked for: its detection needs the
// whole cube. in is closed when it returns.
func (j *Job) runStrips(ctx context.Context, in msi.WindowReader, budget int64, set *outputSet, out *Outcome, log report.Reporter) error {
	defer in.Close()
	height, width, bands := in.Size()
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
	switch {
	case j.Noise.Sparse != Off && j.Noise.signalAuto() && j.Sigma == 0:
		log.Logf("in strips neither the sparse noise nor a signal-dependent noise level is looked for (that needs the whole cube): denoising with one σ for Gaussian noise")
	case j.Noise.Sparse != Off:
		log.Logf("in strips the sparse noise is not looked for (that needs the whole cube): denoising with one σ for Gaussian noise")
	case j.Noise.signalAuto() && j.Sigma == 0:
		log.Logf("in strips a signal-dependent noise level is not looked for (that needs the whole cube): denoising with one σ for Gaussian noise")
	}
	sigma, err := j.stripSigma(in, meta.Stored, log)
	if err != nil {
		return err
	}
	out.Sigma, out.Path = sigma, PathGaussian
	if sigma == 0 {
		out.Path = PathUnchanged
	}
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
	if j.Strips.Shard.Count > 0 {
		lines = j.shardLines(lines, height, geom, log)
	}
	strips := tile.Plan(height, lines, geom)
	out.Strips = len(strips)
	how := "each strip denoised on its own, so the result is close to, not the same as, the whole cube's"
	if exact {
		how = "the same result as the whole cube"
	}
	log.Logf("%s is %d×%d×%d: denoising it in %d strips of %d lines (halo %d; %s); memory budget %s",
		j.Input, height, width, bands, len(strips), strips[0].Core.Len(), geom.Halo, how, tile.FormatBytes(budget))
	// The strips are garbage as soon as the next is read: the limit makes
	// the collector return them. It binds only Go's own memory, so it is
	// set again at every strip for what is resident outside it (at the
	// whole budget, with a fixed reserve for that, a 4096²×64 run peaked
	// 15 MiB over it).
	limit := limitMemory(budget)
	defer limit.restore()

	strip, prepared := j.Method, denoise.Result{}
	if sigma == 0 {
		strip = unchanged{}
	} else if strip, prepared, err = denoise.PrepareStrips(ctx, j.Method, filledLines{in}, strips, sigma); err != nil {
		return err
	}
	var last denoise.Result
	denoiseStrip := func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
		limit.update()
		filled, missing, err := repair.FillMissing(c)
		if errors.Is(err, repair.ErrAllMasked) {
			return c, nil // no data at all: written back as missing
		}
		out, res, err := strip.Denoise(ctx, filled, sigma)
		last = res
		if err == nil && missing != nil {
			for i, m := range missing {
				if m {
					out.Data[i] = math.NaN()
				}
			}
		}
		return out, err
	}
	if j.Strips.Shard.Count > 0 {
		return j.runShard(ctx, in, strips, denoiseStrip, func() string { return j.describe(sigma, last) }, sigma, meta, prepared, set, out, log)
	}
	w, err := j.out.CreateWindow(height, width, bands, meta, j.writeOptions(ctx, meta.Stored))
	if err != nil {
		return err
	}
	if err := j.denoiseStrips(ctx, in, w, strips, denoiseStrip, log); err != nil {
		w.Abort()
		return err
	}
	if err := j.commitStrips(w, j.describe(sigma, last), prepared, set); err != nil {
		w.Abort()
		return err
	}
	return nil
}

// denoiseStrips denoises strips of in with fn and writes their cores to
// w, saying how far it is on log.
func (j *Job) denoiseStrips(ctx context.Context, in tile.Reader, w tile.Writer, strips []tile.Strip, fn tile.Func, log report.Reporter) error {
	report.StartSteps(log, "denoising strips", "strips", int64(len(strips)))
	defer log.Finish()
	return tile.Run(ctx, in, w, strips, fn, func(done, _ int) { log.Update(int64(done), "") })
}

// commitStrips puts the output w, whose lines are all written, in place
// in set with the processing line processing, and the dictionary of
// prepared when it is to be saved.
func (j *Job) commitStrips(w msi.WindowWriter, processing string, prepared denoise.Result, set *outputSet) error {
	if err := j.saveDictionary(set, prepared); err != nil {
		return err
	}
	w.SetProcessing(processing)
	return set.write(j.out.Outputs(), w.Commit)
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
	if err := j.checkShape(height, width, bands, false); err != nil {
		return 0, err
	}
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

// unchanged is the method of the strips of a cube whose noise is below
// detection: every strip is written as it was read.
type unchanged struct{}

func (unchanged) Denoise(_ context.Context, c *msi.Cube, _ float64) (*msi.Cube, denoise.Result, error) {
	return c, denoise.Result{}, nil
}

func (unchanged) Check(float64, int, int, int) error { return nil }
