// Package mat reads and writes cubes as MATLAB MAT-files: level 5 (MATLAB
// -v6/-v7, scipy.io.savemat; compressed or not, either byte order) for
// reading and writing, and v7.3 (HDF5, as MATLAB and h5py write it, with
// or without MATLAB's 512-byte header block: contiguous, compact, or
// chunked with deflate, shuffle and fletcher32) for reading. Package matfile under it parses and writes the files; this
// package maps their variables to cubes.
//
// A path is FILE.mat or FILE.mat:VAR. Reading takes variable VAR, or,
// without it, the file's one 3-D numeric variable (with several, the error
// lists them with their shapes), of any numeric class (double, single,
// int8 to int64, uint8 to uint64, and HDF5's half precision, which h5py
// writes for NumPy's float16; logical and complex arrays are refused),
// 3-D once the leading or trailing dimensions of length 1 of a longer
// array are dropped (array.Squeeze); a variable named "wavelengths" with
// one value per band gives the wavelengths (nm). Writing stores the cube as variable VAR, or the name
// of the variable the input was read from (carried in Metadata.Fields), or
// "cube", and the wavelengths, if known, as a 1×B double variable
// "wavelengths"; the file is written whole, uncompressed, little-endian
// (other variables of an existing file are not kept). Values are scaled
// as in package npy.
//
// Axis order: MATLAB reports an image cube's size as [H W B] and stores it
// column-major (the first index varies fastest), so its bytes are those of
// a NumPy array of shape (B, W, H) in C order. scipy.io.loadmat undoes
// this and returns shape (H, W, B), as does scipy.io.savemat when given
// such an array: both sides see HWB, the default axes. h5py reading a v7.3
// file, which is HDF5, sees the dimensions reversed, (B, W, H); a cube
// written with h5py as (B, W, H) is H×W×B to MATLAB and to this package,
// which reverses HDF5's dimensions as MATLAB does. So the axes option
// always names MATLAB's dimensions (size(x)), whichever tool wrote the
// file: for a dataset h5py shows as (B, H, W), give "WHB".
package mat

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"tdsc/internal/atomicfile"
	"tdsc/internal/formats/array"
	"tdsc/internal/formats/mat/internal/matfile"
	"tdsc/internal/msi"
)

// name is the format's name in Storage.Format and in Metadata.Fields.
const name = "mat"

// variableKey is the key of the Metadata field that carries the name of
// the variable a cube was read from, so that an output is named the same.
const variableKey = "variable"

// Format is the MAT-file format.
var Format msi.Format = format{}

type format struct{}

func (format) Info() msi.Info {
	return msi.Info{Name: name, Label: ".mat", Path: "a .mat[:VAR]", Takes: msi.TakesAxes | msi.TakesDType,
		Carries: msi.CarriesWavelengths | msi.CarriesMissing}
}

// Recognize reports whether path names a .mat file, with or without a
// ":VAR" suffix.
func (format) Recognize(path string) bool {
	file, _ := splitPath(path)
	return strings.EqualFold(filepath.Ext(file), ".mat")
}

// Outputs returns the file of path (FILE.mat of FILE.mat:VAR).
func (format) Outputs(path string) []string {
	file, _ := splitPath(path)
	return []string{file}
}

// Open reads the cube of the MAT-file path names (FILE.mat or
// FILE.mat:VAR) with its dimensions in the order opts.Axes, its values
// multiplied by opts.Scale or the automatic factor.
func (format) Open(path string, opts msi.ReadOptions) (*msi.Cube, error) {
	axes, err := array.ParseAxes(opts.Axes)
	if err != nil {
		return nil, err
	}
	if err := msi.CheckScale(opts.Scale); err != nil {
		return nil, err
	}
	file, variable := path, ""
	if _, err := os.Stat(path); err != nil {
		file, variable = splitPath(path)
	}
	data, err := msi.ReadWhole(file, opts.Budget)
	if err != nil {
		return nil, err
	}
	c, dtype, v, err := decode(data, variable, axes, file, opts.Budget)
	if err != nil {
		return nil, err
	}
	scale, units, fromData := array.ApplyScale(c, dtype, opts.Scale)
	c.Stored = msi.Storage{Format: name, DType: dtype, Axes: axes, Scale: scale, ScaleGiven: opts.Scale != 0, FromData: fromData, Units: units}
	c.Fields = []msi.Field{{Format: name, Key: variableKey, Value: v}}
	return c, nil
}

// Write writes c to the MAT-file path names (see the package comment).
func (format) Write(path string, c *msi.Cube, opts msi.WriteOptions) (msi.WriteInfo, error) {
	if err := c.Check(); err != nil {
		return msi.WriteInfo{}, fmt.Errorf("%s: %v", path, err)
	}
	axes, err := array.ParseAxes(opts.Axes)
	if err != nil {
		return msi.WriteInfo{}, err
	}
	if err := msi.CheckScale(opts.Scale); err != nil {
		return msi.WriteInfo{}, err
	}
	t, err := array.TypeNamed(opts.DType)
	if err != nil {
		return msi.WriteInfo{}, err
	}
	scale := opts.UnrecordedScale(t.Float)
	file, variable := splitPath(path)
	if variable == "" {
		for _, f := range c.FieldsOf(name) {
			if f.Key == variableKey {
				variable = f.Value
			}
		}
	}
	if variable == "" {
		variable = "cube"
	}
	clipped, err := write(file, variable, c, axes, t, scale, opts)
	return msi.WriteInfo{Clipped: clipped}, err
}

// CheckSize returns an error for a height×width×bands cube of opts.DType
// values that a level-5 MAT-file, the one tdsc writes, cannot hold (2 GB
// of values a variable), saying which outputs can.
func (format) CheckSize(path string, height, width, bands int, opts msi.WriteOptions) error {
	t, err := array.TypeNamed(opts.DType)
	if err != nil {
		return err
	}
	need := float64(height) * float64(width) * float64(bands) * float64(t.Size)
	if need <= matfile.MaxVariableBytes {
		return nil
	}
	file, _ := splitPath(path)
	help := "write a .npy or an ENVI .hdr"
	if need/float64(t.Size) <= matfile.MaxVariableBytes {
		help += ", or a narrower element type (--dtype)"
	}
	return fmt.Errorf("%s: a %d×%d×%d cube of %s is %s, more than a level-5 MAT-file holds (2 GiB a variable; tdsc writes no v7.3 MAT-file): %s",
		file, height, width, bands, t.Name, msi.FormatBytes(int64(need)), help)
}

// Names of a variable that holds a cube's wavelengths in nanometres.
var wavelengthNames = []string{"wavelengths", "wavelength"}

// splitPath splits "FILE.mat:VAR" into the file and the variable name.
// A path without a variable, or not naming a .mat file, is returned as it
// is with an empty variable.
func splitPath(path string) (file, variable string) {
	i := strings.LastIndexByte(path, ':')
	if i < 0 || strings.ContainsAny(path[i+1:], `/\`) || !strings.EqualFold(filepath.Ext(path[:i]), ".mat") {
		return path, ""
	}
	return path[:i], path[i+1:]
}

// matClassType maps the MATLAB classes read as cubes to element types:
// every numeric class (a Half variable, of class single, is float16).
var matClassType = map[matfile.Class]array.Type{
	matfile.ClassDouble: array.Float64,
	matfile.ClassSingle: array.Float32,
	matfile.ClassInt8:   array.Int8,
	matfile.ClassUint8:  array.Uint8,
	matfile.ClassInt16:  array.Int16,
	matfile.ClassUint16: array.Uint16,
	matfile.ClassInt32:  array.Int32,
	matfile.ClassUint32: array.Uint32,
	matfile.ClassInt64:  array.Int64,
	matfile.ClassUint64: array.Uint64,
}

// matClasses lists the classes read, for messages.
const matClasses = "double, single, int8 to int64, uint8 to uint64, and half-precision HDF5 datasets"

// miKind maps the numeric storage types of a MAT-file to decoder kinds.
func miKind(t matfile.DataType) byte {
	switch t {
	case matfile.MIHalf, matfile.MISingle, matfile.MIDouble:
		return 'f'
	case matfile.MIUint8, matfile.MIUint16, matfile.MIUint32, matfile.MIUint64:
		return 'u'
	}
	return 'i'
}

// decode decodes the bytes of a MAT-file: variable (or, when it is empty,
// the one 3-D numeric variable) with its dimensions in the order axes. It
// returns the cube, values as stored, its element type's name and the
// variable's name; name is the file's name for errors. A variable named
// "wavelengths" (or "wavelength") holding one number per band becomes the
// cube's Wavelengths; one of another length is ignored. A cube that would
// need more than budget bytes (msi.CheckFits, the file's bytes and the
// variable's values as stored counted; 0: no limit) is refused before its
// values are read.
func decode(data []byte, variable, axes, name string, budget int64) (*msi.Cube, string, string, error) {
	f, err := matfile.Parse(data)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %v", name, err)
	}
	var v *matfile.Var
	if variable != "" {
		for _, w := range f.Vars {
			if w.Name == variable {
				v = w
				break
			}
		}
		if v == nil {
			return nil, "", "", fmt.Errorf("%s: no variable %q (it holds %s)", name, variable, listVars(f.Vars))
		}
	} else {
		var cubes []*matfile.Var
		for _, w := range f.Vars {
			if len(array.Squeeze(w.Dims)) == 3 && w.Class.Numeric() && !w.Complex && !w.Logical {
				cubes = append(cubes, w)
			}
		}
		switch len(cubes) {
		case 0:
			return nil, "", "", fmt.Errorf("%s: no 3-D numeric variable to take as the cube (it holds %s)", name, listVars(f.Vars))
		case 1:
			v = cubes[0]
		default:
			return nil, "", "", fmt.Errorf("%s: %d 3-D variables, %s: say which with %s:NAME", name, len(cubes), listVars(cubes), name)
		}
	}
	where := fmt.Sprintf("%s: variable %s", name, v.Name)
	t, ok := matClassType[v.Class]
	if v.Half {
		t = array.Float16
	}
	dims := array.Squeeze(v.Dims)
	switch {
	case v.Complex:
		return nil, "", "", fmt.Errorf("%s is complex (%s); a cube must be real", where, v.Shape())
	case v.Logical:
		return nil, "", "", fmt.Errorf("%s is logical (%s), true/false rather than numbers: a cube needs a numeric class (%s)", where, v.Shape(), matClasses)
	case !ok:
		return nil, "", "", fmt.Errorf("%s is of class %s (%s), which is not supported (supported: %s)", where, v.Class, v.Shape(), matClasses)
	case len(dims) == 2:
		return nil, "", "", fmt.Errorf("%s is 2-D (%s); a cube needs 3 dimensions (%s): a single band needs a third axis of length 1 (MATLAB drops a trailing one: store it as 1×H×W, reshape(x, [1 size(x)]), and read it with --axes BHW)", where, v.Shape(), axes)
	case len(dims) != 3:
		return nil, "", "", fmt.Errorf("%s is %d-D (%s); a cube needs 3 dimensions (%s) (leading or trailing dimensions of length 1 are dropped)", where, len(v.Dims), v.Shape(), axes)
	}
	for _, d := range v.Dims {
		if d == 0 {
			return nil, "", "", fmt.Errorf("%s is empty (%s)", where, v.Shape())
		}
	}
	l := array.NewLayout([3]int(dims), axes, true)
	stored := int64(len(data)) + int64(t.Size)*int64(l.Height)*int64(l.Width)*int64(l.Bands)
	if err := msi.CheckFits(name, l.Height, l.Width, l.Bands, stored, budget); err != nil {
		return nil, "", "", err
	}
	loaded, err := f.Load(v)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %v", name, err)
	}
	size := loaded.Type.ValueSize()
	kind := miKind(loaded.Type)
	c, err := array.Decode(loaded.Data, l, size, kind == 'f', array.Decoder(kind, size, f.Order), 0)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %v", where, err)
	}
	c.Wavelengths = matWavelengths(f, c.Bands)
	return c, t.Name, v.Name, nil
}

// matWavelengths returns the values of a real numeric vector variable
// named as in wavelengthNames with n finite values, or nil.
func matWavelengths(f *matfile.File, n int) []float64 {
	for _, name := range wavelengthNames {
		for _, w := range f.Vars {
			if w.Name != name || !w.Class.Numeric() || w.Complex || len(w.Dims) != 2 || w.Dims[0]*w.Dims[1] != n || min(w.Dims[0], w.Dims[1]) != 1 {
				continue
			}
			loaded, err := f.Load(w)
			if err != nil {
				return nil
			}
			size := loaded.Type.ValueSize()
			value := array.Decoder(miKind(loaded.Type), size, f.Order)
			wl := make([]float64, n)
			for i := range wl {
				wl[i] = value(loaded.Data[i*size:])
			}
			if (&msi.Metadata{Wavelengths: wl}).CheckFor(n) != nil {
				return nil
			}
			return wl
		}
	}
	return nil
}

// listVars describes variables for an error message.
func listVars(vars []*matfile.Var) string {
	if len(vars) == 0 {
		return "no variables"
	}
	parts := make([]string, len(vars))
	for i, v := range vars {
		parts[i] = v.Describe()
	}
	return strings.Join(parts, ", ")
}

// classOf maps element types to MATLAB classes.
var classOf = map[array.Type]matfile.Class{
	array.Float64: matfile.ClassDouble,
	array.Float32: matfile.ClassSingle,
	array.Int8:    matfile.ClassInt8,
	array.Uint8:   matfile.ClassUint8,
	array.Int16:   matfile.ClassInt16,
	array.Uint16:  matfile.ClassUint16,
	array.Int32:   matfile.ClassInt32,
	array.Uint32:  matfile.ClassUint32,
}

// write writes c divided by scale to file as a level-5 MAT-file
// (little-endian, uncompressed) holding the variable variable of element
// type t with its dimensions in the order axes, and, when c has
// wavelengths, a 1×B double variable "wavelengths", as opts says (Force;
// a cancelled Context stops it before the file is created). It returns
// the number of values clipped to an integer type's range.
func write(file, variable string, c *msi.Cube, axes string, t array.Type, scale float64, opts msi.WriteOptions) (int, error) {
	if !matfile.ValidName(variable) {
		return 0, fmt.Errorf("%s: %q cannot be a MATLAB variable name (a letter, then letters, digits or underscores, at most 63)", file, variable)
	}
	if c.Wavelengths != nil && strings.EqualFold(variable, "wavelengths") {
		return 0, fmt.Errorf("%s: the cube cannot be called %q: that name holds its wavelengths", file, variable)
	}
	dims := array.Dims(axes, c.Height, c.Width, c.Bands)
	raw, clipped, err := array.Encode(c, array.NewLayout(dims, axes, true), t, scale, 0, c.NoData, c.HasNoData)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", file, err)
	}
	if err := opts.Err(); err != nil { // encoding a large cube takes a while
		return 0, err
	}
	out, err := atomicfile.Create(file, opts.Force)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int, error) {
		out.Abort()
		return 0, fmt.Errorf("%s: %v", file, err)
	}
	w, err := matfile.NewWriter(out, "MATLAB 5.0 MAT-file, written by tdsc: a "+c.Size()+" multispectral cube")
	if err != nil {
		return fail(err)
	}
	if err := w.WriteVar(variable, classOf[t], dims[:], raw); err != nil {
		return fail(err)
	}
	if c.Wavelengths != nil {
		wl := make([]byte, 0, 8*len(c.Wavelengths))
		for _, x := range c.Wavelengths {
			wl = binary.LittleEndian.AppendUint64(wl, math.Float64bits(x))
		}
		if err := w.WriteVar("wavelengths", matfile.ClassDouble, []int{1, len(c.Wavelengths)}, wl); err != nil {
			return fail(err)
		}
	}
	return clipped, atomicfile.Commit(out)
}
