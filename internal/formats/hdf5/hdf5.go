// Package hdf5 reads cubes from datasets of HDF5 files (.h5, .he5, .hdf5)
// and of netCDF-4 files (.nc), which are HDF5 files, without a C library:
// package internal/hdf5 parses the bytes (see it for the part of HDF5
// read: nested groups, contiguous or chunked datasets, deflate). So the
// pure-Go build reads PRISMA's HDF-EOS5 cubes, EMIT's netCDF-4 ones and
// what h5py writes.
//
// A path is FILE.h5:/group/sub/dataset (the leading slash may be left
// out, as netCDF variable names have none: FILE.nc:reflectance), or
// FILE.h5 alone for a file with one 3-D numeric dataset (with several, the
// error lists them with their shapes). The dataset must be of integers
// or floats (float16 to float64), 3-D once leading or trailing dimensions
// of length 1 are dropped (array.Squeeze); its dimensions are named by
// the axes option in the order h5py's shape lists them (C order), HWB by
// default: a PRISMA cube (lines × bands × samples) is read with HBW, an
// h5py cube written as (bands, lines, samples) with BHW. A 1-D dataset
// named "wavelengths" or "wavelength" with one value per band, in the
// cube's group or in the group sensor_band_parameters (EMIT's), gives
// the wavelengths (nm). Values are scaled as in package npy. NaN marks a
// missing voxel; fill values stated in attributes are not read.
//
// HDF5 is only read: outputs are ENVI, .npy, .mat, band stacks or, in the
// GDAL build, GeoTIFF.
package hdf5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"tdsc/internal/formats/array"
	"tdsc/internal/formats/internal/hdf5"
	"tdsc/internal/msi"
)

// name is the format's name in Storage.Format.
const name = "hdf5"

// Format is the format of HDF5 and netCDF-4 datasets.
var Format msi.Format = format{}

type format struct{}

// Extensions lists the extensions of the files the format reads.
var Extensions = []string{".h5", ".he5", ".hdf5", ".nc"}

func (format) Info() msi.Info {
	return msi.Info{Name: name, Label: "HDF5", Path: "an .h5/.he5/.nc[:/DATASET]", Takes: msi.TakesAxes,
		Carries: msi.CarriesWavelengths | msi.CarriesMissing}
}

// Recognize reports whether path names an HDF5 or netCDF file, with or
// without a ":DATASET" suffix.
func (format) Recognize(path string) bool {
	file, _ := SplitPath(path)
	return hasExtension(file)
}

func hasExtension(file string) bool {
	ext := strings.ToLower(filepath.Ext(file))
	for _, e := range Extensions {
		if ext == e {
			return true
		}
	}
	return false
}

// Outputs returns the file of path.
func (format) Outputs(path string) []string {
	file, _ := SplitPath(path)
	return []string{file}
}

// SplitPath splits "FILE.h5:/group/dataset" into the file and the
// dataset's path. A path without a dataset, or whose part before the
// first colon that follows an HDF5 or netCDF extension is no such file
// name, is returned whole with an empty dataset.
func SplitPath(p string) (file, dataset string) {
	for i := 0; i < len(p); i++ {
		if p[i] == ':' && hasExtension(p[:i]) {
			return p[:i], p[i+1:]
		}
	}
	return p, ""
}

// Open reads the cube of the dataset path names with its dimensions in the
// order opts.Axes, its values multiplied by opts.Scale or the automatic
// factor.
func (format) Open(path string, opts msi.ReadOptions) (*msi.Cube, error) {
	axes, err := array.ParseAxes(opts.Axes)
	if err != nil {
		return nil, err
	}
	if err := msi.CheckScale(opts.Scale); err != nil {
		return nil, err
	}
	file, dataset := SplitPath(path)
	data, err := msi.ReadWhole(file, opts.Budget)
	if err != nil {
		return nil, err
	}
	c, dtype, err := decode(data, file, dataset, axes, opts.Budget)
	if err != nil {
		return nil, err
	}
	scale, units, fromData := array.ApplyScale(c, dtype, opts.Scale)
	c.Stored = msi.Storage{Format: name, DType: dtype, Axes: axes, Scale: scale, ScaleGiven: opts.Scale != 0, FromData: fromData, Units: units}
	return c, nil
}

// Write refuses: tdsc does not write HDF5 (see WriteError).
func (f format) Write(path string, c *msi.Cube, opts msi.WriteOptions) (msi.WriteInfo, error) {
	return msi.WriteInfo{}, f.WriteError(path)
}

// WriteError says that tdsc does not write HDF5 (msi.ReadOnly).
func (format) WriteError(path string) error {
	return fmt.Errorf("%s: tdsc reads HDF5 and netCDF but does not write them: write ENVI (.hdr), .npy, .mat or, in the GDAL build, GeoTIFF (.tif)", path)
}

// decode reads the cube of dataset (the one 3-D dataset when empty) from
// the bytes of the HDF5 file named file, with its dimensions in the order
// axes. It returns the cube, values as stored, and its element type's
// name. A cube that would need more than budget bytes (the file's bytes
// and the dataset's values as stored counted) is refused before its
// values are read.
func decode(data []byte, file, dataset, axes string, budget int64) (*msi.Cube, string, error) {
	at, ok := hdf5.Find(data)
	if !ok {
		return nil, "", fmt.Errorf("%s: not an HDF5 file (nor a netCDF-4 one): no HDF5 signature (a netCDF-3 file, say, is read by the GDAL build)", file)
	}
	h, err := hdf5.Parse(data, at)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", file, gdalHint(err, file, dataset))
	}
	if dataset == "" {
		found, err := cubes(h)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %v", file, gdalHint(err, file, dataset))
		}
		switch len(found) {
		case 0:
			return nil, "", fmt.Errorf("%s: no 3-D numeric dataset to take as the cube", file)
		case 1:
			dataset = found[0].path
		default:
			return nil, "", fmt.Errorf("%s: %d 3-D datasets, %s: say which with %s:/PATH", file, len(found), describe(found), file)
		}
	}
	where := fmt.Sprintf("%s: dataset %s", file, "/"+strings.TrimLeft(dataset, "/"))
	o, err := h.Lookup(dataset)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", where, gdalHint(err, file, dataset))
	}
	d := o.Dataset
	if d == nil {
		return nil, "", fmt.Errorf("%s is a group, not a dataset", where)
	}
	t, ok := array.TypeOf(d.Kind, d.ElemSize)
	if !ok {
		return nil, "", fmt.Errorf("%s holds elements of HDF5 datatype class %d and %d bytes; a cube needs integers or floats (%s)", where, d.Class, d.ElemSize, array.ReadTypes)
	}
	dims := array.Squeeze(intDims(d.Dims))
	if len(dims) != 3 {
		return nil, "", fmt.Errorf("%s is %d-D (%s); a cube needs 3 dimensions (%s) (leading or trailing dimensions of length 1 are dropped)", where, len(d.Dims), shape(d.Dims), axes)
	}
	for _, x := range dims {
		if x == 0 {
			return nil, "", fmt.Errorf("%s is empty (%s)", where, shape(d.Dims))
		}
	}
	l := array.NewLayout([3]int(dims), axes, false)
	stored := int64(len(data)) + int64(t.Size)*int64(l.Height)*int64(l.Width)*int64(l.Bands)
	if err := msi.CheckFits(file, l.Height, l.Width, l.Bands, stored, budget); err != nil {
		return nil, "", err
	}
	raw, err := h.Read(d)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", where, gdalHint(err, file, dataset))
	}
	c, err := array.Decode(raw, l, t.Size, t.Float, array.Decoder(d.Kind, t.Size, binary.LittleEndian), 0)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", where, err)
	}
	c.Wavelengths = wavelengths(h, dataset, c.Bands)
	return c, t.Name, nil
}

// gdalHint adds to an error of a part of HDF5 that the reader does not
// read how GDAL reads the dataset.
func gdalHint(err error, file, dataset string) error {
	if !errors.Is(err, hdf5.ErrUnsupported) {
		return err
	}
	if dataset == "" {
		dataset = "PATH"
	}
	return fmt.Errorf("%w; the GDAL build of tdsc reads it as HDF5:\"%s\"://%s", err, file, strings.TrimLeft(dataset, "/"))
}

// intDims returns dims as ints (a dimension too large for one is clipped
// to a value that the size checks refuse).
func intDims(dims []uint64) []int {
	out := make([]int, len(dims))
	for i, x := range dims {
		out[i] = int(min(x, 1<<40))
	}
	return out
}

// shape formats dimensions as h5py prints a shape: "(31, 512, 512)".
func shape(dims []uint64) string { return array.ShapeText(intDims(dims)) }

// found is a dataset found by cubes.
type found struct {
	path string
	d    *hdf5.Dataset
}

// describe lists datasets for an error message: "/a (4, 5, 3) uint16".
func describe(fs []found) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		t, _ := array.TypeOf(f.d.Kind, f.d.ElemSize)
		parts[i] = fmt.Sprintf("%s %s %s", f.path, shape(f.d.Dims), t.Name)
	}
	return strings.Join(parts, ", ")
}

// maxDepth bounds the nesting of groups that cubes walks.
const maxDepth = 32

// cubes lists the 3-D numeric datasets of the file, in every group,
// depth first in the order of the groups' members.
func cubes(h *hdf5.File) ([]found, error) {
	var out []found
	seen := map[*hdf5.Object]bool{}
	var walk func(g *hdf5.Object, at string, depth int) error
	walk = func(g *hdf5.Object, at string, depth int) error {
		if seen[g] || depth > maxDepth {
			return nil // a group linked twice (or a cycle) is listed once
		}
		seen[g] = true
		ms, err := h.Members(g)
		if err != nil {
			return fmt.Errorf("group %s: %v", at+"/", err)
		}
		for _, m := range ms {
			p := at + "/" + m.Name
			o, err := h.Object(m)
			if err != nil {
				return fmt.Errorf("%s: %v", p, err)
			}
			if o.Group() {
				if err := walk(o, p, depth+1); err != nil {
					return err
				}
				continue
			}
			if _, ok := array.TypeOf(o.Dataset.Kind, o.Dataset.ElemSize); ok && len(array.Squeeze(intDims(o.Dataset.Dims))) == 3 {
				out = append(out, found{p, o.Dataset})
			}
		}
		return nil
	}
	return out, walk(h.Root(), "", 0)
}

// wavelengthNames are the names of a dataset of wavelengths (nm).
var wavelengthNames = []string{"wavelengths", "wavelength"}

// wavelengths returns the values of a 1-D numeric dataset of n finite
// values named as in wavelengthNames in the group of dataset or in the
// group /sensor_band_parameters, or nil.
func wavelengths(h *hdf5.File, dataset string, n int) []float64 {
	for _, group := range []string{path.Dir("/" + strings.TrimLeft(dataset, "/")), "/sensor_band_parameters"} {
		for _, name := range wavelengthNames {
			wl, err := vector(h, path.Join(group, name), n)
			if err == nil && (&msi.Metadata{Wavelengths: wl}).CheckFor(n) == nil {
				return wl
			}
		}
	}
	return nil
}

// vector reads the dataset at p as n numbers.
func vector(h *hdf5.File, p string, n int) ([]float64, error) {
	o, err := h.Lookup(p)
	if err != nil {
		return nil, err
	}
	d := o.Dataset
	if d == nil || len(d.Dims) > 2 {
		return nil, errors.New("not a vector")
	}
	count, _ := d.Count()
	value := array.Decoder(d.Kind, d.ElemSize, binary.LittleEndian)
	if value == nil || count != uint64(n) {
		return nil, errors.New("not a vector of numbers of the right length")
	}
	raw, err := h.Read(d)
	if err != nil {
		return nil, err
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = value(raw[i*d.ElemSize:])
	}
	return out, nil
}
