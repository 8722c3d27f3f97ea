// Package array holds what the array formats (.npy and .mat) share: the
// axis order of a stored 3-D array, the element types, the scale between
// stored values and the working [0, 255] scale, and the copy between a
// stored array and a band-sequential cube.
package array

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"tdsc/internal/msi"
	"tdsc/internal/option"
)

// DefaultAxes is the axis order of an array file when none is given:
// height, width, bands (the order of MATLAB's size(x) and of NumPy's shape
// for an image stored as cube[y, x, b]).
const DefaultAxes = "HWB"

// ParseAxes checks an axis order: the three letters H (height, image rows),
// W (width, image columns) and B (bands), each once, in the order of the
// stored array's dimensions (NumPy's shape, MATLAB's size), case-insensitive.
// "" means DefaultAxes. It returns the order in upper case, or an
// *option.Error for field "axes".
func ParseAxes(s string) (string, error) {
	if s == "" {
		return DefaultAxes, nil
	}
	u := strings.ToUpper(s)
	if len(u) != 3 || strings.Count(u, "H") != 1 || strings.Count(u, "W") != 1 || strings.Count(u, "B") != 1 {
		return "", option.Errorf("axes", s, "axes %q: want the letters H, W and B once each, in the order of the stored dimensions (such as HWB or BHW)", s)
	}
	return u, nil
}

// Type is an element type of a stored array.
type Type struct {
	Name  string // NumPy's name: "float32", "uint16", ...
	Size  int    // bytes per value
	Float bool
	// lo and hi bound the integer types' values (unused for floats).
	lo, hi float64
}

// The element types that the array formats read and write.
var (
	Float32 = Type{Name: "float32", Size: 4, Float: true}
	Float64 = Type{Name: "float64", Size: 8, Float: true}
	Uint8   = Type{Name: "uint8", Size: 1, lo: 0, hi: math.MaxUint8}
	Uint16  = Type{Name: "uint16", Size: 2, lo: 0, hi: math.MaxUint16}
	Int16   = Type{Name: "int16", Size: 2, lo: math.MinInt16, hi: math.MaxInt16}
)

// DTypes lists the element types that array output can have, in NumPy's
// spelling (MATLAB's single and double are float32 and float64).
var DTypes = []string{"float32", "float64", "uint16", "uint8", "int16"}

// TypeNamed returns the element type of a DTypes name ("" means float32;
// MATLAB's "single" and "double" are accepted too), or an *option.Error
// for field "dtype".
func TypeNamed(name string) (Type, error) {
	switch strings.ToLower(name) {
	case "", "float32", "single":
		return Float32, nil
	case "float64", "double":
		return Float64, nil
	case "uint8":
		return Uint8, nil
	case "uint16":
		return Uint16, nil
	case "int16":
		return Int16, nil
	}
	return Type{}, option.Errorf("dtype", name, "element type %q is not one of %s", name, strings.Join(DTypes, ", "))
}

// Layout says where a stored 3-D array's values are: the cube's size and
// the strides, in values, of a step along each cube axis.
type Layout struct {
	Height, Width, Bands int
	SY, SX, SB           int
}

// Dims returns the dimensions of a height×width×bands cube stored with its
// axes in the order axes (a ParseAxes result).
func Dims(axes string, height, width, bands int) [3]int {
	var dims [3]int
	for k := range 3 {
		switch axes[k] {
		case 'H':
			dims[k] = height
		case 'W':
			dims[k] = width
		case 'B':
			dims[k] = bands
		}
	}
	return dims
}

// NewLayout returns the layout of a 3-D array with dimensions dims (in
// the stored order, which axes names) stored column-major (first index
// fastest) or row-major (last index fastest).
func NewLayout(dims [3]int, axes string, columnMajor bool) Layout {
	var strides [3]int
	if columnMajor {
		strides = [3]int{1, dims[0], dims[0] * dims[1]}
	} else {
		strides = [3]int{dims[1] * dims[2], dims[2], 1}
	}
	var l Layout
	for k := range 3 {
		switch axes[k] {
		case 'H':
			l.Height, l.SY = dims[k], strides[k]
		case 'W':
			l.Width, l.SX = dims[k], strides[k]
		case 'B':
			l.Bands, l.SB = dims[k], strides[k]
		}
	}
	return l
}

// DecodeFunc returns the value of the element at the start of b.
type DecodeFunc func(b []byte) float64

// Decoder returns the DecodeFunc of a stored element kind: 'f' float, 'u'
// unsigned or 'i' signed integer, of size bytes, in byte order order; nil
// if there is none.
func Decoder(kind byte, size int, order binary.ByteOrder) DecodeFunc {
	switch {
	case kind == 'f' && size == 4:
		return func(b []byte) float64 { return float64(math.Float32frombits(order.Uint32(b))) }
	case kind == 'f' && size == 8:
		return func(b []byte) float64 { return math.Float64frombits(order.Uint64(b)) }
	case kind == 'u' && size == 1:
		return func(b []byte) float64 { return float64(b[0]) }
	case kind == 'i' && size == 1:
		return func(b []byte) float64 { return float64(int8(b[0])) }
	case kind == 'u' && size == 2:
		return func(b []byte) float64 { return float64(order.Uint16(b)) }
	case kind == 'i' && size == 2:
		return func(b []byte) float64 { return float64(int16(order.Uint16(b))) }
	case kind == 'u' && size == 4:
		return func(b []byte) float64 { return float64(order.Uint32(b)) }
	case kind == 'i' && size == 4:
		return func(b []byte) float64 { return float64(int32(order.Uint32(b))) }
	case kind == 'u' && size == 8:
		return func(b []byte) float64 { return float64(order.Uint64(b)) }
	case kind == 'i' && size == 8:
		return func(b []byte) float64 { return float64(int64(order.Uint64(b))) }
	}
	return nil
}

// Decode copies the values of raw, laid out as l with size bytes per
// value, into a new cube. firstLine is the cube's first line in the whole
// array, for error messages (0 unless raw holds a window of lines). A NaN
// or infinite value (possible only when float is set) is an error naming
// its place, as for ENVI input.
func Decode(raw []byte, l Layout, size int, float bool, value DecodeFunc, firstLine int) (*msi.Cube, error) {
	c := msi.NewCube(l.Height, l.Width, l.Bands)
	for b := range l.Bands {
		band := c.Band(b)
		for y := range l.Height {
			row := band[y*l.Width : (y+1)*l.Width]
			src := b*l.SB + y*l.SY
			for x := range row {
				off := (src + x*l.SX) * size
				v := value(raw[off : off+size])
				if float && (math.IsNaN(v) || math.IsInf(v, 0)) {
					return nil, fmt.Errorf("value %v at band %d, line %d, sample %d (from 0): NaN and infinite values are not supported", v, b, firstLine+y, x)
				}
				row[x] = v
			}
		}
	}
	return c, nil
}

// Encode returns the values of c divided by scale as elements of type t,
// little-endian, laid out as l, and the number of values that an integer
// type had to clip to its range (after rounding to the nearest whole
// number, halves away from zero). firstLine is c's first line in the
// whole array, for error messages. A NaN or infinite value, or one too
// large for float32, is an error naming its place.
func Encode(c *msi.Cube, l Layout, t Type, scale float64, firstLine int) ([]byte, int, error) {
	out := make([]byte, len(c.Data)*t.Size)
	clipped := 0
	for b := range c.Bands {
		band := c.Band(b)
		for y := range c.Height {
			for x, v := range band[y*c.Width : (y+1)*c.Width] {
				s := v / scale
				if math.IsNaN(s) || math.IsInf(s, 0) {
					return nil, 0, fmt.Errorf("value %v at band %d, line %d, sample %d (from 0) is not a finite number", v, b, firstLine+y, x)
				}
				off := (b*l.SB + y*l.SY + x*l.SX) * t.Size
				dst := out[off : off+t.Size]
				switch t {
				case Float64:
					binary.LittleEndian.PutUint64(dst, math.Float64bits(s))
				case Float32:
					f := float32(s)
					if math.IsInf(float64(f), 0) {
						return nil, 0, fmt.Errorf("value %v at band %d, line %d, sample %d (from 0) cannot be stored as float32", v, b, firstLine+y, x)
					}
					binary.LittleEndian.PutUint32(dst, math.Float32bits(f))
				default:
					r := math.Round(s)
					if r < t.lo || r > t.hi {
						r = math.Max(t.lo, math.Min(t.hi, r))
						clipped++
					}
					switch t.Size {
					case 1:
						dst[0] = byte(r)
					case 2:
						binary.LittleEndian.PutUint16(dst, uint16(int64(r)))
					}
				}
			}
		}
	}
	return out, clipped, nil
}

// AutoScale returns the factor that brings stored values of element type
// dtype (a DTypes name) whose largest value is maxValue to the working
// [0, 255] scale (working = stored × factor):
//
//   - float32 or float64 with maxValue ≤ 2: 255. This is reflectance or
//     intensity in [0, 1]; the margin keeps noisy data and specular
//     highlights, which exceed 1 a little, on the same scale as the clean
//     cube (a cube on the [0, 255] scale whose brightest value is 2 would
//     be almost black);
//   - float32 or float64 with a larger maxValue: 1. Float data beyond
//     [0, 2] is taken to be on the working scale already: that is how tdsc
//     writes float arrays made from PNG or ENVI inputs, and noisy [0, 255]
//     data exceeds 255 (raw float counts need an explicit scale);
//   - an integer type with maxValue ≤ 255 (uint8 always): 1, the values
//     are taken as they are;
//   - otherwise the values are taken to be counts of an n-bit sensor,
//     with n the smallest whole number such that maxValue ≤ 2ⁿ − 1: the
//     factor is 255/(2ⁿ − 1). So uint16 data from a 12-bit camera (largest
//     value up to 4095) gets 255/4095, full-range 16-bit data 255/65535.
//
// The rule depends on the largest value only, so a dark 16-bit image (none
// of its values over 255) is taken as it is; say the scale explicitly for
// such data.
func AutoScale(dtype string, maxValue float64) float64 {
	float := dtype == "float32" || dtype == "float64"
	switch {
	case float && maxValue <= 2:
		return 255
	case float, maxValue <= 255:
		return 1
	}
	bits := math.Ceil(math.Log2(maxValue + 1))
	full := math.Exp2(bits) - 1
	if full < maxValue { // guard against rounding in Log2
		full = math.Exp2(bits+1) - 1
	}
	return 255 / full
}

// ApplyScale multiplies the cube's values by scale, or, when scale is 0,
// by AutoScale's factor for dtype and the cube's largest value, and
// returns the factor used.
func ApplyScale(c *msi.Cube, dtype string, scale float64) float64 {
	if scale == 0 {
		scale = AutoScale(dtype, largest(c.Data))
	}
	Scale(c.Data, scale)
	return scale
}

// largest returns the largest of values, −Inf for none.
func largest(values []float64) float64 {
	m := math.Inf(-1)
	for _, v := range values {
		m = math.Max(m, v)
	}
	return m
}

// Scale multiplies values by scale in place (nothing to do for 1).
func Scale(values []float64, scale float64) {
	if scale != 1 {
		for i := range values {
			values[i] *= scale
		}
	}
}
