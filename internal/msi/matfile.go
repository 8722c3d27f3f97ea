package msi

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"tdsc/internal/atomicfile"
	"tdsc/internal/formats/matfile"
)

// MAT-files (MATLAB level 5, as save -v6/-v7 and scipy.io.savemat write
// them, and v7.3 for reading) are parsed and written by package matfile;
// this file maps their variables to cubes.
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

// Names of a variable that holds a cube's wavelengths in nanometres.
var wavelengthNames = []string{"wavelengths", "wavelength"}

// splitMATPath splits "FILE.mat:VAR" into the file and the variable name.
// A path without a variable, or not naming a .mat file, is returned as it
// is with an empty variable.
func splitMATPath(path string) (file, variable string) {
	i := strings.LastIndexByte(path, ':')
	if i < 0 || strings.ContainsAny(path[i+1:], `/\`) || !strings.EqualFold(filepath.Ext(path[:i]), ".mat") {
		return path, ""
	}
	return path[:i], path[i+1:]
}

// isMATPath reports whether path names a .mat file, with or without a
// ":VAR" suffix.
func isMATPath(path string) bool {
	file, _ := splitMATPath(path)
	return strings.EqualFold(filepath.Ext(file), ".mat")
}

// matClassType maps the MATLAB classes read as cubes to element types.
var matClassType = map[matfile.Class]elemType{
	matfile.ClassDouble: typeFloat64,
	matfile.ClassSingle: typeFloat32,
	matfile.ClassUint8:  typeUint8,
	matfile.ClassUint16: typeUint16,
	matfile.ClassInt16:  typeInt16,
}

// miKind maps the numeric storage types of a MAT-file to decoder kinds.
func miKind(t matfile.DataType) byte {
	switch t {
	case matfile.MISingle, matfile.MIDouble:
		return 'f'
	case matfile.MIUint8, matfile.MIUint16, matfile.MIUint32, matfile.MIUint64:
		return 'u'
	}
	return 'i'
}

// readMAT reads variable (or, when it is empty, the one 3-D numeric
// variable) of the MAT-file file, with its dimensions in the order axes.
// It returns the cube, its element type's name and the variable's name.
// A variable named "wavelengths" (or "wavelength") holding one number per
// band becomes the cube's Wavelengths; one of another length is ignored.
func readMAT(file, variable, axes string) (*Cube, string, string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, "", "", err
	}
	return decodeMAT(data, variable, axes, file)
}

// decodeMAT decodes the bytes of a MAT-file; name is its name for errors.
func decodeMAT(data []byte, variable, axes, name string) (*Cube, string, string, error) {
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
			if len(w.Dims) == 3 && w.Class.Numeric() && !w.Complex && !w.Logical {
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
	class := v.Class.String()
	if v.Logical {
		class = "logical"
	}
	switch {
	case v.Complex:
		return nil, "", "", fmt.Errorf("%s is complex; a cube must be real", where)
	case !ok || v.Logical:
		return nil, "", "", fmt.Errorf("%s is of class %s (%s), which is not supported (supported: double, single, uint8, uint16, int16)", where, class, v.Shape())
	case len(v.Dims) != 3:
		return nil, "", "", fmt.Errorf("%s is %d-D (%s); a cube needs 3 dimensions (%s)", where, len(v.Dims), v.Shape(), axes)
	}
	for _, d := range v.Dims {
		if d == 0 {
			return nil, "", "", fmt.Errorf("%s is empty (%s)", where, v.Shape())
		}
	}
	loaded, err := f.Load(v)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %v", name, err)
	}
	size := loaded.Type.Size()
	kind := miKind(loaded.Type)
	l := arrayLayout([3]int(loaded.Dims), axes, true)
	c, err := decodeArray(loaded.Data, l, size, kind == 'f', decoder(kind, size, f.Order))
	if err != nil {
		return nil, "", "", fmt.Errorf("%s: %v", where, err)
	}
	c.Wavelengths = matWavelengths(f, c.Bands)
	return c, t.name, v.Name, nil
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
			size := loaded.Type.Size()
			value := decoder(miKind(loaded.Type), size, f.Order)
			wl := make([]float64, n)
			for i := range wl {
				wl[i] = value(loaded.Data[i*size:])
			}
			if checkCube(&Cube{Height: 1, Width: 1, Bands: n, Data: make([]float64, n), Wavelengths: wl}) != nil {
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
var classOf = map[elemType]matfile.Class{
	typeFloat64: matfile.ClassDouble,
	typeFloat32: matfile.ClassSingle,
	typeUint8:   matfile.ClassUint8,
	typeUint16:  matfile.ClassUint16,
	typeInt16:   matfile.ClassInt16,
}

// writeMAT writes c divided by scale to file as a level-5 MAT-file
// (little-endian, uncompressed) holding the variable variable of element
// type t with its dimensions in the order axes, and, when c has
// wavelengths, a 1×B double variable "wavelengths". It returns the number
// of values clipped to an integer type's range.
func writeMAT(file, variable string, c *Cube, axes string, t elemType, scale float64, force bool) (int, error) {
	if !matfile.ValidName(variable) {
		return 0, fmt.Errorf("%s: %q cannot be a MATLAB variable name (a letter, then letters, digits or underscores, at most 63)", file, variable)
	}
	if c.Wavelengths != nil && strings.EqualFold(variable, "wavelengths") {
		return 0, fmt.Errorf("%s: the cube cannot be called %q: that name holds its wavelengths", file, variable)
	}
	dims := [3]int{}
	for k := range 3 {
		switch axes[k] {
		case 'H':
			dims[k] = c.Height
		case 'W':
			dims[k] = c.Width
		case 'B':
			dims[k] = c.Bands
		}
	}
	raw, clipped, err := encodeArray(c, arrayLayout(dims, axes, true), t, scale)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", file, err)
	}
	out, err := atomicfile.Create(file, force)
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
