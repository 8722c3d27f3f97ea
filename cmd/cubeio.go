package cmd

import (
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/report"
)

// cubeFlags are how the array formats (.npy, .mat) are read and written:
// the order of their axes, the factor to the working [0, 255] scale, and
// the element type of array outputs.
type cubeFlags struct {
	axes, scale, dtype string
}

func (c *cubeFlags) register(f *pflag.FlagSet, output bool) {
	f.StringVar(&c.axes, "axes", msi.DefaultAxes, ".npy/.mat inputs: the order of the array's dimensions as H, W and B (e.g. BHW)")
	f.StringVar(&c.scale, "scale", "auto", ".npy/.mat/ENVI inputs: working = stored × SCALE, or auto (by element type and maximum: [0, 1] reflectance ×255, 8-bit ×1, n-bit counts ×255/(2ⁿ−1); ENVI ×1)")
	if output {
		f.StringVar(&c.dtype, "dtype", "float32", ".npy/.mat outputs: element type ("+strings.Join(msi.DTypes, ", ")+", or input: the input's)")
	}
}

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
	if c.dtype != "" && c.dtype != "input" && !slices.Contains(msi.DTypes, c.dtype) {
		return o, option.Errorf("dtype", c.dtype, "dtype must be one of %s or input, got %q", strings.Join(msi.DTypes, ", "), c.dtype)
	}
	return o, nil
}

// open reads the cube at path as the flags say and, for an array file,
// says on stderr which scale it was read with.
func (c *cubeFlags) open(path string, log report.Reporter) (*msi.Cube, msi.Source, error) {
	o, err := c.readOptions()
	if err != nil {
		return nil, msi.Source{}, err
	}
	cube, src, err := msi.OpenWith(path, o)
	if err != nil {
		return nil, src, err
	}
	if src.Format == "npy" || src.Format == "mat" {
		how := "given"
		if o.Scale == 0 {
			how = "auto"
		}
		report.OrDiscard(log).Logf("read %s: %s %s %s, values ×%.6g to the [0, 255] scale (%s)", path, src.Format, src.DType, cube.Size(), src.Scale, how)
	}
	return cube, src, nil
}

// openLike reads a cube to compare with one read as src (a reference, an
// input of eval): an array file with src's axes and scale, so that both are
// on the same scale, any other format as it is.
func (c *cubeFlags) openLike(path string, src msi.Source) (*msi.Cube, error) {
	if !msi.IsArrayPath(path) {
		return msi.Open(path)
	}
	o := msi.ReadOptions{Axes: c.axes}
	if src.Format == "npy" || src.Format == "mat" {
		o.Scale = src.Scale
	} else if ro, err := c.readOptions(); err == nil {
		o.Scale = ro.Scale
	}
	cube, _, err := msi.OpenWith(path, o)
	return cube, err
}

// writeOptions returns how to write a result made from a cube read as src:
// an array output in the input's axes and scale (so it keeps the input's
// units), with --dtype's element type. PNG and ENVI outputs are always on
// the working scale.
func (c *cubeFlags) writeOptions(src msi.Source, force bool) msi.WriteOptions {
	w := msi.WriteOptions{Force: force}.Like(src, c.dtype == "input")
	if c.dtype != "input" {
		w.DType = c.dtype
	}
	return w
}
