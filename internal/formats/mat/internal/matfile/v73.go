package matfile

// MATLAB v7.3 MAT-files are HDF5 files whose first 512 bytes (HDF5's "user
// block") hold a MAT-file header; h5py writes the same without the header.
// Package hdf5 reads the file; this file maps the root group's members to
// variables: a dataset is an array whose class is given by its
// MATLAB_class attribute ("double", "logical", "char", ...) or, without it
// (h5py), follows the element type, an enumeration being h5py's bool
// (logical) and a compound one of two floats its complex numbers; a group
// is a struct.
//
// HDF5 stores arrays in C order, and MATLAB writes its column-major arrays
// as they are, so HDF5 (and h5py) sees MATLAB's dimensions reversed: an
// H×W×B cube is a (B, W, H) dataset. The reader reverses them back, so a
// Var's Dims and Data mean the same as for a level-5 file.

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"tdsc/internal/formats/internal/hdf5"
)

// v73Offset is where the HDF5 superblock of a v7.3 MAT-file is.
const v73Offset = 512

// parseHDF5 reads the variables of a v7.3 MAT-file whose superblock is at
// offset at: 512 behind MATLAB's header, 0 in a plain HDF5 file.
func parseHDF5(data []byte, at uint64) (*File, error) {
	h, err := hdf5.Parse(data, at)
	if err != nil {
		return nil, err
	}
	members, err := h.Members(h.Root())
	if err != nil {
		return nil, err
	}
	file := &File{Order: binary.LittleEndian, Text: "", data: data, h5: h}
	for _, m := range members {
		if strings.HasPrefix(m.Name, "#") { // #refs#, #subsystem#: MATLAB's own
			continue
		}
		o, err := h.Object(m)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %v", m.Name, err)
		}
		v, err := variable(m.Name, o)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %v", m.Name, err)
		}
		file.Vars = append(file.Vars, v)
	}
	return file, nil
}

// matlabClasses maps MATLAB_class attribute values to classes.
var matlabClasses = map[string]Class{
	"double": ClassDouble, "single": ClassSingle, "int8": ClassInt8, "uint8": ClassUint8,
	"int16": ClassInt16, "uint16": ClassUint16, "int32": ClassInt32, "uint32": ClassUint32,
	"int64": ClassInt64, "uint64": ClassUint64, "char": ClassChar, "cell": ClassCell,
	"struct": ClassStruct, "logical": ClassUint8,
}

// variable describes an object as a MAT-file variable.
func variable(name string, o *hdf5.Object) (*Var, error) {
	v := &Var{Name: name}
	matlabClass := o.Attributes["MATLAB_class"]
	d := o.Dataset
	if d == nil {
		// A group: a struct (or an object MATLAB stores as one).
		v.Class, v.Dims = ClassStruct, []int{1, 1}
		if c, ok := matlabClasses[matlabClass]; ok {
			v.Class = c
		}
		return v, nil
	}
	// The dims reversed are MATLAB's.
	v.Dims = make([]int, max(len(d.Dims), 2))
	for i := range v.Dims {
		v.Dims[i] = 1
	}
	for i, x := range d.Dims {
		if x > math.MaxInt32 {
			return nil, fmt.Errorf("dimension %d is too large", x)
		}
		v.Dims[len(d.Dims)-1-i] = int(x)
	}
	if len(d.Dims) == 1 {
		v.Dims[0], v.Dims[1] = v.Dims[1], v.Dims[0] // a vector: 1×n
	}
	if _, empty := o.Attributes["MATLAB_empty"]; empty {
		v.Dims = []int{0, 0}
	}
	cls, ok := matlabClasses[matlabClass]
	switch {
	case ok:
		v.Class = cls
		v.Logical = matlabClass == "logical"
	case matlabClass != "":
		v.Class = ClassObject
	case d.Class == hdf5.ClassEnum: // h5py's bool, an enumeration {FALSE, TRUE}
		v.Class, v.Logical = ClassUint8, true
	case d.Class == hdf5.ClassCompound: // h5py's complex numbers, {r, i}
		v.Class = classOfElement('f', d.ElemSize/2)
		if !v.Class.Numeric() {
			v.Class = ClassStruct
		}
	default: // no attribute (written by h5py): by the element type
		v.Class = classOfElement(d.Kind, d.ElemSize)
	}
	if d.Class == hdf5.ClassCompound && v.Class.Numeric() { // {real, imag}
		v.Complex = true
	}
	v.Half = d.Kind == 'f' && d.ElemSize == 2
	if v.Class.Numeric() && !v.Complex && !v.Logical && classOfElement(d.Kind, d.ElemSize) == 0 {
		return nil, fmt.Errorf("class %s stored as HDF5 datatype class %d of %d bytes: not a plain number", v.Class, d.Class, d.ElemSize)
	}
	v.h5 = d
	return v, nil
}

// classOfElement returns the class whose values are elements of the given
// kind and size, or 0. Half-precision floats, which have no class, are
// single.
func classOfElement(kind byte, size int) Class {
	switch {
	case kind == 'f' && size == 2:
		return ClassSingle
	case kind == 'f' && size == 8:
		return ClassDouble
	case kind == 'f' && size == 4:
		return ClassSingle
	case kind == 'u' && size == 1:
		return ClassUint8
	case kind == 'i' && size == 1:
		return ClassInt8
	case kind == 'u' && size == 2:
		return ClassUint16
	case kind == 'i' && size == 2:
		return ClassInt16
	case kind == 'u' && size == 4:
		return ClassUint32
	case kind == 'i' && size == 4:
		return ClassInt32
	case kind == 'u' && size == 8:
		return ClassUint64
	case kind == 'i' && size == 8:
		return ClassInt64
	}
	return 0
}

// load reads the values of a v7.3 variable: little-endian, in HDF5's C
// order (MATLAB's column-major order).
func (f *File) load(v *Var) (*Var, error) {
	d := v.h5
	t := miType(d.Kind, d.ElemSize)
	if t == 0 {
		return nil, fmt.Errorf("variable %s: HDF5 elements of %d bytes that are not plain numbers", v.Name, d.ElemSize)
	}
	if d.Unsupported != "" {
		return nil, fmt.Errorf("variable %s: %s; re-saving the file as v7 avoids the problem", v.Name, d.Unsupported)
	}
	if _, ok := d.Count(); !ok {
		return nil, fmt.Errorf("variable %s: %s is too large", v.Name, v.Shape())
	}
	data, err := f.h5.Read(d)
	if err != nil {
		return nil, fmt.Errorf("variable %s: %v", v.Name, err)
	}
	w := *v
	w.Type = t
	w.Data = data
	return &w, nil
}

// miType returns the level-5 data type of elements of a kind and size
// (MIHalf for half-precision floats).
func miType(kind byte, size int) DataType {
	if kind == 'f' && size == 2 {
		return MIHalf
	}
	switch classOfElement(kind, size) {
	case ClassDouble:
		return MIDouble
	case ClassSingle:
		return MISingle
	case ClassUint8:
		return MIUint8
	case ClassInt8:
		return MIInt8
	case ClassUint16:
		return MIUint16
	case ClassInt16:
		return MIInt16
	case ClassUint32:
		return MIUint32
	case ClassInt32:
		return MIInt32
	case ClassUint64:
		return MIUint64
	case ClassInt64:
		return MIInt64
	}
	return 0
}
