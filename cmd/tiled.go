package cmd

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/report"
	"tdsc/internal/tile"
)

// tileFlags are denoise's flags for cubes larger than memory.
type tileFlags struct {
	lines     int    // --tile: core lines per strip, 0 to decide by the budget
	maxMemory string // --max-memory
}

// defaultMemoryFraction of the machine's RAM is the default memory budget;
// fallbackMemory is the budget where the RAM is not known.
const (
	defaultMemoryFraction = 0.5
	fallbackMemory        = 4 << 30
)

// fixedMemory is the part of a run's memory that does not grow with the
// strip: the Go runtime, OpenBLAS's buffers, a method's training sample
// and dictionary. Strips are sized to the budget less this. (A 1024²×64
// cube in 2dsc strips sized to the whole budget peaked at 1547 MiB for a
// 1536 MiB budget.)
const fixedMemory = 128 << 20

// sigmaWindowLines bounds the lines read to estimate σ of a cube denoised
// in strips, when σ is not given.
const sigmaWindowLines = 512

// budget returns --max-memory in bytes (see memoryBudget).
func (t *tileFlags) budget() (int64, error) { return memoryBudget(t.maxMemory) }

// memoryBudget is the one rule of the memory budget of every command:
// maxMemory (--max-memory) in bytes, a whole number of bytes with an
// optional unit K, M, G or T (powers of 1024; KiB, MB and the like are
// read the same), or, when it is empty, half of the machine's RAM
// (fallbackMemory where that is not known). A budget larger than the
// machine's RAM is an error: a cube that fits it would not fit the
// machine, and Go's allocator would end the run with a crash rather than
// an error.
func memoryBudget(maxMemory string) (int64, error) {
	total, known := totalMemory()
	if maxMemory == "" {
		if known {
			return int64(defaultMemoryFraction * float64(total)), nil
		}
		return fallbackMemory, nil
	}
	n, err := parseBytes(maxMemory)
	if err != nil {
		return 0, fmt.Errorf("--max-memory: %v", err)
	}
	if known && n > total {
		return 0, fmt.Errorf("--max-memory: %s is more than the machine's RAM (%s)", maxMemory, tile.FormatBytes(total))
	}
	return n, nil
}

// parseBytes reads a size such as 2G, 1536M, 512MiB or 1000000.
func parseBytes(s string) (int64, error) {
	num, unit := s, ""
	if i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }); i >= 0 {
		num, unit = s[:i], s[i:]
	}
	unit = strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(unit), "B"), "I")
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}
	sh, ok := shift[unit]
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || !(v > 0) || v*math.Exp2(float64(sh)) > math.MaxInt64/2 {
		return 0, fmt.Errorf("want a positive size such as 2G, 1536M or 1000000 (bytes), got %q", s)
	}
	return int64(v * math.Exp2(float64(sh))), nil
}

// stripRun is a denoise run strip by strip (package tile), in any format
// that reads (input) and writes (output) windows of lines.
type stripRun struct {
	input, out, save string
	force            bool
	sigma            float64    // --sigma, 0 when not given
	known            float64    // the σ a given dictionary records (denoise.Spec.Build), else 0
	cf               *cubeFlags // how the input is read and the output written
	lines            int        // core lines per strip, 0 to fit budget
	budget           int64
	spec             denoise.Spec
	method           denoise.Method
	log              report.Reporter
}

// run denoises r.input into r.out strip by strip: σ resolved, the strips
// planned for the method and the budget, what the method learns from the
// whole cube learned (a Tiler), then every strip denoised and its core
// written. The header records the settings of the last strip's run (a
// method that is not a Tiler chooses per strip). On error nothing is left
// of the output or the dictionary file.
func (r *stripRun) run(ctx context.Context) error {
	start := time.Now()
	ro, err := r.cf.readOptionsFor(r.input)
	if err != nil {
		return err
	}
	in, err := formats.OpenWindow(r.input, ro)
	if err != nil {
		return err
	}
	defer in.Close()
	height, width, bands := in.Size()
	sigma, err := r.resolveSigma(in)
	if err != nil {
		return err
	}
	geom, exact := denoise.TileGeometry(r.method, sigma)
	lines := r.lines
	if lines == 0 {
		if lines, err = tile.LinesFor(r.budget-fixedMemory, width, bands, r.spec.BytesPerVoxel, geom); err != nil {
			return fmt.Errorf("%s: %v (the budget of %s less %s that does not grow with the strip): raise --max-memory",
				r.input, err, tile.FormatBytes(r.budget), tile.FormatBytes(fixedMemory))
		}
	}
	strips := tile.Plan(height, lines, geom)
	how := "each strip denoised on its own, so the result is close to, not the same as, the whole cube's"
	if exact {
		how = "the same result as the whole cube"
	}
	r.log.Logf("%s is %d×%d×%d: denoising it in %d strips of %d lines (halo %d; %s); memory budget %s",
		r.input, height, width, bands, len(strips), strips[0].Core.Len(), geom.Halo, how, tile.FormatBytes(r.budget))
	// The strips are garbage as soon as the next is read: the limit makes
	// the collector return them rather than let the heap grow to twice
	// what is live. It binds only Go's own memory, so it leaves half of
	// fixedMemory for what is not (OpenBLAS's buffers): at the whole
	// budget a 4096²×64 run peaked 15 MiB over it.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(r.budget - fixedMemory/2))

	strip, prepared := r.method, denoise.Result{}
	if t, ok := r.method.(denoise.Tiler); ok {
		if strip, prepared, err = t.PrepareTiles(ctx, in, strips, sigma); err != nil {
			return err
		}
	}
	learned := prepared.Dictionary
	if r.save == "" {
		learned = nil
	}
	meta, err := in.Metadata()
	if err != nil {
		return err
	}
	w, err := formats.CreateWindow(r.out, height, width, bands, meta, r.cf.writeOptions(meta.Stored, r.force))
	if err != nil {
		return err
	}
	r.log.Start("denoising strips", "strips", int64(len(strips)))
	var last denoise.Result
	err = tile.Run(ctx, in, w, strips, func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
		out, res, err := strip.Denoise(ctx, c, sigma)
		last = res
		return out, err
	}, func(done, _ int) { r.log.Update(int64(done), "") })
	r.log.Finish()
	if err != nil {
		w.Abort()
		return err
	}
	if learned != nil {
		if err := learned.WriteFile(r.save, r.force); err != nil {
			w.Abort()
			return err
		}
	}
	w.SetProcessing(describe(r.spec.Name, sigma, last))
	if err := w.Commit(); err != nil {
		if learned != nil {
			os.Remove(r.save)
		}
		return err
	}
	r.log.Logf("wrote %s (%.1f s in all)", r.out, time.Since(start).Seconds())
	return nil
}

// resolveSigma returns --sigma, or the σ a given dictionary records, or
// the estimate from at most sigmaWindowLines lines at the middle of the
// cube (the whole cube's estimate would need the whole cube).
func (r *stripRun) resolveSigma(in tile.Reader) (float64, error) {
	if r.sigma != 0 || r.known != 0 {
		return denoise.ResolveSigma(nil, r.sigma, r.known, r.log)
	}
	height, _, _ := in.Size()
	n := min(height, sigmaWindowLines)
	y0 := (height - n) / 2
	window, err := in.ReadLines(y0, n)
	if err != nil {
		return 0, err
	}
	r.log.Logf("estimating σ from lines %d–%d", y0, y0+n-1)
	return denoise.ResolveSigma(window, 0, 0, r.log)
}

// decide reports whether the run goes strip by strip, and the budget in
// bytes, which it gives cf for the cubes read whole: strips when --tile is given, or when the input is a cube in a
// format that reads windows of lines whose whole-cube run would need more
// than the budget (the method's BytesPerVoxel per voxel, and fixedMemory).
// Strips need an input and an output in formats that read and write
// windows (formats.CanReadWindows, CanWriteWindows), one σ and no --ref; a
// forced run without them is an error, an automatic one says why it
// cannot tile and runs whole.
func (t *tileFlags) decide(input, out string, cf *cubeFlags, spec denoise.Spec, ref, perBand bool, log report.Reporter) (bool, int64, error) {
	if t.lines < 0 {
		return false, 0, fmt.Errorf("--tile must be a number of lines ≥ 1 (0: automatic), got %d", t.lines)
	}
	budget, err := t.budget()
	if err != nil {
		return false, 0, err
	}
	cf.maxMemory = t.maxMemory // a whole-cube run reads the cube within the same budget
	if _, err := formats.ForRead(input); err != nil {
		return false, 0, err // missing, or of no format
	}
	readErr, writeErr := formats.CanReadWindows(input), formats.CanWriteWindows(out)
	var why string
	switch {
	case readErr != nil:
		why = "the input is " + readErr.Error()
	case writeErr != nil:
		why = "the output is " + writeErr.Error()
	case ref:
		why = "--ref needs the whole cube (score the output with tdsc eval instead)"
	case perBand:
		why = "--sigma-per-band estimates σ from the whole cube"
	}
	if t.lines > 0 {
		if why != "" {
			return false, 0, fmt.Errorf("--tile: %s", why)
		}
		return true, budget, nil
	}
	if readErr != nil {
		return false, budget, nil // its size is known only once it is read
	}
	ro, err := cf.readOptionsFor(input)
	if err != nil {
		return false, 0, err
	}
	in, err := formats.OpenWindow(input, ro)
	if err != nil {
		return false, 0, err
	}
	h, w, b := in.Size()
	in.Close()
	need := float64(h)*float64(w)*float64(b)*spec.BytesPerVoxel + fixedMemory
	if need <= float64(budget) {
		return false, budget, nil
	}
	if why != "" {
		log.Logf("%s: the whole cube needs about %s, more than the memory budget of %s, but it cannot be denoised in strips: %s",
			input, tile.FormatBytes(int64(need)), tile.FormatBytes(budget), why)
		return false, budget, nil
	}
	return true, budget, nil
}
