package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"

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

// shardSet returns the parts of the job's sharded output: its key hashes
// what decides the output's values (the program, the command's settings
// in Strips.Key, the input's name, size and time, σ, the strips and the
// count of shards), so that the parts of another run are never
// assembled with this one's.
func (j *Job) shardSet(sigma float64, strips []tile.Strip, width, bands int) shard.Set {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%d %d %d %x\n", j.Program, j.Strips.Key, j.Strips.Shard.Count, width, bands, math.Float64bits(sigma))
	for _, s := range strips {
		fmt.Fprintf(h, "%d %d %d %d\n", s.Core.Start, s.Core.End, s.Read.Start, s.Read.End)
	}
	for _, p := range append([]string{j.Input}, j.in.Format.Outputs(j.Input)...) {
		if fi, err := os.Stat(p); err == nil {
			fmt.Fprintf(h, "%s %d %d\n", filepath.Base(p), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return shard.Set{Out: j.Out, Count: j.Strips.Shard.Count, Key: hex.EncodeToString(h.Sum(nil))}
}

// runShard denoises the shard's share of strips (contiguous, shard.Spec's
// Share) with fn into its part beside the output, unless a part of the
// same run is there already; processing gives the shard's processing
// line once its strips are done. Then, if every shard's part is there and
// this shard claims the assembly, it writes the output from the parts
// into set (with the dictionary prepared, if asked for) and removes them;
// otherwise out.Waiting says that the output waits for other shards.
func (j *Job) runShard(ctx context.Context, in tile.Reader, strips []tile.Strip, fn tile.Func, processing func() string,
	sigma float64, meta msi.Metadata, prepared denoise.Result, set *outputSet, out *Outcome, log report.Reporter) error {
	height, width, bands := in.Size()
	spec := j.Strips.Shard
	parts := j.shardSet(sigma, strips, width, bands)
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
		if err := j.denoiseStrips(ctx, in, part, strips[lo:hi], fn, log); err != nil {
			part.Abort()
			return err
		}
		if err := part.Commit(processing()); err != nil {
			return err
		}
	}
	_, ok, err := parts.Ready()
	if err != nil {
		return err
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
		return err
	}
	if !ok {
		out.Waiting = true
		log.Logf("shard %s is done; another shard wrote %s", spec, j.Out)
		return nil
	}
	log.Logf("shard %s: every part is there: writing %s", spec, j.Out)
	w, err := j.out.CreateWindow(height, width, bands, meta, j.writeOptions(ctx, meta.Stored))
	if err != nil {
		return err
	}
	err = ready.Each(func(c *msi.Cube, y0 int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return w.WriteLines(c, y0)
	})
	if err == nil {
		err = j.commitStrips(w, ready.Processing(), prepared, set)
	}
	if err != nil {
		w.Abort()
		return err
	}
	parts.Clean()
	return nil
}
