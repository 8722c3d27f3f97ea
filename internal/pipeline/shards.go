package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/report"
	"tdsc/internal/shard"
	"tdsc/internal/tile"
)

// shardLines returns the core lines per strip of a sharded run: lines
// (the budget's, or --tile's), made fewer, when the cube has fewer strips
// than shards, so that every shard has some (a cube that would run whole
// is cut for the shards); the result is then the single strips run's
// with --tile of what it returns, which log says.
func (j *Job) shardLines(lines, height int, g tile.Geometry, log report.Reporter) int {
	n := j.Strips.Shard.Count
	if n <= 1 || len(tile.Plan(height, lines, g)) >= n {
		return lines
	}
	// No thinner than the halo, as --tile (runStrips).
	fewer := max(g.Align, g.Halo, (height+n-1)/n/g.Align*g.Align)
	if fewer < lines {
		log.Logf("--shard %s: strips of %d lines so that each of the %d shards has some (one run with --tile %d writes the same output)", j.Strips.Shard, fewer, n, fewer)
		return fewer
	}
	return lines
}

// shardSet returns the parts of the job's sharded output, whose layers
// are the outputs of o (a part with other layers is another run's): its
// settings say what decides the outputs' values (the program, the
// command's settings in Strips.Key, the input's name, size and time, the
// count of shards, the size, σ and the strips), and its key hashes them
// with every strip's lines, so that the parts of another run are never
// assembled with this one's.
func (j *Job) shardSet(o *stripOutputs, sigma float64, width, bands int) shard.Set {
	var b strings.Builder
	fmt.Fprintf(&b, "program=%s\n%s", j.Program, j.Strips.Key)
	for _, p := range append([]string{j.Input}, j.in.Format.Outputs(j.Input)...) {
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "input=%s of %d bytes modified %s\n", filepath.Base(p), fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano))
		}
	}
	strips := o.strips
	fmt.Fprintf(&b, "shards=%d\nsamples=%d bands=%d\nσ=%v\nstrips=%d of %d lines\n", j.Strips.Shard.Count, width, bands, sigma, len(strips), strips[0].Core.Len())
	h := sha256.New()
	h.Write([]byte(b.String()))
	for _, s := range strips {
		fmt.Fprintf(h, "%d %d %d %d\n", s.Core.Start, s.Core.End, s.Read.Start, s.Read.End)
	}
	return shard.Set{Out: j.Out, Count: j.Strips.Shard.Count, Key: hex.EncodeToString(h.Sum(nil)), Settings: b.String(), Layers: o.layers()}
}

// runShard denoises the shard's share of the strips of o (contiguous,
// shard.Spec's Share) with denoiseOwn into its part beside the output, the lines
// of the result and of the mask and the residual asked for, unless a part
// of the same run is there already; processing gives the shard's
// processing line once its strips are done. Then, if every shard's part
// is there and this shard claims the assembly, it writes the outputs from
// the parts into set (with the dictionary prepared, if asked for) and
// removes them; otherwise out.Waiting says that the output waits for
// other shards. A part of another run there when every part is there is
// an error that wraps a *shard.OtherRunError, which says how the settings
// differ.
func (j *Job) runShard(ctx context.Context, in tile.Reader, o *stripOutputs, denoiseOwn func(context.Context, *stripOutputs, []tile.Strip, shard.Set) error, processing func() string,
	sigma float64, meta msi.Metadata, prepared denoise.Result, set *outputSet, out *Outcome, log report.Reporter) error {
	height, width, bands := in.Size()
	spec, strips := j.Strips.Shard, o.strips
	parts := j.shardSet(o, sigma, width, bands)
	lo, hi := spec.Share(len(strips))
	switch {
	case parts.Done(spec.Index):
		log.Logf("shard %s: its part %s is there from an earlier run of the same settings", spec, parts.PartPath(spec.Index))
	default:
		if lo == hi {
			log.Logf("shard %s has no strips: the cube has %d strips for %d shards", spec, len(strips), spec.Count)
		} else {
			log.Logf("shard %s: strips %d–%d of %d (lines %d–%d)", spec, lo+1, hi, len(strips), strips[lo].Core.Start, strips[hi-1].Core.End-1)
		}
		part, err := parts.Create(spec.Index, width, bands)
		if err != nil {
			return err
		}
		o.part = part
		if err := denoiseOwn(ctx, o, strips[lo:hi], parts); err != nil {
			part.Abort()
			return err
		}
		if err := part.Commit(processing()); err != nil {
			return err
		}
	}
	// A part that is not one, or one of another run, keeps this shard,
	// its part done, from writing the output.
	notReady := func(err error) error { return fmt.Errorf("shard %s is done but cannot write %s: %w", spec, j.Out, err) }
	_, ok, err := parts.Ready()
	if err != nil {
		return notReady(err)
	}
	if !ok {
		out.Waiting = true
		log.Logf("shard %s is done; the shard that finishes last writes %s", spec, j.Out)
		return nil
	}
	release, ok, err := parts.Claim()
	if err != nil {
		return err
	}
	if !ok {
		out.Waiting = true
		log.Logf("shard %s is done; another shard is writing %s (if none is, remove %s and run a shard again)", spec, j.Out, parts.ClaimPath())
		return nil
	}
	defer release()
	// Another shard may have found every part, claimed, written the
	// output and removed the parts and its claim since Ready: the parts
	// are read again under this claim.
	ready, ok, err := parts.Ready()
	if err != nil {
		return notReady(err)
	}
	if !ok {
		out.Waiting = true
		log.Logf("shard %s is done; another shard wrote %s", spec, j.Out)
		return nil
	}
	log.Logf("shard %s: every part is there: writing %s", spec, strings.Join(j.stripOutputNames(), ", "))
	w := j.newStripOutputs(strips)
	if err := j.createStripOutputs(ctx, w, height, width, bands, meta); err != nil {
		return err
	}
	err = ready.Each(func(y0 int, layers []*msi.Cube) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return w.writeLayers(y0, layers)
	})
	if err != nil {
		w.abort()
		return err
	}
	if err := j.commitStripOutputs(w, ready.Processing(), prepared, set); err != nil {
		return err
	}
	parts.Clean()
	return nil
}

// stripOutputNames returns the outputs a run in strips writes: --out, and
// --save-mask and --save-residual when given.
func (j *Job) stripOutputNames() []string {
	names := []string{j.Out}
	for _, p := range []string{j.SaveMask, j.SaveResidual} {
		if p != "" {
			names = append(names, p)
		}
	}
	return names
}
