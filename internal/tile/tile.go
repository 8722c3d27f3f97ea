// Package tile denoises a cube that does not fit in memory strip by strip:
// the cube's lines are cut into strips, each strip is read with a halo of
// lines above and below it, denoised, and the strip's own lines (its core)
// are written out. Only one strip is held at a time.
//
// Strips span the whole width of the cube rather than being square tiles.
// Whole lines are what ENVI files of every interleave, and array files
// whose slowest axis is the height, store contiguously (or band by band),
// and a strip keeps a patch method's work in the same
// order as on the whole cube: package patch processes patches in stripes of
// rows, so a strip whose edges fall on stripe boundaries (Geometry.Align)
// codes the same patches in the same batches and sums their reconstructions
// in the same order, and 2dsc's output is bit-identical to the untiled one.
// The cost is that memory grows with the width: a strip needs at least
// Align + 2·Halo lines.
//
// Conventions: lines are counted from 0; a Strip's ranges are half-open.
package tile

import (
	"context"
	"fmt"

	"tdsc/internal/msi"
)

// Strip is one strip of lines: Core is what it contributes to the output,
// Read what is read and denoised to get it (Core with the halo, clipped
// to the cube).
type Strip struct {
	Core, Read Range
}

// Range is the half-open range of lines [Start, End).
type Range struct{ Start, End int }

// Len returns the number of lines in r.
func (r Range) Len() int { return r.End - r.Start }

// Geometry is what a method needs of its strips: Halo lines of context on
// each side of a core, cores that start at multiples of Align (and so
// reads that do too, Halo being a multiple of Align), and, when MaxLines
// is not 0, cores of at most MaxLines lines: a method that denoises a
// cube in blocks of that many lines, a whole cube too, would denoise a
// taller strip at once, not as the whole run does.
type Geometry struct {
	Halo, Align, MaxLines int
}

// Plan cuts height lines into strips whose cores have lines lines (the
// last may be shorter), lines taken down to g.MaxLines when that is not 0
// and rounded down to a multiple of g.Align (at least g.Align). It panics
// if height < 1, g.Align < 1, g.Halo < 0, g.MaxLines < 0 or g.Halo or
// g.MaxLines is not a multiple of g.Align.
func Plan(height, lines int, g Geometry) []Strip {
	if height < 1 || g.Align < 1 || g.Halo < 0 || g.Halo%g.Align != 0 || g.MaxLines < 0 || g.MaxLines%g.Align != 0 {
		panic(fmt.Sprintf("tile: Plan(%d, %d, %+v): bad geometry", height, lines, g))
	}
	if g.MaxLines > 0 {
		lines = min(lines, g.MaxLines)
	}
	lines = max(g.Align, lines/g.Align*g.Align)
	var strips []Strip
	for y := 0; y < height; y += lines {
		core := Range{y, min(y+lines, height)}
		strips = append(strips, Strip{
			Core: core,
			Read: Range{max(0, core.Start-g.Halo), min(height, core.End+g.Halo)},
		})
	}
	return strips
}

// Reader gives the lines of a cube (an msi.WindowReader is one).
type Reader interface {
	Size() (height, width, bands int)
	ReadLines(y0, n int) (*msi.Cube, error)
}

// Writer takes the lines of the output (an msi.WindowWriter is one).
type Writer interface {
	WriteLines(c *msi.Cube, y0 int) error
}

// Func denoises one strip as read (its Read lines).
type Func func(ctx context.Context, strip *msi.Cube) (*msi.Cube, error)

// Run denoises the cube of r strip by strip with fn and writes every core
// to w, in order. progress, if not nil, is called after each strip with the
// count done. It stops at the first error, or with ctx.Err() when ctx is
// cancelled.
func Run(ctx context.Context, r Reader, w Writer, strips []Strip, fn Func, progress func(done, total int)) error {
	for i, s := range strips {
		if err := ctx.Err(); err != nil {
			return err
		}
		in, err := r.ReadLines(s.Read.Start, s.Read.Len())
		if err != nil {
			return err
		}
		out, err := fn(ctx, in)
		if err != nil {
			return err
		}
		if out.Height != in.Height || out.Width != in.Width || out.Bands != in.Bands {
			return fmt.Errorf("tile: the method returned %s for a %s strip", out.Size(), in.Size())
		}
		core := out.Crop(s.Core.Start-s.Read.Start, 0, 0, s.Core.Len(), out.Width, out.Bands)
		if err := w.WriteLines(core, s.Core.Start); err != nil {
			return err
		}
		if progress != nil {
			progress(i+1, len(strips))
		}
	}
	return nil
}

// LinesFor returns the core lines per strip that keep a strip within
// budget bytes, for a cube width×bands and a method that needs perVoxel
// bytes for each voxel it holds: the most lines, a multiple of g.Align,
// such that (lines + 2·g.Halo)·width·bands·perVoxel ≤ budget. It is an
// error when not even g.Align lines fit.
func LinesFor(budget int64, width, bands int, perVoxel float64, g Geometry) (int, error) {
	perLine := float64(width) * float64(bands) * perVoxel
	n := int(float64(budget)/perLine) - 2*g.Halo
	n = n / g.Align * g.Align
	if n < g.Align {
		return 0, fmt.Errorf("a strip of %d lines (%d of them halo) of %d samples × %d bands needs about %s, more than the %s available",
			g.Align+2*g.Halo, 2*g.Halo, width, bands, FormatBytes(int64(float64(g.Align+2*g.Halo)*perLine)), FormatBytes(max(budget, 0)))
	}
	return n, nil
}

// FormatBytes writes n bytes in binary units (KiB, MiB, GiB) with one
// decimal.
func FormatBytes(n int64) string { return msi.FormatBytes(n) }
