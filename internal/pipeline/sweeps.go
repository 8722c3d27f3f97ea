package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/report"
	"tdsc/internal/shard"
	"tdsc/internal/stages/bandwhiten"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/tile"
)

// A repair in strips runs in two sweeps when the strips' method prepares
// its last pass on the whole cube (denoise.LastPasser: nonlocal): first
// every strip's first passes (repair.FirstPasses), whose cores of the
// cube they leave for the last pass (the stripes estimated again on the
// strip's residual subtracted, the filled voxels at the first passes'
// estimate) are kept beside the output as a part of a shard.Set of stage
// "first-pass"; then what the last pass shares is learned from that
// whole cube (its band means, the whitening's pivots; the method's
// PrepareStrips: on many bands the eigen-images, the pilot's dictionary,
// the rank), as a whole run learns it from its own cube after its first
// pass; then every strip's last pass reads its lines, halo and all, from
// the parts. Strips of a whole run's blocks (128 lines) then run the
// whole run's last pass on the cube their first passes leave, to
// rounding (the whole run sums the first pass's statistics at once, the
// strips in windows).
//
// Why: the last pass's rank and eigen-images are those of the cube after
// the first pass, which no statistic streamed before it has; strips whose
// last pass shared the rank of the lines before the first pass ended
// 0.12–0.33 dB below the whole run on three 256×256 crops at 224 bands
// with QRNN3D's case 5, where the whole run's last pass counts 7 or 8 and
// its first pass 6–15 (docs/results.md).
//
// Shards: every shard needs the whole cube of the first passes, so each
// writes the first passes of its share of the strips, then those of any
// other share whose part is not there and that no process is writing
// (shard.Set.ClaimPart), then waits for the parts being written; then
// every shard learns the last pass's model from the parts (the same way:
// the same model), and runs the last passes of its share. Shards run
// one after another (more shards than slots) thus do not wait: the first
// writes every part. The parts stay, as the output's parts do, until the
// shard that writes the output removes them (shard.Set.Clean), so that a
// shard run again reuses them; a run that is not sharded removes its part
// when it ends. They hold 8 bytes a voxel: the size of the cube in
// float64, on the output's file system.
type sweeps struct {
	j      *Job
	in     tile.Reader
	plan   *stripNoise
	strips []tile.Strip
	sigma  float64
	// method is the strips' method (PrepareStrips on the first passes'
	// lines), whose draft runs the first passes; lastPass is the method
	// the last pass is prepared from (denoise.LastPasser).
	method, lastPass denoise.Method
	limit            *memoryLimit
	// last is the Result of the last strip's last pass.
	last *denoise.Result
}

// sweptLastPass returns the method a repair's last pass in strips is
// prepared from on the cube the strips' first passes leave, when the
// strips run in two sweeps (sweeps), or nil.
func sweptLastPass(plan *stripNoise, method denoise.Method) denoise.Method {
	if plan.path != PathRepair || plan.opts.Passes == 1 || plan.opts.Draft == nil {
		return nil
	}
	if p, ok := method.(denoise.LastPasser); ok {
		return p.LastPass()
	}
	return nil
}

// firstPassStage names the parts of the first passes' cube.
const firstPassStage = "first-pass"

// firstPassPoll is how often a shard whose first passes are done looks
// for the parts other shards are writing.
const firstPassPoll = 2 * time.Second

// run denoises the strips own (all of them, or a shard's share) into w
// in two sweeps; parts is the set of the output's parts, whose key and
// count the first passes' parts take.
func (s *sweeps) run(ctx context.Context, w *stripOutputs, own []tile.Strip, parts shard.Set, log report.Reporter) error {
	if len(own) == 0 {
		return nil
	}
	first := parts
	first.Stage, first.Layers = firstPassStage, 1
	spec := s.j.Strips.Shard
	if spec.Count == 0 {
		spec = shard.Spec{Index: 1, Count: 1}
		first.Count = 1
		// Not sharded: the part is this run's alone.
		defer os.Remove(first.PartPath(1))
	}
	if err := s.firstPasses(ctx, first, spec, log); err != nil {
		return err
	}
	ready, ok, err := first.Ready()
	if err == nil && !ok {
		err = errors.New("a part is missing")
	}
	if err != nil {
		return fmt.Errorf("the first passes' parts of %s: %w", s.j.Out, err)
	}
	next, err := ready.Lines()
	if err != nil {
		return err
	}
	defer next.Close()
	method, opts, err := s.prepareLastPass(ctx, noDataAsZeros{next}, log)
	if err != nil {
		return err
	}
	report.StartSteps(log, "last passes", "strips", int64(len(own)))
	defer log.Finish()
	for i, st := range own {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.limit.update()
		raw, err := s.in.ReadLines(st.Read.Start, st.Read.Len())
		if err != nil {
			return err
		}
		lines, err := next.ReadLines(st.Read.Start, st.Read.Len())
		if err != nil {
			return err
		}
		result, mask, err := s.plan.lastPass(ctx, method, opts, raw, lines, w.saveMask, s.last)
		if err != nil {
			return err
		}
		w.keep(raw, result, mask)
		core := result.Crop(st.Core.Start-st.Read.Start, 0, 0, st.Core.Len(), result.Width, result.Bands)
		if err := w.WriteLines(core, st.Core.Start); err != nil {
			return err
		}
		log.Update(int64(i+1), "")
	}
	return nil
}

// firstPasses writes the parts of first that are not there: the shard's
// own first, then any other that no process is writing, and waits for
// those that others are writing.
func (s *sweeps) firstPasses(ctx context.Context, first shard.Set, spec shard.Spec, log report.Reporter) error {
	said := map[int]bool{}
	for {
		waiting := 0
		for k := range spec.Count {
			index := (spec.Index-1+k)%spec.Count + 1
			if first.Done(index) {
				continue
			}
			release, ok, err := first.ClaimPart(index)
			if err != nil {
				return err
			}
			if !ok {
				waiting++
				if !said[index] {
					said[index] = true
					log.Logf("shard %s: waiting for the first passes of shard %d/%d, which %s is writing (if it has ended on another machine, remove %s)",
						spec, index, spec.Count, orUnknown(shard.Claimant(first.PartClaimPath(index))), first.PartClaimPath(index))
				}
				continue
			}
			if !first.Done(index) { // written while this shard looked
				err = s.writeFirstPart(ctx, first, shard.Spec{Index: index, Count: spec.Count}, log)
			}
			release()
			if err != nil {
				return err
			}
		}
		if waiting == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(firstPassPoll):
		}
	}
}

// orUnknown returns who, or "a process" when it is "".
func orUnknown(who string) string {
	if who == "" {
		return "a process"
	}
	return who
}

// writeFirstPart runs the first passes of the share of the strips of
// shard spec and writes the cores of the cube they leave as its part of
// first.
func (s *sweeps) writeFirstPart(ctx context.Context, first shard.Set, spec shard.Spec, log report.Reporter) error {
	lo, hi := spec.Share(len(s.strips))
	_, width, bands := s.in.Size()
	part, err := first.Create(spec.Index, width, bands)
	if err != nil {
		return err
	}
	if s.j.Strips.Shard.Count > 0 {
		log.Logf("shard %s: the first passes of strips %d–%d", s.j.Strips.Shard, lo+1, hi)
	}
	report.StartSteps(log, "first passes", "strips", int64(hi-lo))
	err = tile.Run(ctx, s.in, partLines{part}, s.strips[lo:hi], func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
		s.limit.update()
		return s.plan.firstPasses(ctx, s.method, c)
	}, func(done, _ int) { log.Update(int64(done), "") })
	log.Finish()
	if err != nil {
		part.Abort()
		return err
	}
	return part.Commit("")
}

// partLines writes the cores of strips to a part (tile.Writer).
type partLines struct{ part *shard.Part }

// WriteLines appends the core c, the lines from y0, to the part.
func (p partLines) WriteLines(c *msi.Cube, y0 int) error { return p.part.WriteLines(y0, c) }

// prepareLastPass learns what the last pass shares from the cube of the
// first passes next: the band means its whitening pivots around (the
// whole cube's, as a whole run's last pass whitens around its cube's),
// then the method's (denoise.PrepareStrips on the whitened lines). It
// returns the method and the repair's options with those pivots.
func (s *sweeps) prepareLastPass(ctx context.Context, next tile.Reader, log report.Reporter) (denoise.Method, repair.Options, error) {
	opts := s.plan.opts
	if !opts.NoWhiten {
		means, err := bandMeans(ctx, next, log)
		if err != nil {
			return nil, opts, err
		}
		opts.Pivots = means
	}
	log.Logf("the last passes: what they share learned from the whole cube the first passes left")
	method, _, err := denoise.PrepareStrips(ctx, s.lastPass, whitenedLines{next, s.plan.sigmas, opts}, s.strips, s.sigma)
	return method, opts, err
}

// bandMeans returns the mean of every band of the cube of r, read in
// windows of lines, each band's values added in the order of the cube's
// (the sum bandwhiten takes of a cube in memory).
func bandMeans(ctx context.Context, r tile.Reader, log report.Reporter) ([]float64, error) {
	height, width, bands := r.Size()
	window := modelWindowLines(height, width, bands)
	sums := make([]float64, bands)
	log.Start("band means of the first passes", "lines", int64(height))
	defer log.Finish()
	for y0 := 0; y0 < height; y0 += window {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(window, height-y0)
		c, err := r.ReadLines(y0, n)
		if err != nil {
			return nil, err
		}
		for b := range bands {
			for _, v := range c.Band(b) {
				sums[b] += v
			}
		}
		log.Update(int64(y0+n), "")
	}
	for b := range sums {
		sums[b] /= float64(height * width)
	}
	return sums, nil
}

// noDataAsZeros reads the lines of the first passes' cube with those of
// the strips that had nothing to estimate them from (NaN, firstPasses)
// as zeros, as the last passes of the strips beside them have them.
type noDataAsZeros struct{ tile.Reader }

// ReadLines returns the lines y0 .. y0+n−1, NaN as 0.
func (r noDataAsZeros) ReadLines(y0, n int) (*msi.Cube, error) {
	c, err := r.Reader.ReadLines(y0, n)
	if err != nil {
		return nil, err
	}
	nanAsZero(c)
	return c, nil
}

// nanAsZero sets every NaN of c to 0 and says whether it found one.
func nanAsZero(c *msi.Cube) bool {
	found := false
	for i, v := range c.Data {
		if math.IsNaN(v) {
			c.Data[i], found = 0, true
		}
	}
	return found
}

// whitenedLines reads the lines of the first passes' cube as the last
// pass denoises them: whitened by the bands' σ around the repair's
// pivots, unless the repair does not whiten.
type whitenedLines struct {
	tile.Reader
	sigmas []float64
	opts   repair.Options
}

// ReadLines returns the lines y0 .. y0+n−1, whitened.
func (r whitenedLines) ReadLines(y0, n int) (*msi.Cube, error) {
	c, err := r.Reader.ReadLines(y0, n)
	if err != nil || r.opts.NoWhiten {
		return c, err
	}
	c, _, err = bandwhiten.Whiten(c, r.sigmas, bandwhiten.Options{Pivots: r.opts.Pivots})
	return c, err
}

// firstPasses runs the first passes of the repair of the strip raw (as
// read) with the draft of method, and returns the cube they leave for
// the last pass (repair.Pending's Next): NaN for a strip with nothing to
// estimate it from, whose last pass writes it back (lastPass). The cube
// they leave has no NaN otherwise (its masked voxels, the missing ones
// among them, are the first passes' estimate), so that the last pass
// knows such a strip from its lines.
func (s *stripNoise) firstPasses(ctx context.Context, method denoise.Method, raw *msi.Cube) (*msi.Cube, error) {
	c, det := s.detectStrip(raw)
	p, err := repair.FirstPasses(ctx, c, withSigmas(det, s.sigmas), runner(method, nil), s.opts)
	if errors.Is(err, repair.ErrAllMasked) {
		none := msi.NewCube(c.Height, c.Width, c.Bands)
		for i := range none.Data {
			none.Data[i] = math.NaN()
		}
		return none, nil
	}
	if err != nil {
		return nil, err
	}
	return p.Next, nil
}

// lastPass returns the result of the last pass of the repair of the
// strip raw (as read) from next, the lines of the first passes' cube,
// with method and opts (prepareLastPass), in the input's units with
// raw's missing voxels written back as missing, and keeps the method's
// Result in res. A strip whose every pixel is masked is written back as
// read, as denoise writes it; its lines in next (NaN, firstPasses) are
// zeros to the last pass of the strips beside it. With needMask it also
// returns the strip's mask, as denoise does (nil without).
//
// The sparse noise is looked for in raw again only for the mask, or when
// next holds a NaN, to tell whether this strip is one whose every pixel
// is masked: the first sweep has found it already, and the last pass
// needs only next. On the 256×256 crops at 224 bands with QRNN3D's case
// 5 that search was a few hundredths of a run in strips
// (docs/results.md).
func (s *stripNoise) lastPass(ctx context.Context, method denoise.Method, opts repair.Options, raw, next *msi.Cube, needMask bool, res *denoise.Result) (*msi.Cube, []uint8, error) {
	var mask []uint8
	if hadNaN := nanAsZero(next); needMask || hadNaN {
		_, det := s.detectStrip(raw)
		if !slices.Contains(det.Mask, 0) {
			return raw, det.Mask, nil
		}
		if needMask {
			mask = det.Mask
		}
	}
	out, err := repair.LastPass(ctx, next, s.sigmas, runner(method, res), opts)
	if err != nil {
		return nil, nil, err
	}
	return s.inInput(raw, out), mask, nil
}

// detectStrip returns the strip raw as the path has it (stabilised, when
// it stabilises) and what the model and the strip say of its sparse
// noise (detect).
func (s *stripNoise) detectStrip(raw *msi.Cube) (*msi.Cube, *sparsenoise.Report) {
	c := raw
	var pixels *sparsenoise.Report
	if s.stab != nil {
		c, pixels = s.stab.forward(raw)
	}
	return c, s.detect(c, pixels)
}
