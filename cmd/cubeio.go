package cmd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"tdsc/internal/atomicfile"
	"tdsc/internal/formats"
	"tdsc/internal/formats/array"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/parallel"
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
	// reads (its declaration, from a measured peak: registerMemory), and
	// command its name, for the check of the memory budget
	// (pipeline.CheckMemory); 0: the formats' own check of the cube alone.
	peak    float64
	command string
}

// start binds the flags to the running command: its context, its log and
// its name.
func (c *cubeFlags) start(cmd *cobra.Command) {
	c.ctx, c.log, c.command = cmd.Context(), newReporter(cmd), cmd.Name()
}

func (c *cubeFlags) register(cmd *cobra.Command, output bool) {
	f := cmd.Flags()
	arrays := strings.Join(formats.Labels(msi.TakesAxes), "/")
	f.StringVar(&c.axes, "axes", "", arrays+" inputs: the order of the stored dimensions as H, W and B (e.g. BHW; default HWB, and BHW, GDAL's bands × lines × samples, for GDAL's rasters); a path's own, PATH@BHW, overrides it for that path")
	scaleHelp := "every cube read (references too): working [0, 255] value = stored value × SCALE (after an ENVI file's data gain and offset values), " +
		"or auto: an ENVI reflectance scale factor F gives 255/F, a PNG stack its bit depth (8-bit ×1, 16-bit ×255/65535); " +
		"uint16 its full range (×255/65535); else floats up to 2 are [0, 1] reflectance ×255, other floats ×1, integers up to 255 ×1, larger ones n-bit counts ×255/(2ⁿ−1), " +
		"and a cube scored against a reference (or --noisy) takes its scale when both are integers so scaled"
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
// needs peak bytes a voxel of them (its measured peak).
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

// open reads the cube at path as the flags say (its Stored says how) and
// says on log how it was read (formats.ReadLine): every cube a command
// reads, a reference too, by the one rule of units, so that cubes of any
// formats are compared on one scale.
func (c *cubeFlags) open(path string) (*msi.Cube, error) {
	o, err := c.readOptionsFor(path)
	if err != nil {
		return nil, err
	}
	in, err := formats.NewSource(path, o)
	if err != nil {
		return nil, err
	}
	return pipeline.ReadWithin(c.ctx, in, c.command, c.peak, c.log)
}

// openLike reads the cube at path as open does, on one scale with like,
// a cube of the same scene read before it from likePath (the reference
// the cube is scored against, the noisy cube it was denoised from): when
// its own scale was found from its values and like's says otherwise
// (msi.Agree), it is read again on like's, which is said on log; when the
// two cannot be told apart, an error says which --scale to give.
func (c *cubeFlags) openLike(path string, like *msi.Cube, likePath string) (*msi.Cube, error) {
	cube, err := c.open(path)
	if err != nil {
		return nil, err
	}
	scale, err := msi.Agree(like.Stored, cube.Stored)
	if err != nil {
		return nil, fmt.Errorf("%s is read %s, but %s %s: %w", path, cube.Stored.Units, likePath, like.Stored.Units, err)
	}
	if scale == 0 {
		return cube, nil
	}
	o, err := c.readOptionsFor(path)
	if err != nil {
		return nil, err
	}
	o.Scale = scale
	if cube, err = parallel.Interruptible(c.ctx, func() (*msi.Cube, error) { return formats.OpenWith(path, o) }); err != nil {
		return nil, pipeline.TooLargeHelp(err)
	}
	cube.Stored.ScaleGiven, cube.Stored.FromData = false, false
	cube.Stored.Units = fmt.Sprintf("×%.6g, the scale of %s", scale, likePath)
	report.OrDiscard(c.log).Logf("%s: read again on the scale of %s, ×%.6g (the largest value of each tells another bit depth; one scene is read on one scale)", path, likePath, scale)
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
	return pipeline.TooLargeHelp(err)
}

// maskOptions returns the options a mask file at path is read with: the
// flags' axes, and no scale, a mask being zero or not whatever its scale.
func (c *cubeFlags) maskOptions(path string) (msi.ReadOptions, error) {
	o, err := c.readOptionsFor(path)
	o.Scale = 0
	return o, err
}

// checkOutputFiles returns an error for the first of paths (files, not
// cubes) that exists, unless force is set, or whose folder does not exist
// or cannot be written (atomicfile.Check). Checking before the work
// starts saves a long run that could not write its result.
func checkOutputFiles(force bool, paths ...string) error {
	return atomicfile.Check(force, paths...)
}
