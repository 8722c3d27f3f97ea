// Package msi holds multispectral image cubes, their format-neutral
// metadata, and the seam through which file formats read and write them
// (Format; the formats themselves are the packages under
// internal/formats, and package formats chooses one by the path).
//
// Every cube is on the working intensity scale [0, 255] (float64): a format
// brings its stored values to that scale on reading by one rule for every
// format (see AutoScale and ReadOptions.Scale) and takes them back to the
// input's units on writing (WriteOptions.Like). A voxel without data (an
// ENVI data ignore value, NaN in a float file) is NaN in the cube.
package msi

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Cube is an H×W×B multispectral image on the [0, 255] scale, with what is
// known of its scene (Metadata, whose fields are promoted: c.Wavelengths).
// A missing voxel (no data) is NaN; see Missing.
//
// Data is band-sequential: voxel (y, x, b) is Data[(b*Height+y)*Width+x], so
// every band is one contiguous row-major image.
type Cube struct {
	Height, Width, Bands int
	Data                 []float64
	Metadata
}

// Metadata is what a cube says about its scene and its history beyond its
// values, in terms no file format owns. A format maps what it can store
// to these fields on reading and back on writing (see Format's Info and
// Carried); what a format stores that has no neutral field here travels in
// Fields, verbatim, from an input of that format to an output of it.
//
// Wavelengths and FWHM are in nanometres whatever unit a file states them
// in: the format converts (ENVI's micrometres, say, are multiplied by
// 1000), so that every consumer reads one unit.
type Metadata struct {
	// Wavelengths holds the centre wavelength of every band in
	// nanometres, or is nil when they are not known.
	Wavelengths []float64
	// FWHM holds the full width at half maximum of every band's response
	// in nanometres, or is nil when not known.
	FWHM []float64
	// BandNames holds a name for every band, or is nil.
	BandNames []string
	// Description is the scene's own description, as its input gave it;
	// empty when it has none.
	Description string
	// Processing, if not empty, says how tdsc made the cube (the command
	// and its settings). Commands set it on their outputs; no format reads
	// it back as such (an ENVI header records it beside the scene's
	// description).
	Processing string
	// NoData, when HasNoData is set, is the value that marks voxels
	// without data in the file, as stored (ENVI's data ignore value, not
	// scaled): such voxels are NaN in the cube, and a format that keeps
	// the value writes NaN voxels as it, exactly.
	NoData    float64
	HasNoData bool
	// Georef places the cube on the Earth, nil when the input did not (a
	// GeoTIFF's geotransform and projection, read and written through
	// GDAL).
	Georef *Georef
	// Stored says how the values were stored in the file they were read
	// from. Open sets it; writers do not read it (WriteOptions.Like turns
	// it into options for storing an output like its input).
	Stored Storage
	// Fields are format-specific facts with no neutral field above (an
	// ENVI header's map info, a MAT-file's variable name), in their order
	// and verbatim, so that an output of the same format carries them
	// unchanged; other formats ignore them.
	Fields []Field
}

// Storage is how a cube's values were stored.
type Storage struct {
	// Format is the name of the format read (Info.Name: "png", "envi",
	// "npy", "mat").
	Format string
	// DType is the stored element type, one of the array formats' type
	// names ("float32", "float64", "uint16", "uint8", "int16"); empty for
	// a PNG band stack.
	DType string
	// Axes is the order of an array file's stored dimensions as the
	// letters H, W and B; empty for formats with a fixed layout.
	Axes string
	// AxesGiven says that the axes were given (--axes, or the path's own)
	// rather than the format's default: a default that makes the image
	// implausibly thin may be the wrong guess (see Thin).
	AxesGiven bool
	// Scale is the factor applied on reading: working = physical ×
	// Scale, physical = stored × Gains[b] + Offsets[b] (stored when Gains
	// is nil). It is the unit of the input for outputs made from it
	// (WriteOptions.Like): a PNG band stack, whose values are image
	// intensities, has 1, its outputs being on the [0, 255] scale.
	Scale float64
	// ScaleGiven says that the user gave Scale (--scale).
	ScaleGiven bool
	// FromData says that Scale was found from the values (AutoScale's
	// rule on their largest value), not given, stated by the file or
	// fixed by the element type: the one way two files of a scene can be
	// read on different scales (see Agree).
	FromData bool
	// Gains and Offsets are the per-band gains and offsets of an ENVI
	// file (data gain values, data offset values), nil when it has none.
	Gains, Offsets []float64
	// Units says in words how the values were brought to the working
	// scale and why, for the line that reports the read: "reflectance
	// ×255 (reflectance scale factor 10000)".
	Units string
}

// Georef is the georeferencing of a cube in GDAL's terms, which every
// raster format's georeferencing maps to: the top-left corner of pixel
// (x, y) is at map coordinates
//
//	X = Transform[0] + x·Transform[1] + y·Transform[2]
//	Y = Transform[3] + x·Transform[4] + y·Transform[5]
//
// (x, y in pixels from the image's top-left corner), in the coordinate
// reference system Projection, as OGC WKT (empty when unknown).
type Georef struct {
	Transform  [6]float64
	Projection string
}

// thinFactor is how many times fewer lines or samples than bands make a
// cube implausibly thin.
const thinFactor = 4

// Thin reports whether a height×width×bands cube read with axes the user
// did not give looks read in the wrong order: a height or width at least
// thinFactor times smaller than the band count, as a B×H×W array read as
// H×W×B gives (31×512×512 read as 31 lines of 512 samples of 512 bands).
// Such a cube is possible (a line scanner's few lines), so it calls for
// a warning, not an error.
func (s *Storage) Thin(height, width, bands int) bool {
	return s.Axes != "" && !s.AxesGiven && thinFactor*min(height, width) <= bands
}

// Field is one format-specific fact of Metadata.Fields: Format is the name
// of the format that reads and writes it (Info.Name), Key and Value are as
// that format stores them (an ENVI "{…}" value with its braces and line
// breaks).
type Field struct{ Format, Key, Value string }

// FieldsOf returns the fields of format, in order.
func (m *Metadata) FieldsOf(format string) []Field {
	var out []Field
	for _, f := range m.Fields {
		if f.Format == format {
			out = append(out, f)
		}
	}
	return out
}

// clone returns a deep copy of m.
func (m Metadata) clone() Metadata {
	m.Stored.Gains, m.Stored.Offsets = slices.Clone(m.Stored.Gains), slices.Clone(m.Stored.Offsets)
	m.Wavelengths = slices.Clone(m.Wavelengths)
	m.FWHM = slices.Clone(m.FWHM)
	m.BandNames = slices.Clone(m.BandNames)
	m.Fields = slices.Clone(m.Fields)
	if m.Georef != nil {
		g := *m.Georef
		m.Georef = &g
	}
	return m
}

// NewCube returns a zero cube of the given size. It panics if a dimension is
// not positive.
func NewCube(height, width, bands int) *Cube {
	if height <= 0 || width <= 0 || bands <= 0 {
		panic(fmt.Sprintf("msi: bad cube size %d×%d×%d", height, width, bands))
	}
	return &Cube{Height: height, Width: width, Bands: bands, Data: make([]float64, height*width*bands)}
}

// Band returns band b (0-based) as a row-major Height×Width slice that
// aliases the cube's data.
func (c *Cube) Band(b int) []float64 {
	n := c.Height * c.Width
	return c.Data[b*n : (b+1)*n : (b+1)*n]
}

// At returns voxel (y, x, b).
func (c *Cube) At(y, x, b int) float64 { return c.Data[(b*c.Height+y)*c.Width+x] }

// Set sets voxel (y, x, b) to v.
func (c *Cube) Set(y, x, b int, v float64) { c.Data[(b*c.Height+y)*c.Width+x] = v }

// SameSize reports whether c and o have the same height, width and band count.
func (c *Cube) SameSize(o *Cube) bool {
	return c.Height == o.Height && c.Width == o.Width && c.Bands == o.Bands
}

// Size formats the cube's size as "H×W×B".
func (c *Cube) Size() string { return fmt.Sprintf("%d×%d×%d", c.Height, c.Width, c.Bands) }

// Clone returns a deep copy of c, metadata included.
func (c *Cube) Clone() *Cube {
	return &Cube{Height: c.Height, Width: c.Width, Bands: c.Bands, Data: slices.Clone(c.Data), Metadata: c.Metadata.clone()}
}

// Crop returns a copy of the h×w×bands block of c whose first voxel is
// (y0, x0, b0), with the wavelengths of those bands. It panics if the block
// does not lie inside c.
func (c *Cube) Crop(y0, x0, b0, h, w, bands int) *Cube {
	if y0 < 0 || x0 < 0 || b0 < 0 || h < 1 || w < 1 || bands < 1 || y0+h > c.Height || x0+w > c.Width || b0+bands > c.Bands {
		panic(fmt.Sprintf("msi: crop %d×%d×%d at (%d, %d, %d) of a %s cube", h, w, bands, y0, x0, b0, c.Size()))
	}
	out := NewCube(h, w, bands)
	for b := range bands {
		for y := range h {
			copy(out.Data[(b*h+y)*w:(b*h+y+1)*w], c.Data[((b0+b)*c.Height+y0+y)*c.Width+x0:][:w])
		}
	}
	if c.Wavelengths != nil {
		out.Wavelengths = append([]float64(nil), c.Wavelengths[b0:b0+bands]...)
	}
	return out
}

// Check reports a cube whose fields disagree with each other: a size that
// is not positive, a Data slice of the wrong length, per-band metadata of
// another length than Bands, or a wavelength, FWHM or no-data value that
// is not a finite number. Writers call it before writing anything.
func (c *Cube) Check() error {
	switch {
	case c == nil:
		return errors.New("no cube")
	case c.Height <= 0 || c.Width <= 0 || c.Bands <= 0:
		return fmt.Errorf("bad cube size %s", c.Size())
	case len(c.Data) != c.Height*c.Width*c.Bands:
		return fmt.Errorf("cube of size %s has %d values, want %d", c.Size(), len(c.Data), c.Height*c.Width*c.Bands)
	}
	return c.CheckFor(c.Bands)
}

// CheckFor reports per-band metadata that does not fit a cube of bands
// bands, and a wavelength, FWHM or no-data value that is not finite.
func (m *Metadata) CheckFor(bands int) error {
	switch {
	case m.Wavelengths != nil && len(m.Wavelengths) != bands:
		return fmt.Errorf("cube has %d bands but %d wavelengths", bands, len(m.Wavelengths))
	case m.FWHM != nil && len(m.FWHM) != bands:
		return fmt.Errorf("cube has %d bands but %d FWHM values", bands, len(m.FWHM))
	case m.BandNames != nil && len(m.BandNames) != bands:
		return fmt.Errorf("cube has %d bands but %d band names", bands, len(m.BandNames))
	case m.HasNoData && (math.IsNaN(m.NoData) || math.IsInf(m.NoData, 0)):
		return fmt.Errorf("no-data value %v is not a number", m.NoData)
	}
	for _, wl := range m.Wavelengths {
		if math.IsNaN(wl) || math.IsInf(wl, 0) {
			return fmt.Errorf("wavelength %v is not a number", wl)
		}
	}
	for _, w := range m.FWHM {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("FWHM %v is not a number", w)
		}
	}
	return nil
}
