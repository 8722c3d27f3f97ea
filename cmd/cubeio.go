package cmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"tdsc/internal/formats"
	"tdsc/internal/formats/array"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/pipeline"
	"tdsc/internal/report"
)

// cubeFlags are how the formats that take options read and write cubes:
// the order of an array file's axes, the factor to the working [0, 255]
// scale, and the element type of array outputs. The formats say which
// they take (msi.Info.Takes); the help lists them from the registry.
type cubeFlags struct {
	axes, scale, dtype string
	// maxMemory is --max-memory, the memory budget of whole-cube reads
	// (see memoryBudget); commands without the flag keep the default.
	maxMemory string
	// ctx, when set, stops reading and writing cubes once it is
	// cancelled: a command sets it to its own context (cmd.Context())
	// before it reads (start), so that SIGINT or SIGTERM stop it at once.
	// Nil reads and writes to the end.
	ctx context.Context
	// log receives the line that says how each cube was read (nil: none).
	log report.Reporter
	// peak is the command's peak memory in bytes per voxel of a cube it
	// reads (its declaration, memoryPeak), and command its name, for the
	// check of the memory budget (checkMemory); 0: the formats' own check
	// of the cube alone.
	peak    float64
	command string
}

// checkMemory returns an error when the command, at c.peak bytes a voxel
// of a height×width×bands cube and pipeline.FixedMemory besides, would
// need more than budget bytes (0: no limit), saying what helps.
func (c *cubeFlags) checkMemory(path string, height, width, bands int, budget int64) error {
	need := c.peak*float64(height)*float64(width)*float64(bands) + pipeline.FixedMemory
	if c.peak == 0 || budget <= 0 || need <= float64(budget) {
		return nil
	}
	return fmt.Errorf("%s: tdsc %s needs about %g bytes a voxel of the %d×%d×%d cube, %s in all, more than the memory budget of %s: give a larger --max-memory if the machine has the memory, or a smaller cube",
		path, c.command, c.peak, height, width, bands, msi.FormatBytes(int64(min(need, math.MaxInt64/2))), msi.FormatBytes(budget))
}

// start binds the flags to the running command: its context, its log and
// its name.
func (c *cubeFlags) start(cmd *cobra.Command) {
	c.ctx, c.log, c.command = cmd.Context(), newReporter(cmd), cmd.Name()
}

func (c *cubeFlags) register(cmd *cobra.Command, output bool) {
	f := cmd.Flags()
	arrays := strings.Join(formats.Labels(msi.TakesAxes), "/")
	f.StringVar(&c.axes, "axes", array.DefaultAxes, arrays+" inputs: the order of the array's dimensions as H, W and B (e.g. BHW)")
	scaleHelp := "every cube read (references too): working [0, 255] value = stored value × SCALE (after an ENVI file's data gain and offset values), " +
		"or auto: an ENVI reflectance scale factor F gives 255/F, a PNG stack its bit depth (8-bit ×1, 16-bit ×255/65535); " +
		"else floats up to 2 are [0, 1] reflectance ×255, other floats ×1, integers up to 255 ×1, larger ones n-bit counts ×255/(2ⁿ−1)"
	if output {
		scaleHelp += "; outputs go back to the input's units"
	}
	f.StringVar(&c.scale, "scale", "auto", scaleHelp)
	if output {
		f.StringVar(&c.dtype, "dtype", "float32", strings.Join(formats.Labels(msi.TakesDType), "/")+
			" outputs: element type ("+strings.Join(array.DTypes, ", ")+", or input: the input's)")
		fixedValues(cmd, "dtype", dtypeValues)
	}
}

// dtypeValues are the values of --dtype.
var dtypeValues = append(slices.Clone(array.DTypes), "input")

// registerMemory adds --max-memory, the budget of the cubes read whole,
// for a command that reads cubes and does not denoise them in strips and
// needs peak bytes a voxel of them (its measured peak, see memoryPeak).
func (c *cubeFlags) registerMemory(f *pflag.FlagSet, peak float64) {
	c.peak = peak
	f.StringVar(&c.maxMemory, "max-memory", "", "memory budget (e.g. 2G, 1536M): a cube that needs more to read whole is refused (default: half of the machine's RAM)")
}

// pathHelp says what the path of a cube may be.
func pathHelp(what string) string { return what + ": " + formats.Paths() }

// outPathHelp says what the path of an output cube may be.
func outPathHelp(what string) string { return what + ": " + formats.WritePaths() }

// readOptions returns the ReadOptions the flags give, for a format that
// takes every option, with the memory budget.
func (c *cubeFlags) readOptions() (msi.ReadOptions, error) {
	if _, err := array.ParseAxes(c.axes); err != nil {
		return msi.ReadOptions{}, err
	}
	o := msi.ReadOptions{Axes: c.axes}
	if c.scale != "auto" {
		s, err := strconv.ParseFloat(c.scale, 64)
		if err != nil || !(s > 0) || s > 1e300 {
			return o, option.Errorf("scale", c.scale, "scale must be auto or a positive number, got %q", c.scale)
		}
		o.Scale = s
	}
	if c.dtype != "" && !slices.Contains(dtypeValues, c.dtype) {
		return o, option.Errorf("dtype", c.dtype, "dtype must be one of %s or input, got %q", strings.Join(array.DTypes, ", "), c.dtype)
	}
	budget, err := memoryBudget(c.maxMemory)
	if err != nil {
		return o, err
	}
	o.Budget = budget
	return o, nil
}

// readOptionsFor returns the ReadOptions the flags give for the cube at
// path: --axes left out for a format that does not take it
// (msi.Info.Takes), so that --axes given for the array files a command
// reads does not stop it reading a PNG band stack or an ENVI cube beside
// them. --scale applies to every cube.
func (c *cubeFlags) readOptionsFor(path string) (msi.ReadOptions, error) {
	o, err := c.readOptions()
	if err != nil {
		return o, err
	}
	f, err := formats.ForRead(path)
	if err != nil {
		return o, err
	}
	if f.Info().Takes&msi.TakesAxes == 0 {
		o.Axes = ""
	}
	return o, nil
}

// tooLargeHelp adds to an error for a cube that does not fit the memory
// budget (*msi.TooLargeError) what helps; other errors are returned as
// they are.
func tooLargeHelp(err error) error {
	var tl *msi.TooLargeError
	if !errors.As(err, &tl) {
		return err
	}
	return fmt.Errorf("%w: give a larger --max-memory if the machine has the memory, or denoise the cube in strips (tdsc denoise --tile, %s cubes)",
		err, strings.Join(formats.WindowLabels(), " and "))
}

// open reads the cube at path as the flags say (its Stored says how) and
// says on log how it was read (pipeline.ReadLine): every cube a command
// reads, a reference too, by the one rule of units, so that cubes of any
// formats are compared on one scale.
func (c *cubeFlags) open(path string) (*msi.Cube, error) {
	o, err := c.readOptionsFor(path)
	if err != nil {
		return nil, err
	}
	// The size from the header, before reading, where the format gives it
	// (a file it cannot read is said by the read); else once read, before
	// the work.
	if c.peak > 0 {
		if h, w, b, err := formats.Size(path, o); err == nil {
			if err := c.checkMemory(path, h, w, b, o.Budget); err != nil {
				return nil, err
			}
		}
	}
	cube, err := interruptible(c.ctx, func() (*msi.Cube, error) { return pipeline.Open(path, o, c.log) })
	if err != nil {
		return nil, tooLargeHelp(err)
	}
	if err := c.checkMemory(path, cube.Height, cube.Width, cube.Bands, o.Budget); err != nil {
		return nil, err
	}
	return cube, nil
}

// applyMask marks missing the voxels of c that the mask file at path
// marks (pipeline.ApplyMask), read with the flags' axes; empty path: none.
func (c *cubeFlags) applyMask(cube *msi.Cube, path string) error {
	if path == "" {
		return nil
	}
	o, err := c.maskOptions(path)
	if err != nil {
		return fmt.Errorf("--mask: %w", err)
	}
	_, err = pipeline.ApplyMask(cube, path, o)
	return tooLargeHelp(err)
}

// maskOptions returns the options a mask file at path is read with: the
// flags' axes, and no scale, a mask being zero or not whatever its scale.
func (c *cubeFlags) maskOptions(path string) (msi.ReadOptions, error) {
	o, err := c.readOptionsFor(path)
	o.Scale = 0
	return o, err
}

// writeOptions returns how to write a result made from a cube read as src:
// in the input's units (msi.WriteOptions.Like: its scale, gains and
// offsets undone) and, for an array output, its axes, with --dtype's
// element type; with --dtype input, the input's, or for a type that is
// read but not written the one that holds it (array.Writable). A PNG
// stack output is on the [0, 255] scale. The write stops, leaving
// nothing, once c.ctx is cancelled.
func (c *cubeFlags) writeOptions(src msi.Storage, force bool) msi.WriteOptions {
	w := msi.WriteOptions{Force: force, Context: c.ctx}.Like(src, c.dtype == "input")
	if c.dtype != "input" {
		w.DType = c.dtype
	} else if w.DType != "" {
		w.DType = array.Writable(w.DType)
	}
	return w
}

// checkOutput returns the error that writing the cube made from the cube
// at input to out would meet (formats.CheckOutput), as far as it is known
// before input is read: its size from its header (formats.Size), and the
// element type --dtype gives unless it is the input's.
func (c *cubeFlags) checkOutput(input, out string, force bool) error {
	opts := msi.WriteOptions{Force: force, DType: c.dtype}
	var h, w, b int
	if c.dtype != "input" {
		ro, err := c.readOptionsFor(input)
		if err != nil {
			return err
		}
		if h, w, b, err = formats.Size(input, ro); err != nil {
			return err
		}
	}
	return formats.CheckOutput(out, h, w, b, opts)
}

// writeCube writes c to out with opts and says on log which of c's
// metadata the output's format cannot keep.
func writeCube(out string, c *msi.Cube, opts msi.WriteOptions, log report.Reporter) (msi.WriteInfo, error) {
	info, err := formats.Write(out, c, opts)
	if err == nil {
		if lost := formats.Lost(out, c); len(lost) > 0 {
			report.OrDiscard(log).Logf("%s: a %s keeps no %s", out, formats.ForWrite(out).Info().Label, strings.Join(lost, ", "))
		}
	}
	return info, err
}
