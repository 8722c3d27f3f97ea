package cmd

import (
	"slices"
	"strconv"
	"strings"

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
}

func (c *cubeFlags) register(f *pflag.FlagSet, output bool) {
	arrays := strings.Join(formats.Labels(msi.TakesAxes), "/")
	f.StringVar(&c.axes, "axes", array.DefaultAxes, arrays+" inputs: the order of the array's dimensions as H, W and B (e.g. BHW)")
	f.StringVar(&c.scale, "scale", "auto", strings.Join(formats.Labels(msi.TakesScale), "/")+
		" inputs: working = stored × SCALE, or auto ("+arrays+": by element type and maximum: [0, 1] reflectance ×255, 8-bit ×1, n-bit counts ×255/(2ⁿ−1); others ×1)")
	if output {
		f.StringVar(&c.dtype, "dtype", "float32", strings.Join(formats.Labels(msi.TakesDType), "/")+
			" outputs: element type ("+strings.Join(array.DTypes, ", ")+", or input: the input's)")
	}
}

// pathHelp says what the path of a cube may be.
func pathHelp(what string) string { return what + ": " + formats.Paths() }

// readOptions returns the ReadOptions the flags give.
func (c *cubeFlags) readOptions() (msi.ReadOptions, error) {
	o := msi.ReadOptions{Axes: c.axes}
	if c.scale != "auto" {
		s, err := strconv.ParseFloat(c.scale, 64)
		if err != nil || !(s > 0) || s > 1e300 {
			return o, option.Errorf("scale", c.scale, "scale must be auto or a positive number, got %q", c.scale)
		}
		o.Scale = s
	}
	if c.dtype != "" && c.dtype != "input" && !slices.Contains(array.DTypes, c.dtype) {
		return o, option.Errorf("dtype", c.dtype, "dtype must be one of %s or input, got %q", strings.Join(array.DTypes, ", "), c.dtype)
	}
	return o, nil
}

// open reads the cube at path as the flags say (its Stored says how) and,
// for an array file, says on stderr which scale it was read with.
func (c *cubeFlags) open(path string, log report.Reporter) (*msi.Cube, error) {
	o, err := c.readOptions()
	if err != nil {
		return nil, err
	}
	return pipeline.Open(path, o, log)
}

// openLike reads a cube to compare with one read as src (a reference, an
// input of eval): an array file with src's axes and scale when src is an
// array file too (else with the flags' scale), so that both are on the
// same scale, any other format as it is.
func (c *cubeFlags) openLike(path string, src msi.Storage) (*msi.Cube, error) {
	f, err := formats.ForRead(path)
	if err != nil {
		return nil, err
	}
	if f.Info().Takes&msi.TakesAxes == 0 {
		return formats.Open(path)
	}
	o := msi.ReadOptions{Axes: c.axes}
	if pipeline.IsArray(src) {
		o.Scale = src.Scale
	} else if ro, err := c.readOptions(); err == nil {
		o.Scale = ro.Scale
	}
	return formats.OpenWith(path, o)
}

// writeOptions returns how to write a result made from a cube read as src:
// an array output in the input's axes and scale (so it keeps the input's
// units), with --dtype's element type. Other formats store the working
// scale in their own layout.
func (c *cubeFlags) writeOptions(src msi.Storage, force bool) msi.WriteOptions {
	w := msi.WriteOptions{Force: force}.Like(src, c.dtype == "input")
	if c.dtype != "input" {
		w.DType = c.dtype
	}
	return w
}

// writeCube writes c to out with opts and says on log which of c's
// metadata the output's format cannot keep.
func writeCube(out string, c *msi.Cube, opts msi.WriteOptions, log report.Reporter) (msi.WriteInfo, error) {
	info, err := formats.Write(out, c, opts)
	if err == nil {
		if lost := formats.Lost(out, &c.Metadata); len(lost) > 0 {
			report.OrDiscard(log).Logf("%s: a %s keeps no %s", out, formats.ForWrite(out).Info().Label, strings.Join(lost, ", "))
		}
	}
	return info, err
}
