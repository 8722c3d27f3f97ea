// Package msi holds multispectral image cubes and reads and writes them as
// Columbia-style PNG band stacks, ENVI files, NumPy .npy arrays and MATLAB
// MAT-files (Open, OpenWith and Write choose by the path).
//
// Every cube is on the working intensity scale [0, 255] (float64): 16-bit PNG
// values are scaled by 255/65535 on reading, 8-bit values are taken as they
// are, and written PNGs are clipped to [0, 255] and scaled by 65535/255.
// ENVI values are taken and written as they are. Array files (.npy, .mat)
// are multiplied by a scale on reading, given or chosen by AutoScale from
// the element type and the largest value (reflectance in [0, 1] by 255,
// 16-bit counts by 255/65535, ...), and divided by it on writing, so that
// an output is stored like its input (WriteOptions.Like).
package msi

import "fmt"

// Cube is an H×W×B multispectral image on the [0, 255] scale.
//
// Data is band-sequential: voxel (y, x, b) is Data[(b*Height+y)*Width+x], so
// every band is one contiguous row-major image.
type Cube struct {
	Height, Width, Bands int
	Data                 []float64
	// Wavelengths holds the centre wavelength of every band in nanometres,
	// or is nil when they are not known.
	Wavelengths []float64
	// Description, if not empty, says how the cube was made; ENVI output
	// records it in the header's description after the intensity scale,
	// or, when Header has a description of its own, in a field
	// "tdsc processing" beside it.
	Description string
	// Header holds the fields of an ENVI input's header that describe the
	// scene rather than the data layout (description, wavelength and its
	// units, fwhm, map info, coordinate system string, band names, …), in
	// their order and verbatim, so that ENVI output carries them unchanged.
	// A method's result has none; the command line copies them from the
	// input to the output.
	Header []HeaderField
}

// HeaderField is one "key = value" field of an ENVI header, Key and Value
// as written (a {…} value with its braces and line breaks).
type HeaderField struct{ Key, Value string }

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

// Clone returns a deep copy of c.
func (c *Cube) Clone() *Cube {
	d := &Cube{Height: c.Height, Width: c.Width, Bands: c.Bands, Data: append([]float64(nil), c.Data...), Description: c.Description,
		Header: append([]HeaderField(nil), c.Header...)}
	if c.Wavelengths != nil {
		d.Wavelengths = append([]float64(nil), c.Wavelengths...)
	}
	return d
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
