package msi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"

	"tdsc/internal/option"
)

// Format is one file format of cubes. A format is a package under
// internal/formats that provides a value of this type; package formats
// lists them and chooses one by the path, so that commands name no format.
//
// Paths are the user's: an ENVI cube is named by its .hdr or .img, a
// MAT-file variable by FILE.mat:VAR. Every error names the path at fault.
type Format interface {
	// Info describes the format: its name, how it appears in help and
	// messages, which options it takes and which metadata it carries.
	Info() Info
	// Recognize reports whether path names a cube of this format, by its
	// name alone (a MAT-file by .mat or .mat:VAR, say). A folder is a
	// PNG band stack whatever its name; package formats decides that.
	Recognize(path string) bool
	// Outputs returns the files or folders that Write(path, …) creates or
	// replaces (an ENVI cube's .hdr and .img; FILE.mat of FILE.mat:VAR).
	Outputs(path string) []string
	// Open reads the whole cube at path, its values brought to the
	// working scale by the rule of units (see AutoScale), and sets its
	// Metadata, Stored included. A no-data voxel (NaN in a float file, a
	// no-data value the file states) is NaN in the cube; an infinite
	// value is an error. The options have been checked against
	// Info().Takes.
	Open(path string, opts ReadOptions) (*Cube, error)
	// Write stores c at path atomically: under a temporary name renamed
	// into place, nothing left behind on error. An existing output is an
	// error wrapping fs.ErrExist unless opts.Force is set. A NaN voxel is
	// written as missing (the no-data value of c's Metadata where the
	// format keeps one, else NaN where it can hold NaN; see each format);
	// an infinite value is an error.
	Write(path string, c *Cube, opts WriteOptions) (WriteInfo, error)
}

// InputRecognizer is implemented by a Format that reads cubes named by
// more paths than it writes (ENVI's data files .dat, .raw, .bsq, …, which
// name the header beside them): RecognizeInput reports whether path names
// a cube of the format to read; Recognize stays what it writes.
type InputRecognizer interface {
	RecognizeInput(path string) bool
}

// SizeLimiter is implemented by a Format whose files hold cubes only up
// to a size (a level-5 MAT-file's 2 GB a variable): CheckSize returns an
// error for a height×width×bands cube written at path with opts that the
// file cannot hold, saying what can, so that a command refuses it before
// the work.
type SizeLimiter interface {
	CheckSize(path string, height, width, bands int, opts WriteOptions) error
}

// ReadOnly is implemented by a Format that reads cubes but cannot write
// them, in this build or at all (HDF5, which tdsc only reads; GeoTIFF in
// a build without GDAL). WriteError returns the error that its Write
// returns for path, saying what to write instead, so that a command can
// refuse the output before any work; package formats leaves the format
// out of the lists of what tdsc writes.
type ReadOnly interface {
	WriteError(path string) error
}

// WindowOpener is implemented by a Format that can read a cube a window of
// lines at a time, so that a cube larger than memory is processed in
// strips. A window is bit for bit the same lines of the cube Open reads
// with the same options.
type WindowOpener interface {
	OpenWindow(path string, opts ReadOptions) (WindowReader, error)
}

// WindowCreator is implemented by a Format that can write a cube a window
// of lines at a time. The file written is byte for byte what Write writes
// for the whole cube with the same metadata and options.
type WindowCreator interface {
	// CreateWindow starts the output at path for a height×width×bands
	// cube with metadata meta. Nothing exists at path until Commit.
	CreateWindow(path string, height, width, bands int, meta Metadata, opts WriteOptions) (WindowWriter, error)
}

// WindowReader reads the lines of a cube.
type WindowReader interface {
	// Size returns the cube's height (lines), width and band count.
	Size() (height, width, bands int)
	// Prepare finds what reading the lines needs that depends on the
	// whole file: the automatic scale, which needs the largest value (one
	// pass over the file, stopped with ctx's error once ctx is cancelled),
	// when neither the user nor the file gives it. progress, if not nil,
	// is called as the pass goes with the count of lines read so far
	// (first with 0, last with the height), and not at all when there is
	// no pass. Metadata and ReadLines call it, with a context never
	// cancelled, when it has not run.
	Prepare(ctx context.Context, progress func(lines int)) error
	// ReadLines returns lines y0 .. y0+n−1, every sample and band, as an
	// n×W×B cube on the working scale with the cube's wavelengths, its
	// no-data voxels NaN as Open makes them. A line range outside the
	// cube is an error, as is an infinite value.
	ReadLines(y0, n int) (*Cube, error)
	// Metadata returns the cube's metadata, Stored included, as Open sets
	// it. (A format whose automatic scale depends on the values finds it
	// on the first call of Metadata or ReadLines.)
	Metadata() (Metadata, error)
	// Close releases the file.
	Close() error
}

// WindowWriter writes the lines of a cube; each line is written once.
type WindowWriter interface {
	// WriteLines writes the lines of c as lines y0 .. y0+c.Height−1 of
	// the output, as Write writes them (NaN voxels as missing); c must
	// have the output's width and band count.
	WriteLines(c *Cube, y0 int) error
	// SetProcessing sets the metadata's Processing, for a history known
	// only once the lines are written.
	SetProcessing(s string)
	// Commit puts the output in place. Every line must have been
	// written; otherwise nothing is committed.
	Commit() error
	// Abort removes what was written. It may be called after Commit,
	// when it does nothing.
	Abort()
}

// Info describes a Format.
type Info struct {
	// Name names the format in Storage.Format and in log lines: "envi".
	Name string
	// Label names it in lists of formats: "ENVI", ".npy".
	Label string
	// Path says what a path of the format looks like, for help and
	// errors: "an ENVI .hdr", "a .mat[:VAR]".
	Path string
	// Takes lists the options of ReadOptions and WriteOptions that the
	// format honours beyond Force and Scale, which every format takes. A
	// format that does not take Axes reads only the default order.
	Takes Options
	// Carries lists the metadata that survives a Write and Open of the
	// format.
	Carries Carried
}

// Options is a set of the options a format takes.
type Options uint8

// The options of ReadOptions and WriteOptions a format may take.
const (
	// TakesAxes: the stored dimensions may be in any order (array files).
	TakesAxes Options = 1 << iota
	// TakesDType: the output's element type can be chosen.
	TakesDType
)

// Carried is a set of the Metadata that a format stores and reads back.
type Carried uint8

// The Metadata fields a format may carry.
const (
	CarriesWavelengths Carried = 1 << iota
	CarriesFWHM
	CarriesBandNames
	CarriesDescription
	CarriesNoData
	// CarriesMissing: missing (NaN) voxels are stored as such (as NaN or
	// the no-data value), not as a value of the scene.
	CarriesMissing
	// CarriesGeoref: the georeferencing (Metadata.Georef).
	CarriesGeoref
)

// carriedNames name the members of Carried, in order.
var carriedNames = []string{"wavelengths", "FWHM", "band names", "description", "no-data value", "mark of missing voxels (written as 0)", "georeferencing"}

// Present names the metadata of set s that c has, missing voxels
// included, in a fixed order: with the complement of a format's Carries,
// what an output of it would lose.
func (c *Cube) Present(s Carried) []string {
	m := &c.Metadata
	present := []bool{m.Wavelengths != nil, m.FWHM != nil, m.BandNames != nil, m.Description != "", m.HasNoData, s&CarriesMissing != 0 && c.Missing() > 0, m.Georef != nil}
	var names []string
	for i, name := range carriedNames {
		if s&(1<<i) != 0 && present[i] {
			names = append(names, name)
		}
	}
	return names
}

// ReadOptions controls how a cube is read. The zero value reads every
// format with its defaults.
type ReadOptions struct {
	// Axes is the order of an array file's stored dimensions as the
	// letters H (height), W (width) and B (bands), in the order of the
	// shape (NumPy) or size (MATLAB); empty means HWB. Formats that do
	// not take axes accept only empty or HWB.
	Axes string
	// Scale is the factor that brings the stored values (with an ENVI
	// file's gains and offsets applied) to the working [0, 255] scale
	// (working = physical × Scale), whatever the format. 0 means the
	// file's own (a reflectance scale factor) or the automatic one (see
	// AutoScale). A value other than 0 must be positive.
	Scale float64
	// Budget is the memory in bytes that Open may use for the cube; 0
	// means no limit. Open refuses a cube that would need more (see
	// CheckFits) with a *TooLargeError, before allocating for it.
	// Windows of lines are not bound by it.
	Budget int64
}

// TooLargeError reports a cube that reading whole would need more memory
// for than the budget allows.
type TooLargeError struct {
	Path                 string
	Height, Width, Bands int
	Need, Budget         int64 // bytes
}

func (e *TooLargeError) Error() string {
	if e.Height == 0 {
		return fmt.Sprintf("%s: reading it whole needs %s, more than the memory budget of %s", e.Path, FormatBytes(e.Need), FormatBytes(e.Budget))
	}
	return fmt.Sprintf("%s: the %d×%d×%d cube needs %s to read whole (8 bytes a value, and the file's bytes as read), more than the memory budget of %s",
		e.Path, e.Height, e.Width, e.Bands, FormatBytes(e.Need), FormatBytes(e.Budget))
}

// CheckFits returns a *TooLargeError for path when reading a
// height×width×bands cube whole, from stored bytes of the file read at
// once, needs more than budget bytes (0: no limit): 8 bytes for every
// value of the cube, which is held as float64, and the stored bytes. A
// size of 0×0×0 checks the stored bytes alone, for a file read before the
// size of its cube is known.
// Every format's Open calls it once it knows the cube's size, before
// allocating for it.
func CheckFits(path string, height, width, bands int, stored, budget int64) error {
	need := 8*float64(height)*float64(width)*float64(bands) + float64(stored)
	if budget <= 0 || need <= float64(budget) {
		return nil
	}
	e := &TooLargeError{Path: path, Height: height, Width: width, Bands: bands, Need: math.MaxInt64, Budget: budget}
	if need < math.MaxInt64 { // float64(MaxInt64) is 2⁶³, which int64 does not hold
		e.Need = int64(need)
	}
	return e
}

// FormatBytes writes n bytes in binary units (KiB, MiB, GiB) with one
// decimal.
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}

// CheckScale returns an *option.Error for field "scale" unless s is 0 (automatic) or a positive
// finite number, as ReadOptions.Scale and WriteOptions.Scale must be.
func CheckScale(s float64) error {
	if s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return option.Errorf("scale", s, "scale %v: want a positive factor (working value = stored value × scale), or 0 for automatic", s)
	}
	return nil
}

// WriteOptions controls how a cube is written.
type WriteOptions struct {
	// Force replaces an existing output. Without it, writing refuses to
	// overwrite anything. Even with it, a format replaces only what it
	// would write (a folder holding nothing but PNG files, say), so a
	// mistyped path cannot wipe an unrelated folder.
	Force bool
	// Context, when not nil, stops the write once it is cancelled: a
	// format checks it between bands (or before each large step), removes
	// what it has written and returns the context's error (see Err).
	Context context.Context

	// The fields below apply to formats that take them (Info.Takes):
	// others store the working scale in their own layout. Like fills
	// them from the input's Storage.

	// Axes is the order of the stored dimensions; empty means HWB.
	Axes string
	// Scale undoes the scale of reading: stored = working value / Scale
	// (then gains and offsets undone, for a format that keeps them). 0
	// means 1. A format that records the scale in the file (ENVI's
	// reflectance scale factor) stores it; one that cannot stores a float
	// output by UnrecordedScale, so that it reads back the same.
	Scale float64
	// ScaleGiven says that Scale was given by the user rather than found
	// from the input: outputs then keep the input's units even where the
	// automatic rule would not find them again (the user gives the scale
	// again to read them).
	ScaleGiven bool
	// ScaleFromData says that Scale was found from the input's values
	// (Storage.FromData): an integer output of a format that cannot record
	// it may be read back on another (see formats.ScaleNote).
	ScaleFromData bool
	// Gains and Offsets, if not nil, are the input's per-band gains and
	// offsets (physical = stored × gain + offset): a format that keeps
	// them (ENVI) stores (working/Scale − offset)/gain and records them;
	// others store physical values.
	Gains, Offsets []float64
	// DType is the stored element type; empty means float32. Integer
	// types round to the nearest whole number and clip to their range
	// (WriteInfo.Clipped counts the values clipped).
	DType string
}

// Like returns o set to store the output in the units the input
// described by s was stored in: the same axis order, the scale, gains and
// offsets undone and, when keepDType is set, the same element type
// (otherwise o.DType is kept, float32 when empty). An input without an
// element type (a PNG band stack) keeps o.DType.
func (o WriteOptions) Like(s Storage, keepDType bool) WriteOptions {
	o.Axes, o.Scale, o.ScaleGiven, o.ScaleFromData, o.Gains, o.Offsets = s.Axes, s.Scale, s.ScaleGiven, s.FromData, s.Gains, s.Offsets
	if keepDType && s.DType != "" {
		o.DType = s.DType
	}
	return o
}

// UnrecordedScale returns the factor a format that cannot record a scale
// in the file (.npy, .mat) divides working values by: o.Scale (the
// input's units) for an integer output, for a given scale, and for the
// two scales the automatic rule finds again from float values (1, and
// 255 for [0, 1] reflectance); otherwise 255. So a float output of n-bit
// counts, or of values read with a reflectance scale factor, holds them
// as a fraction of the full scale (reflectance in [0, 1]), which reads
// back on the same working scale, where counts stored as floats would be
// taken as [0, 255] values; an integer output keeps the counts.
func (o WriteOptions) UnrecordedScale(float bool) float64 {
	s := o.Scale
	if s == 0 {
		s = 1
	}
	if !float || o.ScaleGiven || s == 1 || s == 255 {
		return s
	}
	return 255
}

// Err returns the error of o.Context once it is cancelled, and nil
// before or when there is no context: what a writer checks between
// bands.
func (o WriteOptions) Err() error {
	if o.Context == nil {
		return nil
	}
	return o.Context.Err()
}

// WriteInfo reports what a write did.
type WriteInfo struct {
	// Clipped counts the voxels outside the range of the stored type
	// that had to be clipped ([0, 255] for a PNG band stack, an integer
	// type's range for array files); 0 for float output.
	Clipped int
}

// ReadWhole returns the bytes of the file at path, for a format that
// parses a file whole before it knows the size of its cube: the file
// alone must fit the budget (CheckFits; 0: no limit), and a missing file
// is said as Exists says it.
func ReadWhole(path string, budget int64) ([]byte, error) {
	if err := Exists(path); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := CheckFits(path, 0, 0, 0, fi.Size(), budget); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

// CheckCreate returns an error naming path when a window writer cannot
// start an output of a height×width×bands cube with metadata meta,
// stored by scale (WriteOptions.Scale): a size that is not positive,
// metadata of another band count, a bad scale.
func CheckCreate(path string, height, width, bands int, meta *Metadata, scale float64) error {
	if height < 1 || width < 1 || bands < 1 {
		return fmt.Errorf("%s: bad cube size %d×%d×%d", path, height, width, bands)
	}
	if err := meta.CheckFor(bands); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return CheckScale(scale)
}

// Exists returns nil when path exists and an error naming it otherwise
// ("no such file or folder" when it does not exist), for a format's Open
// to report a missing input in the same words as every other.
func Exists(path string) error {
	_, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: no such file or folder", path)
	}
	return err
}

// Lines tracks which lines of a WindowWriter's output have been written,
// so that every format enforces the same contract: lines inside the cube,
// each written once, all of them before Commit.
type Lines struct {
	written []bool
	left    int
}

// NewLines tracks the lines of a cube of height lines.
func NewLines(height int) *Lines { return &Lines{written: make([]bool, height), left: height} }

// Check returns an error when lines y0 .. y0+n−1 are not all inside the
// cube or one of them has been written.
func (l *Lines) Check(y0, n int) error {
	if n < 1 || y0 < 0 || y0 > len(l.written)-n {
		return fmt.Errorf("lines [%d, %d) are outside the cube's %d lines", y0, y0+n, len(l.written))
	}
	for y := y0; y < y0+n; y++ {
		if l.written[y] {
			return fmt.Errorf("line %d written twice", y)
		}
	}
	return nil
}

// Mark records lines y0 .. y0+n−1, which Check has accepted, as written.
func (l *Lines) Mark(y0, n int) {
	for y := y0; y < y0+n; y++ {
		l.written[y] = true
	}
	l.left -= n
}

// Done returns an error saying how many lines are missing, or nil when
// every line has been written.
func (l *Lines) Done() error {
	if l.left != 0 {
		return fmt.Errorf("%d of %d lines were not written", l.left, len(l.written))
	}
	return nil
}
