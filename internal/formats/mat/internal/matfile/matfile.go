// Package matfile reads and writes the numeric arrays of MATLAB MAT-files:
// level-5 files, the format of MATLAB's save with -v6 or -v7 (v7, the
// compressed variant, is MATLAB's default) and of scipy.io.savemat, and,
// reading only, v7.3 files (HDF5, save -v7.3, needed for variables of 2 GB
// or more).
//
// A level-5 file is a 128-byte header — 116 bytes of descriptive text, an
// 8-byte subsystem data offset, a 2-byte version (0x0100) and a 2-byte
// endian indicator, "IM" when the file was written little-endian and "MI"
// when big-endian — followed by data elements. Every element starts with an
// 8-byte tag: its data type and its length in bytes (two 4-byte numbers in
// the file's byte order), then the data, padded to a multiple of 8 bytes. A
// tag whose first 4 bytes have a non-zero upper half is the "small element"
// form: the type in the low 2 bytes, the length (at most 4) in the high 2,
// and the data in the tag's second 4 bytes.
//
// Each variable is a top-level miMATRIX element, or an miCOMPRESSED element
// (v7) whose data is a zlib stream holding one miMATRIX element (compressed
// elements are not padded). An miMATRIX holds sub-elements: the array flags
// (class, and the complex, global and logical bits), the dimensions, the
// name, and for a numeric class the real part and, if complex, the
// imaginary part. The values may be stored in a smaller type than the
// class (MATLAB stores a double array of small whole numbers as miUINT8,
// for example); readers convert. Values are in column-major order: the
// first dimension varies fastest.
//
// MATLAB v7.3 files are HDF5 files behind a 512-byte header of the same
// shape; Parse reads the variables of those too, and of plain HDF5 files
// without the header (as h5py writes them, named .mat), for the subset of
// HDF5 that MATLAB and h5py write for numeric arrays (see v73.go and
// package hdf5), and
// returns an *UnsupportedError that names what is missing for anything
// else.
//
// Reference: MathWorks, "MAT-File Format" (matfile_format.pdf).
package matfile

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"tdsc/internal/formats/internal/hdf5"
)

// DataType is the type of a data element (the miXXX constants of the
// format).
type DataType uint32

// The data types of the format.
const (
	MIInt8       DataType = 1
	MIUint8      DataType = 2
	MIInt16      DataType = 3
	MIUint16     DataType = 4
	MIInt32      DataType = 5
	MIUint32     DataType = 6
	MISingle     DataType = 7
	MIDouble     DataType = 9
	MIInt64      DataType = 12
	MIUint64     DataType = 13
	MIMatrix     DataType = 14
	MICompressed DataType = 15
	MIUTF8       DataType = 16
	MIUTF16      DataType = 17
	MIUTF32      DataType = 18

	// MIHalf is not a level-5 type: it is the Type File.Load gives the
	// values of a v7.3 (HDF5) dataset of IEEE half-precision numbers,
	// which NumPy writes (float16, through h5py) and MATLAB cannot. A
	// level-5 element of this type is not numeric.
	MIHalf DataType = 0x10000
)

// Size returns the size in bytes of one value of a numeric data type, or 0
// for the other types.
func (t DataType) Size() int {
	switch t {
	case MIInt8, MIUint8:
		return 1
	case MIInt16, MIUint16:
		return 2
	case MIInt32, MIUint32, MISingle:
		return 4
	case MIDouble, MIInt64, MIUint64:
		return 8
	}
	return 0
}

// ValueSize returns the size in bytes of one value of the data type a
// loaded variable's values are in (Var.Type): Size, and 2 for MIHalf.
func (t DataType) ValueSize() int {
	if t == MIHalf {
		return 2
	}
	return t.Size()
}

// Class is the class of a MATLAB array (the mxXXX_CLASS constants).
type Class uint8

// The array classes of the format.
const (
	ClassCell   Class = 1
	ClassStruct Class = 2
	ClassObject Class = 3
	ClassChar   Class = 4
	ClassSparse Class = 5
	ClassDouble Class = 6
	ClassSingle Class = 7
	ClassInt8   Class = 8
	ClassUint8  Class = 9
	ClassInt16  Class = 10
	ClassUint16 Class = 11
	ClassInt32  Class = 12
	ClassUint32 Class = 13
	ClassInt64  Class = 14
	ClassUint64 Class = 15
)

var classNames = map[Class]string{
	ClassCell: "cell", ClassStruct: "struct", ClassObject: "object", ClassChar: "char",
	ClassSparse: "sparse", ClassDouble: "double", ClassSingle: "single", ClassInt8: "int8",
	ClassUint8: "uint8", ClassInt16: "int16", ClassUint16: "uint16", ClassInt32: "int32",
	ClassUint32: "uint32", ClassInt64: "int64", ClassUint64: "uint64",
}

// String returns the class's MATLAB name, such as "double".
func (c Class) String() string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return fmt.Sprintf("class %d", uint8(c))
}

// Numeric reports whether arrays of class c hold plain numbers.
func (c Class) Numeric() bool { return c >= ClassDouble && c <= ClassUint64 }

// Var is one variable of a file.
type Var struct {
	Name  string
	Class Class
	// Complex and Logical are the array flags of the same names.
	Complex, Logical bool
	// Half is set for a v7.3 dataset of half-precision numbers (NumPy's
	// float16, through h5py), which has no MATLAB class: its Class is
	// single and File.Load gives its values as MIHalf.
	Half bool
	// Dims are the dimensions as MATLAB reports them (size(x)); at least 2.
	Dims []int
	// Type is the data type the real part is stored in (MIHalf for a
	// Half variable), and Data its bytes in the file's byte order,
	// column-major. Both are set by
	// File.Load only, and only for numeric classes.
	Type DataType
	Data []byte

	// where the variable's element is in the file
	start, length int
	compressed    bool
	// the dataset of a v7.3 file
	h5 *hdf5.Dataset
}

// Shape formats the dimensions as "4×5×3".
func (v *Var) Shape() string {
	parts := make([]string, len(v.Dims))
	for i, d := range v.Dims {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, "×")
}

// Describe returns the variable's name, shape and class, as in
// "cube (4×5×3 double)".
func (v *Var) Describe() string {
	kind := v.Class.String()
	if v.Complex {
		kind = "complex " + kind
	}
	if v.Logical {
		kind = "logical"
	}
	if v.Half {
		kind = "half"
	}
	return fmt.Sprintf("%s (%s %s)", v.Name, v.Shape(), kind)
}

// File is a parsed level-5 MAT-file: its byte order and the headers of its
// variables.
type File struct {
	Order binary.ByteOrder
	// Text is the descriptive text of the header, trailing spaces and
	// NULs removed.
	Text string
	// Vars lists the variables in file order, without their data (see
	// Load).
	Vars []*Var
	// V73 is set for a MATLAB v7.3 (HDF5) file.
	V73  bool
	data []byte
	h5   *hdf5.File
}

// UnsupportedError reports a MAT-file that uses a feature this package does
// not read.
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return e.Msg }

// HeaderSize is the size of a level-5 file's header.
const HeaderSize = 128

// hdf5Signature starts the HDF5 part of a v7.3 file, at offset 512, or
// a plain HDF5 file (written by h5py), at offset 0.
const hdf5Signature = hdf5.Signature

// Parse parses the header of the MAT-file held in data and the header of
// every variable (flags, dimensions, name). Compressed variables are
// decompressed only as far as their headers. File.Load reads a variable's
// values. Errors say what is wrong without naming a file.
func Parse(data []byte) (*File, error) {
	if len(data) >= v73Offset+len(hdf5Signature) && string(data[v73Offset:v73Offset+len(hdf5Signature)]) == hdf5Signature {
		f, err := parseHDF5(data, v73Offset)
		if err != nil {
			return nil, &UnsupportedError{Msg: fmt.Sprintf("MATLAB v7.3 (HDF5) MAT-file: %v; if MATLAB wrote it, re-saving it as a v7 file (save(file, var, '-v7')) avoids the problem", err)}
		}
		f.V73 = true
		f.Text = strings.TrimRight(string(data[:116]), " \x00")
		return f, nil
	}
	if strings.HasPrefix(string(data), hdf5Signature) {
		// An HDF5 file without MATLAB's header block, as h5py writes one:
		// read as a v7.3 file.
		f, err := parseHDF5(data, 0)
		if err != nil {
			return nil, &UnsupportedError{Msg: fmt.Sprintf("HDF5 file without MATLAB's header (as h5py writes): %v", err)}
		}
		f.V73 = true
		return f, nil
	}
	if len(data) < HeaderSize {
		if len(data) >= 6 && string(data[:6]) != "MATLAB" {
			return nil, errors.New(`not a MAT-file: it does not start with "MATLAB"`)
		}
		return nil, fmt.Errorf("truncated: %d bytes, shorter than the %d-byte MAT-file header", len(data), HeaderSize)
	}
	f := &File{data: data}
	switch string(data[126:128]) {
	case "IM":
		f.Order = binary.LittleEndian
	case "MI":
		f.Order = binary.BigEndian
	default:
		if string(data[:6]) != "MATLAB" {
			return nil, errors.New(`not a MAT-file: it does not start with "MATLAB" (level-4 MAT-files are not supported)`)
		}
		return nil, fmt.Errorf("bad MAT-file header: endian indicator %q is neither \"IM\" nor \"MI\"", data[126:128])
	}
	switch v := f.Order.Uint16(data[124:126]); v {
	case 0x0100:
	case 0x0200:
		return nil, errors.New("truncated: a MATLAB v7.3 MAT-file header without its HDF5 part at offset 512")
	default:
		return nil, fmt.Errorf("unsupported MAT-file version 0x%04x (want 0x0100, level 5)", v)
	}
	f.Text = strings.TrimRight(string(data[:116]), " \x00")
	for pos := HeaderSize; pos < len(data); {
		if len(data)-pos < 8 {
			return nil, fmt.Errorf("truncated: %d stray bytes at offset %d, too few for a data element", len(data)-pos, pos)
		}
		typ, n, small := tag(data[pos:], f.Order)
		if small != nil {
			pos += 8 // a small element at the top level is not a variable
			continue
		}
		start := pos + 8
		if n > len(data)-start {
			return nil, fmt.Errorf("truncated: the element at offset %d says it holds %d bytes, only %d follow", pos, n, len(data)-start)
		}
		next := start + n
		switch typ {
		case MIMatrix:
			v, err := f.header(bytes.NewReader(data[start:next]), false)
			if err != nil {
				return nil, fmt.Errorf("variable at offset %d: %v", pos, err)
			}
			v.start, v.length = start, n
			f.Vars = append(f.Vars, v)
			next = pad8(next)
		case MICompressed:
			v, err := f.compressedHeader(data[start:next])
			if err != nil {
				return nil, fmt.Errorf("compressed variable at offset %d: %v", pos, err)
			}
			v.start, v.length, v.compressed = start, n, true
			f.Vars = append(f.Vars, v)
		default:
			next = pad8(next) // not a variable: skipped
		}
		pos = min(next, len(data))
	}
	return f, nil
}

// pad8 rounds n up to a multiple of 8.
func pad8(n int) int { return (n + 7) &^ 7 }

// tag decodes the 8-byte tag at the start of b: the data type, the number of
// bytes of data and, for a small element, its data (nil otherwise).
func tag(b []byte, order binary.ByteOrder) (DataType, int, []byte) {
	first := order.Uint32(b)
	if first>>16 != 0 {
		n := int(first >> 16)
		return DataType(first & 0xffff), n, b[4 : 4+min(n, 4)]
	}
	return DataType(first), int(order.Uint32(b[4:])), nil
}

// compressedHeader reads the header of the variable inside a compressed
// element.
func (f *File) compressedHeader(z []byte) (*Var, error) {
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("bad zlib stream: %v", err)
	}
	defer zr.Close()
	return f.inner(bufio.NewReader(zr), false)
}

// inner reads the miMATRIX tag at the start of a decompressed stream and
// then the variable (with its data when withData is set).
func (f *File) inner(r io.Reader, withData bool) (*Var, error) {
	var t [8]byte
	if _, err := io.ReadFull(r, t[:]); err != nil {
		return nil, fmt.Errorf("compressed data too short for an element tag: %v", err)
	}
	typ, n, small := tag(t[:], f.Order)
	if small != nil || typ != MIMatrix {
		return nil, fmt.Errorf("compressed element holds data type %d, want miMATRIX (14)", typ)
	}
	return f.header(io.LimitReader(r, int64(n)), withData)
}

// element reads one sub-element from r: its type and data (padding
// skipped). Data longer than limit bytes is not read into memory, and is an
// error.
func (f *File) element(r io.Reader, what string, limit int) (DataType, []byte, error) {
	var t [8]byte
	if _, err := io.ReadFull(r, t[:]); err != nil {
		return 0, nil, fmt.Errorf("truncated before the %s", what)
	}
	typ, n, small := tag(t[:], f.Order)
	if small != nil {
		return typ, small, nil
	}
	if n > limit {
		return 0, nil, fmt.Errorf("the %s claims %d bytes (at most %d expected)", what, n, limit)
	}
	buf, err := io.ReadAll(io.LimitReader(r, int64(pad8(n))))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the %s: %v", what, err)
	}
	if len(buf) < n {
		return 0, nil, fmt.Errorf("truncated in the %s: %d of %d bytes", what, len(buf), n)
	}
	return typ, buf[:n], nil
}

// maxDims bounds the number of dimensions of an array.
const maxDims = 64

// header reads a variable's flags, dimensions and name from r, the data of
// its miMATRIX element, and, when withData is set and the class is numeric,
// its real part.
func (f *File) header(r io.Reader, withData bool) (*Var, error) {
	typ, flags, err := f.element(r, "array flags", 8)
	if err != nil {
		return nil, err
	}
	if typ != MIUint32 || len(flags) != 8 {
		return nil, fmt.Errorf("array flags are data type %d of %d bytes, want miUINT32 (6) of 8", typ, len(flags))
	}
	word := f.Order.Uint32(flags)
	v := &Var{Class: Class(word & 0xff), Complex: word&0x800 != 0, Logical: word&0x200 != 0}
	typ, dims, err := f.element(r, "dimensions", 4*maxDims)
	if err != nil {
		return nil, err
	}
	if typ != MIInt32 || len(dims)%4 != 0 || len(dims) < 8 {
		return nil, fmt.Errorf("dimensions are data type %d of %d bytes, want at least two miINT32 (5)", typ, len(dims))
	}
	for i := 0; i < len(dims); i += 4 {
		d := int32(f.Order.Uint32(dims[i:]))
		if d < 0 {
			return nil, fmt.Errorf("negative dimension %d", d)
		}
		v.Dims = append(v.Dims, int(d))
	}
	typ, name, err := f.element(r, "array name", 1<<12)
	if err != nil {
		return nil, err
	}
	if typ != MIInt8 && typ != MIUint8 && typ != MIUTF8 {
		return nil, fmt.Errorf("array name is data type %d, want miINT8 (1)", typ)
	}
	v.Name = string(name)
	if !withData || !v.Class.Numeric() {
		return v, nil
	}
	if v.Class == ClassSparse || v.Complex {
		return v, nil
	}
	count, ok := v.count()
	if !ok {
		return nil, fmt.Errorf("variable %s: dimensions %s are too large", v.Name, v.Shape())
	}
	typ, re, err := f.element(r, "real part of "+v.Name, count*8)
	if err != nil {
		return nil, err
	}
	size := typ.Size() // 0 for MIHalf too: not a level-5 type
	if size == 0 {
		return nil, fmt.Errorf("variable %s: real part is data type %d, not a numeric type", v.Name, typ)
	}
	if len(re) != count*size {
		return nil, fmt.Errorf("variable %s: real part has %d bytes, but %s values of %d bytes need %d", v.Name, len(re), v.Shape(), size, count*size)
	}
	v.Type, v.Data = typ, re
	return v, nil
}

// count returns the number of values of v and whether it, times 8, fits in
// an int.
func (v *Var) count() (int, bool) {
	n := 1
	for _, d := range v.Dims {
		if d != 0 && n > math.MaxInt/8/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// Load returns v (one of f.Vars) with its values read: Type and Data set.
// Only real numeric arrays have values; for others Load is an error saying
// what the variable is.
func (f *File) Load(v *Var) (*Var, error) {
	switch {
	case !v.Class.Numeric():
		return nil, fmt.Errorf("variable %s is a %s array, not a numeric one", v.Name, v.Class)
	case v.Complex:
		return nil, fmt.Errorf("variable %s is complex; only real arrays are supported", v.Name)
	}
	var (
		w   *Var
		err error
	)
	if v.h5 != nil {
		return f.load(v)
	}
	if v.compressed {
		zr, zerr := zlib.NewReader(bytes.NewReader(f.data[v.start : v.start+v.length]))
		if zerr != nil {
			return nil, fmt.Errorf("variable %s: bad zlib stream: %v", v.Name, zerr)
		}
		defer zr.Close()
		w, err = f.inner(bufio.NewReader(zr), true)
	} else {
		w, err = f.header(bytes.NewReader(f.data[v.start:v.start+v.length]), true)
	}
	if err != nil {
		return nil, err
	}
	w.start, w.length, w.compressed = v.start, v.length, v.compressed
	return w, nil
}

// Writer writes a level-5 MAT-file, little-endian and uncompressed, one
// variable at a time.
type Writer struct {
	w   io.Writer
	err error
}

// NewWriter writes the 128-byte header, with text (at most 116 bytes, padded
// with spaces) as its descriptive text, and returns a Writer for the
// variables.
func NewWriter(w io.Writer, text string) (*Writer, error) {
	if len(text) > 116 {
		text = text[:116]
	}
	hdr := make([]byte, 0, HeaderSize)
	hdr = append(hdr, text...)
	hdr = append(hdr, bytes.Repeat([]byte(" "), 116-len(text))...)
	hdr = append(hdr, make([]byte, 8)...) // no subsystem data
	hdr = binary.LittleEndian.AppendUint16(hdr, 0x0100)
	hdr = append(hdr, 'I', 'M')
	_, err := w.Write(hdr)
	return &Writer{w: w}, err
}

// classType returns the data type that stores values of class c as they
// are.
func classType(c Class) DataType {
	switch c {
	case ClassDouble:
		return MIDouble
	case ClassSingle:
		return MISingle
	case ClassInt8:
		return MIInt8
	case ClassUint8:
		return MIUint8
	case ClassInt16:
		return MIInt16
	case ClassUint16:
		return MIUint16
	case ClassInt32:
		return MIInt32
	case ClassUint32:
		return MIUint32
	case ClassInt64:
		return MIInt64
	case ClassUint64:
		return MIUint64
	}
	return 0
}

// ValidName reports whether name can be a MATLAB variable name: a letter
// followed by up to 62 letters, digits and underscores.
func ValidName(name string) bool {
	if name == "" || len(name) > 63 {
		return false
	}
	for i, c := range name {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || c != '_' && (c < '0' || c > '9')) {
			return false
		}
	}
	return true
}

// maxElement is the largest element a level-5 file can hold: the length
// field is 32 bits, and MATLAB refuses variables of 2 GB or more in v7 files.
const maxElement = math.MaxInt32 - 1024

// MaxVariableBytes is the largest number of bytes of values a variable of
// a level-5 file can hold, with room for its name and dimensions.
const MaxVariableBytes = maxElement - 256

// WriteVar writes a real numeric variable: data holds its values of class
// class, little-endian, column-major for the dimensions dims (at least
// two).
func (w *Writer) WriteVar(name string, class Class, dims []int, data []byte) error {
	if w.err != nil {
		return w.err
	}
	typ := classType(class)
	if typ == 0 {
		return fmt.Errorf("class %s is not numeric", class)
	}
	if !ValidName(name) {
		return fmt.Errorf("%q is not a MATLAB variable name (a letter, then letters, digits or underscores, at most 63)", name)
	}
	if len(dims) < 2 {
		return fmt.Errorf("variable %s needs at least two dimensions", name)
	}
	n := 1
	for _, d := range dims {
		if d < 0 || d > math.MaxInt32 {
			return fmt.Errorf("variable %s: bad dimension %d", name, d)
		}
		n *= d
	}
	if n*typ.Size() != len(data) {
		return fmt.Errorf("variable %s: %d bytes of data for %d values of %d bytes", name, len(data), n, typ.Size())
	}
	var body []byte
	body = appendElement(body, MIUint32, binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(class)), 0))
	var d []byte
	for _, x := range dims {
		d = binary.LittleEndian.AppendUint32(d, uint32(x))
	}
	body = appendElement(body, MIInt32, d)
	body = appendElement(body, MIInt8, []byte(name))
	// The real part's tag; its data is written straight from data.
	body = binary.LittleEndian.AppendUint32(body, uint32(typ))
	body = binary.LittleEndian.AppendUint32(body, uint32(len(data)))
	total := len(body) + pad8(len(data))
	if total > maxElement {
		return fmt.Errorf("variable %s: %d bytes is too large for a level-5 MAT-file (limit 2 GB)", name, total)
	}
	var t []byte
	t = binary.LittleEndian.AppendUint32(t, uint32(MIMatrix))
	t = binary.LittleEndian.AppendUint32(t, uint32(total))
	for _, b := range [][]byte{t, body, data, make([]byte, pad8(len(data))-len(data))} {
		if _, err := w.w.Write(b); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// appendElement appends a full-size element (tag, data, padding) to b.
func appendElement(b []byte, typ DataType, data []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(typ))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	return append(b, make([]byte, pad8(len(data))-len(data))...)
}
