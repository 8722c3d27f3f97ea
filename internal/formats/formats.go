// Package formats is the list of the file formats of cubes and chooses one
// by the path: every command reads and writes cubes through it, so that a
// new format is its package under internal/formats and one line in All.
//
// Choosing: an existing folder is a PNG band stack; otherwise the first
// format of All that recognizes the path's name reads or writes it (a
// format may read more names than it writes: msi.InputRecognizer), and an
// output path that none recognizes is a PNG band stack folder when it has
// no extension, and an error otherwise (CheckName). So "x.hdr" is ENVI,
// "x.npy" NumPy, "x.mat:VAR" a MAT-file variable, "x.h5:/group/cube" an
// HDF5 dataset, "denoised" a band-stack folder, and "x.dat" no format tdsc
// writes.
package formats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"tdsc/internal/formats/array"
	"tdsc/internal/formats/envi"
	"tdsc/internal/formats/gdal"
	"tdsc/internal/formats/hdf5"
	"tdsc/internal/formats/mat"
	"tdsc/internal/formats/npy"
	"tdsc/internal/formats/pngstack"
	"tdsc/internal/msi"
	"tdsc/internal/option"
)

// All lists the formats in the order they are asked to recognize a path
// (and listed in help), the band stack (folder) first and GDAL's last (in
// the GDAL build it reads any existing file the others do not claim).
var All = []msi.Format{folder, envi.Format, npy.Format, mat.Format, hdf5.Format, gdal.Format}

// folder is the format of folders, and of outputs whose name no format
// recognizes.
var folder = pngstack.Format

// Named returns the format called name (Info.Name), or nil.
func Named(name string) msi.Format {
	for _, f := range All {
		if f.Info().Name == name {
			return f
		}
	}
	return nil
}

// ForRead returns the format of the cube at path (its own axes, if any,
// aside: see PathAxes): the band stack for an existing folder, else the
// format that recognizes the name. A path that
// does not exist and that no format recognizes is "no such file or
// folder"; one that exists and that no format recognizes is an unknown
// format.
func ForRead(path string) (msi.Format, error) {
	path, _ = PathAxes(path)
	fi, statErr := os.Stat(path)
	if statErr == nil && fi.IsDir() {
		return folder, nil
	}
	if f := recognizeInput(path); f != nil {
		return f, nil
	}
	if statErr != nil {
		if errors.Is(statErr, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file or folder", path)
		}
		return nil, statErr
	}
	return nil, fmt.Errorf("%s: unknown format: want %s", path, Paths())
}

// ForWrite returns the format that writing path writes: the format that
// recognizes the name, else the band stack. (A name of no format with an
// extension is not written: see CheckName.)
func ForWrite(path string) msi.Format {
	if f := recognize(path); f != nil {
		return f
	}
	return folder
}

// CheckName returns an error for an output path that no format writes:
// one that no format recognizes, with an extension, and that is not an
// existing folder. The error lists what tdsc writes (WritePaths).
func CheckName(path string) error {
	if recognize(path) != nil {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil
	}
	ext := filepath.Ext(filepath.Clean(path))
	if ext == "" {
		return nil
	}
	return fmt.Errorf("%s: tdsc writes no %s files: an output is %s", path, ext, WritePaths())
}

// CheckOutput is NewTarget(path).Check(height, width, bands, opts).
func CheckOutput(path string, height, width, bands int, opts msi.WriteOptions) error {
	return NewTarget(path).Check(height, width, bands, opts)
}

// recognize returns the first format of All that recognizes path, or nil.
func recognize(path string) msi.Format {
	for _, f := range All {
		if f.Recognize(path) {
			return f
		}
	}
	return nil
}

// recognizeInput returns the first format of All that recognizes path as
// a cube to read (msi.InputRecognizer, else Recognize), or nil.
func recognizeInput(path string) msi.Format {
	for _, f := range All {
		if r, ok := f.(msi.InputRecognizer); ok && r.RecognizeInput(path) || f.Recognize(path) {
			return f
		}
	}
	return nil
}

// Open reads the cube at path with the default options.
func Open(path string) (*msi.Cube, error) { return OpenWith(path, msi.ReadOptions{}) }

// OpenWith reads the cube at path (ForRead) with opts, which must be
// options the format takes: an axis order other than HWB for a format
// that does not take it is an *option.Error (every format takes a
// scale). The cube's Stored says how it was stored and read.
//
// A path may carry its own axis order after a final "@" (x.h5:/cube@BHW,
// see PathAxes), which replaces opts.Axes for it.
func OpenWith(path string, opts msi.ReadOptions) (*msi.Cube, error) {
	s, err := NewSource(path, opts)
	if err != nil {
		return nil, err
	}
	return s.Open()
}

// PathAxes splits the axis order a path carries after a final "@" (three
// letters H, W and B in any case: "x.h5:/cube@BHW") from the path, so
// that each path a command reads has its own layout. A path without one
// is returned as it is, with empty axes.
func PathAxes(path string) (p, axes string) {
	i := strings.LastIndexByte(path, '@')
	if i < 0 || len(path)-i != 4 {
		return path, ""
	}
	a, err := array.ParseAxes(path[i+1:])
	if err != nil {
		return path, ""
	}
	return path[:i], a
}

// checkRead returns the format of path after checking opts against it,
// and the path and options to read it with: the axes a path carries
// (PathAxes) taken out of it into the options.
func checkRead(path string, opts msi.ReadOptions) (msi.Format, string, msi.ReadOptions, error) {
	path, own := PathAxes(path)
	if own != "" {
		opts.Axes = own
	}
	axes, err := array.ParseAxes(opts.Axes)
	if err != nil {
		return nil, "", opts, err
	}
	if err := msi.CheckScale(opts.Scale); err != nil {
		return nil, "", opts, err
	}
	f, err := ForRead(path)
	if err != nil {
		return nil, "", opts, err
	}
	info := f.Info()
	if axes != array.DefaultAxes && info.Takes&msi.TakesAxes == 0 {
		return nil, "", opts, option.Errorf("axes", opts.Axes, "%s: axes apply to %s files; %s files have a fixed layout", path, joinLabels(Labels(msi.TakesAxes), "and"), info.Label)
	}
	return f, path, opts, nil
}

// Write stores c at path in the format ForWrite chooses, atomically (see
// msi.Format). An existing output is an error unless opts.Force is set.
func Write(path string, c *msi.Cube, opts msi.WriteOptions) (msi.WriteInfo, error) {
	return NewTarget(path).Write(c, opts)
}

// CreateWindow starts the output at path, in the format ForWrite chooses,
// for writing a height×width×bands cube with metadata meta a window of
// lines at a time. A format that cannot is an error saying which can.
func CreateWindow(path string, height, width, bands int, meta msi.Metadata, opts msi.WriteOptions) (msi.WindowWriter, error) {
	return NewTarget(path).CreateWindow(height, width, bands, meta, opts)
}

// windowsError says that a cube of format f cannot be read or written in
// strips, and which formats (labels) can: "a PNG band stack, which cannot
// be read in strips of lines (ENVI and .npy can)".
func windowsError(f msi.Format, verb string, labels []string) string {
	return fmt.Sprintf("a %s, which cannot be %s in strips of lines (%s can)", f.Info().Label, verb, joinLabels(labels, "and"))
}

// readOnly reports whether f does not write cubes in this build.
func readOnly(f msi.Format) bool {
	_, ok := f.(msi.ReadOnly)
	return ok
}

// windowReaders and windowWriters list the labels of the formats that read
// and write windows of lines.
func windowReaders() []string {
	var labels []string
	for _, f := range All {
		if _, ok := f.(msi.WindowOpener); ok {
			labels = append(labels, f.Info().Label)
		}
	}
	return labels
}

func windowWriters() []string {
	var labels []string
	for _, f := range All {
		if _, ok := f.(msi.WindowCreator); ok && !readOnly(f) {
			labels = append(labels, f.Info().Label)
		}
	}
	return labels
}

// Labels returns the labels of the formats that take all of opts (0:
// every format), in the order of All.
func Labels(opts msi.Options) []string {
	var labels []string
	for _, f := range All {
		if info := f.Info(); info.Takes&opts == opts {
			labels = append(labels, info.Label)
		}
	}
	return labels
}

// WindowLabels returns the labels of the formats that read windows of
// lines, and so can be denoised in strips.
func WindowLabels() []string { return windowReaders() }

// Paths lists what the paths of every format look like, for help and
// errors: "a band-stack folder, an ENVI .hdr, a .npy or a .mat[:VAR]".
func Paths() string { return paths("", false) }

// WritePaths lists what the paths of the outputs of every format that
// writes in this build (not msi.ReadOnly) look like, for help and errors:
// "a band-stack folder (an existing folder, or a path without an
// extension), an ENVI .hdr, a .npy or a .mat[:VAR]".
func WritePaths() string {
	return paths(" (an existing folder, or a path without an extension)", true)
}

// paths lists the Path of every format (with writers, of those that
// write), the band stack's followed by folderNote.
func paths(folderNote string, writers bool) string {
	var p []string
	for _, f := range All {
		if writers && readOnly(f) {
			continue
		}
		path := f.Info().Path
		if f == folder {
			path += folderNote
		}
		p = append(p, path)
	}
	return joinLabels(p, "or")
}

// joinLabels lists labels for a message: "a", "a and b", "a, b and c".
func joinLabels(labels []string, and string) string {
	if len(labels) < 2 {
		return strings.Join(labels, "")
	}
	return strings.Join(labels[:len(labels)-1], ", ") + " " + and + " " + labels[len(labels)-1]
}

// GDAL returns the release of GDAL this build reads and writes GeoTIFF
// with ("3.6.2"), or says that it has none.
func GDAL() string {
	if !gdal.Available {
		return "none (pure-Go build: no GeoTIFF)"
	}
	return gdal.Version()
}

// ScaleNote returns a note for the log when an output at path written
// with opts may not read back on the scale it was written in, else "": an
// integer array output (.npy, .mat: formats that take an element type and
// record no scale) holds the input's counts, and when the input's scale
// was found from its largest value (n-bit counts), the output's own
// largest value may tell another bit depth. (A uint16 or uint8 output
// reads back by its type; an ENVI output records its scale; a float
// array output is stored by msi.WriteOptions.UnrecordedScale so that it
// reads back.)
func ScaleNote(path string, opts msi.WriteOptions) string {
	f := ForWrite(path)
	float := opts.DType == "" || strings.HasPrefix(opts.DType, "float")
	if f.Info().Takes&msi.TakesDType == 0 || float || !opts.ScaleFromData || opts.ScaleGiven {
		return ""
	}
	if _, _, ok := msi.TypeScale(opts.DType); ok || opts.DType == "uint8" {
		return ""
	}
	return fmt.Sprintf("%s: %s counts of the input's scale ×%.6g, which its largest value set and a %s cannot record: read it with --scale %.6g, or beside its input or reference (eval --ref, --noisy), which puts it on theirs",
		path, opts.DType, opts.Scale, f.Info().Label, opts.Scale)
}
