// Package array holds what the array formats (.npy and .mat) share: the
// axis order of a stored 3-D array, the element types, the scale between
// stored values and the working [0, 255] scale (msi.AutoScale's rule, the
// same for every format), and the copy between a stored array and a
// band-sequential cube. NaN in a float array is a missing voxel.
package array

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
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

// The element types that the array formats read: every real numeric type
// NumPy and MATLAB write (float16 only NumPy, .npy or HDF5 through h5py).
// Booleans (MATLAB's logical) and complex numbers are not among them.
var (
	Float16 = Type{Name: "float16", Size: 2, Float: true}
	Float32 = Type{Name: "float32", Size: 4, Float: true}
	Float64 = Type{Name: "float64", Size: 8, Float: true}
	Int8    = Type{Name: "int8", Size: 1, lo: math.MinInt8, hi: math.MaxInt8}
	Uint8   = Type{Name: "uint8", Size: 1, lo: 0, hi: math.MaxUint8}
	Int16   = Type{Name: "int16", Size: 2, lo: math.MinInt16, hi: math.MaxInt16}
	Uint16  = Type{Name: "uint16", Size: 2, lo: 0, hi: math.MaxUint16}
	Int32   = Type{Name: "int32", Size: 4, lo: math.MinInt32, hi: math.MaxInt32}
	Uint32  = Type{Name: "uint32", Size: 4, lo: 0, hi: math.MaxUint32}
	Int64   = Type{Name: "int64", Size: 8}
	Uint64  = Type{Name: "uint64", Size: 8}
)

// readTypes lists every type that can be read, by kind ('f', 'i', 'u')
// and size.
var readTypes = map[[2]int]Type{
	{'f', 2}: Float16, {'f', 4}: Float32, {'f', 8}: Float64,
	{'i', 1}: Int8, {'i', 2}: Int16, {'i', 4}: Int32, {'i', 8}: Int64,
	{'u', 1}: Uint8, {'u', 2}: Uint16, {'u', 4}: Uint32, {'u', 8}: Uint64,
}

// TypeOf returns the element type of kind 'f' (float), 'i' (signed) or
// 'u' (unsigned integer) of size bytes, and whether it is one that is read.
func TypeOf(kind byte, size int) (Type, bool) {
	t, ok := readTypes[[2]int{int(kind), size}]
	return t, ok
}

// ReadType returns the type that is read whose Name is name, and whether
// there is one.
func ReadType(name string) (Type, bool) {
	for _, t := range readTypes {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}

// ReadTypes lists the names of the types that are read, for messages.
const ReadTypes = "float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64"

// DTypes lists the element types that array output can have, in NumPy's
// spelling (MATLAB's single and double are float32 and float64). float16,
// int64 and uint64 are read but not written: see Writable.
var DTypes = []string{"float32", "float64", "uint16", "uint8", "int16", "int8", "int32", "uint32"}

// Writable returns the DTypes name to store values read as type name in:
// name itself when it is one, else the smallest written type that holds
// every value of name exactly or, for 64-bit integers, as nearly as a
// float64 does (float16: float32; int64, uint64: float64).
func Writable(name string) string {
	switch name {
	case "float16":
		return "float32"
	case "int64", "uint64":
		return "float64"
	}
	return name
}

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
	case "int8":
		return Int8, nil
	case "int32":
		return Int32, nil
	case "uint32":
		return Uint32, nil
	}
	return Type{}, option.Errorf("dtype", name, "element type %q is not one of %s", name, strings.Join(DTypes, ", "))
}

// Squeeze returns the dimensions of a stored array with the dimensions of
// length 1 that lead or trail a shape of more than three dropped, leading
// ones first, until three are left: (1, 31, 512, 512) and (512, 512, 31, 1)
// are 3-D cubes. Dropping a dimension of length 1 changes neither the
// number nor the order of the values, in C or Fortran order. A shape of
// three dimensions or fewer is returned as it is, as is one whose extra
// dimensions are longer than 1 or in the middle.
func Squeeze(dims []int) []int {
	for len(dims) > 3 && dims[0] == 1 {
		dims = dims[1:]
	}
	for len(dims) > 3 && dims[len(dims)-1] == 1 {
		dims = dims[:len(dims)-1]
	}
	return dims
}

// ShapeText formats dimensions as NumPy and h5py print a shape:
// "(4, 5, 3)", "(31,)".
func ShapeText(dims []int) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.Itoa(d)
	}
	if len(dims) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
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
	case kind == 'f' && size == 2:
		return func(b []byte) float64 { return Float16Value(order.Uint16(b)) }
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

// Float16Value returns the value of an IEEE 754 half-precision number
// (NumPy's float16): 1 sign bit, 5 exponent bits biased by 15 and 10
// fraction bits; exponent 0 holds the subnormals (fraction × 2⁻²⁴) and
// exponent 31 infinity (fraction 0) and NaN.
func Float16Value(bits uint16) float64 {
	sign := 1.0
	if bits&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(bits>>10&0x1f), float64(bits&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

// Decode copies the values of raw, laid out as l with size bytes per
// value, into a new cube. firstLine is the cube's first line in the whole
// array, for error messages (0 unless raw holds a window of lines). A NaN
// (possible only when float is set) is a missing voxel and stays NaN; an
// infinite value is an error naming its place, as for ENVI input, and so
// is a float beyond ±msi.MaxMagnitude (read with the wrong byte order).
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
				if float && math.IsInf(v, 0) {
					return nil, fmt.Errorf("value %v at band %d, line %d, sample %d (from 0): infinite values are not supported (NaN marks a missing value)", v, b, firstLine+y, x)
				}
				if float && msi.Implausible(v) {
					return nil, msi.ImplausibleError(v, b, firstLine+y, x)
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
// whole array, for error messages. A NaN (missing) voxel is stored as
// NaN in a float type and as noData, when hasNoData, in an integer type
// (a no-data value read with the input, as it was stored); in an integer
// type without a no-data value it is an error, as is an infinite value
// or one too large for float32. t is one of the types of DTypes.
func Encode(c *msi.Cube, l Layout, t Type, scale float64, firstLine int, noData float64, hasNoData bool) ([]byte, int, error) {
	out := make([]byte, len(c.Data)*t.Size)
	clipped := 0
	for b := range c.Bands {
		band := c.Band(b)
		for y := range c.Height {
			for x, v := range band[y*c.Width : (y+1)*c.Width] {
				s := v / scale
				switch {
				case math.IsInf(s, 0):
					return nil, 0, fmt.Errorf("value %v at band %d, line %d, sample %d (from 0) is not a finite number", v, b, firstLine+y, x)
				case math.IsNaN(v) && !t.Float && !hasNoData:
					return nil, 0, fmt.Errorf("band %d, line %d, sample %d (from 0) is missing (no data), which %s cannot hold without a no-data value: write a float type (--dtype float32)", b, firstLine+y, x, t.Name)
				case math.IsNaN(v) && !t.Float:
					s = noData
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
						dst[0] = byte(int64(r))
					case 2:
						binary.LittleEndian.PutUint16(dst, uint16(int64(r)))
					case 4:
						binary.LittleEndian.PutUint32(dst, uint32(int64(r)))
					}
				}
			}
		}
	}
	return out, clipped, nil
}

// ApplyScale multiplies the cube's values by scale, or, when scale is 0,
// by the factor the element type dtype decides (msi.TypeScale), else by
// msi.AutoScale's for the type and the cube's largest value (missing
// voxels aside), and returns the factor used, the phrase that says how it
// was found and whether it was found from the values.
func ApplyScale(c *msi.Cube, dtype string, scale float64) (float64, string, bool) {
	units, fromData := msi.GivenScale(scale), false
	if scale == 0 {
		scale, units, fromData = AutoScale(dtype, func() float64 { return msi.Largest(c.Data) })
	}
	Scale(c.Data, scale)
	return scale, units, fromData
}

// AutoScale returns the automatic scale of values of element type dtype:
// the type's (msi.TypeScale), else msi.AutoScale's from their largest
// value, which largest returns (called only then); the phrase that says
// how it was found, and whether it was found from the values.
func AutoScale(dtype string, largest func() float64) (scale float64, units string, fromData bool) {
	if s, text, ok := msi.TypeScale(dtype); ok {
		return s, text, false
	}
	t, _ := ReadType(dtype)
	scale, units = msi.AutoScale(t.Float, largest())
	return scale, units, true
}

// Scale multiplies values by scale in place (nothing to do for 1).
func Scale(values []float64, scale float64) {
	if scale != 1 {
		for i := range values {
			values[i] *= scale
		}
	}
}
