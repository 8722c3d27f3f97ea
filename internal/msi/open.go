package msi

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"tdsc/internal/atomicfile"
	"tdsc/internal/option"
)

// Open reads the cube at path with the default ReadOptions (see OpenWith).
// PNG band stacks and ENVI files are read exactly as they always were.
func Open(path string) (*Cube, error) {
	c, _, err := OpenWith(path, ReadOptions{})
	return c, err
}

// ReadOptions controls OpenWith. The zero value reads every format with
// its defaults.
type ReadOptions struct {
	// Axes is the order of a .npy or .mat array's dimensions as the
	// letters H (height), W (width) and B (bands); see ParseAxes. Empty
	// means "HWB". PNG band stacks and ENVI files have a fixed layout and
	// accept only "" or "HWB".
	Axes string
	// Scale is the factor that brings the stored values to the working
	// [0, 255] scale (working = stored × Scale). 0 means automatic: for
	// .npy and .mat the factor AutoScale chooses from the element type
	// and the largest value; for ENVI 1 (values as stored); PNG band
	// stacks always map their full bit depth to [0, 255] and accept only
	// 0. A value other than 0 must be positive.
	Scale float64
}

// Source says how a cube was read: its format and what Write needs to store
// a result the way the input was stored (see WriteOptions.Like).
type Source struct {
	// Format is "png", "envi", "npy" or "mat".
	Format string
	// DType is the stored element type as one of DTypes ("float32",
	// "float64", "uint16", "uint8", "int16"); MATLAB's double and single
	// are float64 and float32. Empty for PNG band stacks.
	DType string
	// Axes is the order of the stored dimensions, "HWB" unless
	// ReadOptions said otherwise.
	Axes string
	// Scale is the factor applied on reading: working = stored × Scale.
	// It is 1 for PNG band stacks (their levels are the working scale).
	Scale float64
	// Variable is the name of the MAT-file variable read; empty for
	// other formats.
	Variable string
}

// OpenWith reads the cube at path:
//
//   - a folder: a PNG band stack (ReadPNGStack);
//   - a file ending in .hdr or .img: an ENVI cube (the other file of the
//     pair is found beside it);
//   - a file ending in .npy: a 3-D NumPy array, C or Fortran order,
//     float32, float64, uint8, uint16 or int16 of either byte order;
//   - FILE.mat or FILE.mat:VAR: variable VAR of a level-5 MAT-file
//     (MATLAB -v6/-v7, scipy.io.savemat; compressed or not, either byte
//     order), of class double, single, uint8, uint16 or int16. Without
//     :VAR the file must hold exactly one 3-D numeric variable; with
//     several, the error lists them with their shapes. A variable named
//     "wavelengths" with one value per band gives the wavelengths (nm).
//     MATLAB v7.3 files (HDF5) are read too, for the datasets MATLAB and
//     h5py write (contiguous, compact, or chunked with deflate, shuffle
//     and fletcher32); other HDF5 features are an error that names them
//     and suggests re-saving as v7.
//
// Array files are read with their dimensions in the order opts.Axes and
// their values scaled by opts.Scale (or the automatic factor); Source
// reports what was chosen. NaN or infinite values are an error in every
// format. Anything else, and a missing path, is an error; errors name the
// path at fault.
func OpenWith(path string, opts ReadOptions) (*Cube, Source, error) {
	axes, err := ParseAxes(opts.Axes)
	if err != nil {
		return nil, Source{}, err
	}
	if err := checkScale(opts.Scale); err != nil {
		return nil, Source{}, err
	}
	file, variable := path, ""
	if _, err := os.Stat(path); err != nil {
		file, variable = splitMATPath(path)
	}
	fi, err := os.Stat(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, Source{}, fmt.Errorf("%s: no such file or folder", file)
		}
		return nil, Source{}, err
	}
	fixedLayout := func(format string) error {
		if axes != DefaultAxes {
			return option.Errorf("axes", opts.Axes, "%s: axes apply to .npy and .mat files; %s files have a fixed layout", path, format)
		}
		return nil
	}
	switch {
	case fi.IsDir():
		if err := fixedLayout("PNG band stack"); err != nil {
			return nil, Source{}, err
		}
		if opts.Scale != 0 {
			return nil, Source{}, option.Errorf("scale", opts.Scale, "%s: a scale does not apply to a PNG band stack, whose levels span [0, 255] by their bit depth", path)
		}
		c, _, err := ReadPNGStack(path)
		if err != nil {
			return nil, Source{}, err
		}
		return c, Source{Format: "png", Axes: DefaultAxes, Scale: 1}, nil
	case IsENVIPath(file):
		if err := fixedLayout("ENVI"); err != nil {
			return nil, Source{}, err
		}
		c, dtype, err := readENVI(path)
		if err != nil {
			return nil, Source{}, err
		}
		scale := opts.Scale
		if scale == 0 {
			scale = 1
		}
		return c, Source{Format: "envi", DType: dtype, Axes: DefaultAxes, Scale: applyScale(c, dtype, scale)}, nil
	case strings.EqualFold(filepath.Ext(file), ".npy"):
		c, dtype, err := readNPY(file, axes)
		if err != nil {
			return nil, Source{}, err
		}
		return c, Source{Format: "npy", DType: dtype, Axes: axes, Scale: applyScale(c, dtype, opts.Scale)}, nil
	case isMATPath(file):
		c, dtype, name, err := readMAT(file, variable, axes)
		if err != nil {
			return nil, Source{}, err
		}
		return c, Source{Format: "mat", DType: dtype, Axes: axes, Scale: applyScale(c, dtype, opts.Scale), Variable: name}, nil
	case strings.EqualFold(filepath.Ext(path), ".png"):
		return nil, Source{}, fmt.Errorf("%s: a single PNG is not a cube: give the folder of band PNGs (<scene>_NN.png)", path)
	}
	return nil, Source{}, fmt.Errorf("%s: unknown format: want a folder of band PNGs, an ENVI .hdr/.img file, a .npy file or a .mat file", path)
}

// WriteOptions controls Write.
type WriteOptions struct {
	// Force replaces an existing output. Without it, Write refuses to
	// overwrite anything. Even with it, an existing folder is replaced only
	// if it holds nothing but PNG files, so a mistyped path cannot wipe an
	// unrelated folder.
	Force bool
	// Scene is the file-name prefix of a PNG band stack's files
	// (<Scene>_NN.png); it defaults to the base name of the output folder.
	// Other formats ignore it.
	Scene string

	// The fields below apply to .npy and .mat output only; PNG band
	// stacks and ENVI files are always written on the working scale, as
	// they always were. Like fills them from the input's Source.

	// Axes is the order of the stored dimensions (see ParseAxes); empty
	// means "HWB".
	Axes string
	// Scale undoes the scale of reading: stored = working value / Scale.
	// 0 means 1.
	Scale float64
	// DType is the stored element type, one of DTypes; empty means
	// float32. Integer types round to the nearest whole number and clip
	// to their range (WriteInfo.Clipped counts the values clipped).
	DType string
	// Variable names the cube's variable in a .mat file; empty means
	// "cube". A path "FILE.mat:NAME" names it too, and takes precedence.
	Variable string
}

// Like returns o with the array fields set to store the output as the
// input described by src was stored: the same axis order, the scale undone,
// the same variable name, and, when keepDType is set, the same element
// type (otherwise o.DType is kept, float32 when empty). An input without an
// element type (a PNG band stack) keeps o.DType.
func (o WriteOptions) Like(src Source, keepDType bool) WriteOptions {
	o.Axes, o.Scale, o.Variable = src.Axes, src.Scale, src.Variable
	if keepDType && src.DType != "" {
		o.DType = src.DType
	}
	return o
}

// WriteInfo reports what Write did.
type WriteInfo struct {
	// Clipped counts the voxels outside the range of the stored type
	// that had to be clipped: [0, 255] for a PNG band stack, the
	// integer type's range for .npy and .mat output. ENVI and float
	// output store every value as it is, so it is 0 for them.
	Clipped int
}

// Write stores c at path, choosing the format by the path:
//
//   - ending in .hdr or .img: an ENVI float32 cube (path without
//     extension plus .hdr and .img, see WriteENVI);
//   - ending in .npy: a NumPy array, C order, little-endian, dimensions
//     in the order opts.Axes, values divided by opts.Scale and stored as
//     opts.DType (float32 by default);
//   - FILE.mat or FILE.mat:NAME: a level-5 MAT-file (MATLAB v6/v7
//     compatible, uncompressed, little-endian) holding the cube as
//     variable NAME (or opts.Variable, or "cube") stored like .npy output
//     but column-major, as MATLAB stores arrays, and the wavelengths, if
//     known, as a 1×B double variable "wavelengths" (the file is written
//     whole: other variables of an existing file are not kept);
//   - anything else: a PNG band stack folder (see WritePNGStack).
//
// Writing is atomic: the output is built under a temporary name in the same
// folder and renamed into place, and on failure nothing is left behind. An
// existing output is an error unless opts.Force is set. Non-finite values
// are an error in every format.
func Write(path string, c *Cube, opts WriteOptions) (WriteInfo, error) {
	switch {
	case IsENVIPath(path):
		return WriteInfo{}, WriteENVI(path, c, opts.Force)
	case strings.EqualFold(filepath.Ext(path), ".npy"), isMATPath(path):
	default:
		return WritePNGStack(path, c, opts)
	}
	if err := checkCube(c); err != nil {
		return WriteInfo{}, fmt.Errorf("%s: %v", path, err)
	}
	axes, err := ParseAxes(opts.Axes)
	if err != nil {
		return WriteInfo{}, err
	}
	if err := checkScale(opts.Scale); err != nil {
		return WriteInfo{}, err
	}
	scale := opts.Scale
	if scale == 0 {
		scale = 1
	}
	t, err := elemTypeNamed(opts.DType)
	if err != nil {
		return WriteInfo{}, err
	}
	var clipped int
	if isMATPath(path) {
		file, variable := splitMATPath(path)
		if variable == "" {
			variable = opts.Variable
		}
		if variable == "" {
			variable = "cube"
		}
		clipped, err = writeMAT(file, variable, c, axes, t, scale, opts.Force)
	} else {
		clipped, err = writeNPY(path, c, axes, t, scale, opts.Force)
	}
	return WriteInfo{Clipped: clipped}, err
}

// RefuseExisting returns an *atomicfile.ExistsError when Write(path, …)
// would replace something that exists: for an ENVI path its .hdr or its
// .img, whatever the case of the extension given; for FILE.mat:NAME the
// file; otherwise the file or folder.
// Commands call it before long work, so that a run that could not write its
// result does not start.
func RefuseExisting(path string) error {
	if IsENVIPath(path) {
		stem := strings.TrimSuffix(path, filepath.Ext(path))
		return atomicfile.Refuse(stem+".hdr", stem+".img")
	}
	file, _ := splitMATPath(path)
	return atomicfile.Refuse(file)
}

// isENVIPath reports whether path names an ENVI header or data file.
// IsENVIPath reports whether path names an ENVI cube (ends in .hdr or
// .img, in any case), as Open and Write take it.
func IsENVIPath(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".hdr" || ext == ".img"
}

// checkCube reports a cube whose fields disagree with each other.
func checkCube(c *Cube) error {
	switch {
	case c == nil:
		return errors.New("no cube")
	case c.Height <= 0 || c.Width <= 0 || c.Bands <= 0:
		return fmt.Errorf("bad cube size %s", c.Size())
	case len(c.Data) != c.Height*c.Width*c.Bands:
		return fmt.Errorf("cube of size %s has %d values, want %d", c.Size(), len(c.Data), c.Height*c.Width*c.Bands)
	case c.Wavelengths != nil && len(c.Wavelengths) != c.Bands:
		return fmt.Errorf("cube has %d bands but %d wavelengths", c.Bands, len(c.Wavelengths))
	}
	for _, wl := range c.Wavelengths {
		if math.IsNaN(wl) || math.IsInf(wl, 0) {
			return fmt.Errorf("wavelength %v is not a number", wl)
		}
	}
	return nil
}

// exists reports whether path exists (without following a final symlink).
func exists(path string) (os.FileInfo, bool, error) {
	fi, err := os.Lstat(path)
	if err == nil {
		return fi, true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	return nil, false, err
}

// IsArrayPath reports whether path names a .npy or .mat file (with or
// without a :VAR suffix): the formats whose axes and scale ReadOptions set.
func IsArrayPath(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".npy") || isMATPath(path)
}
