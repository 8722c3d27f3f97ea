package formats

import (
	"errors"
	"fmt"

	"tdsc/internal/atomicfile"
	"tdsc/internal/msi"
)

// Source is the path of a cube to read, resolved to its format once
// (NewSource), with the options it is read with: what a job carries from
// the flags to every read of its input, whole or in windows of lines.
type Source struct {
	Path    string
	Format  msi.Format
	Options msi.ReadOptions
}

// NewSource resolves the cube at path to its format (ForRead) and checks
// opts against it, as OpenWith does.
// A path's own axes (PathAxes) are taken out of Path into Options.
func NewSource(path string, opts msi.ReadOptions) (Source, error) {
	f, path, opts, err := checkRead(path, opts)
	if err != nil {
		return Source{}, err
	}
	return Source{Path: path, Format: f, Options: opts}, nil
}

// Open reads the whole cube.
func (s Source) Open() (*msi.Cube, error) {
	c, err := s.Format.Open(s.Path, s.Options)
	if err != nil {
		return nil, err
	}
	c.Stored.AxesGiven = s.Options.Axes != ""
	return c, nil
}

// Size returns the cube's height, width and bands from its header alone,
// for a format that reads windows of lines (ENVI, .npy); 0, 0, 0 for
// another, whose size is known once it is read.
func (s Source) Size() (height, width, bands int, err error) {
	if _, ok := s.Format.(msi.WindowOpener); !ok {
		return 0, 0, 0, nil
	}
	r, err := s.OpenWindow()
	if err != nil {
		return 0, 0, 0, err
	}
	defer r.Close()
	height, width, bands = r.Size()
	return height, width, bands, nil
}

// Windows returns nil when the cube's format reads windows of lines, and
// otherwise an error saying what it is and which formats can ("a .mat,
// which cannot be read in strips of lines (ENVI and .npy can)"), without
// reading the cube.
func (s Source) Windows() error {
	if _, ok := s.Format.(msi.WindowOpener); !ok {
		return errors.New(windowsError(s.Format, "read", windowReaders()))
	}
	return nil
}

// OpenWindow opens the cube for reading a window of lines at a time (see
// OpenWindow).
func (s Source) OpenWindow() (msi.WindowReader, error) {
	w, ok := s.Format.(msi.WindowOpener)
	if !ok {
		return nil, fmt.Errorf("%s: %s", s.Path, windowsError(s.Format, "read", windowReaders()))
	}
	r, err := w.OpenWindow(s.Path, s.Options)
	if err != nil {
		return nil, err
	}
	return axesReader{r, s.Options.Axes != ""}, nil
}

// axesReader is a WindowReader whose Metadata says whether its axes were
// given (Storage.AxesGiven).
type axesReader struct {
	msi.WindowReader
	given bool
}

func (r axesReader) Metadata() (msi.Metadata, error) {
	m, err := r.WindowReader.Metadata()
	m.Stored.AxesGiven = r.given
	return m, err
}

// Target is the path of an output cube, resolved once (NewTarget) to the
// format that writing it writes.
type Target struct {
	Path   string
	Format msi.Format
}

// NewTarget resolves path to the format that writing it writes (ForWrite).
func NewTarget(path string) Target { return Target{Path: path, Format: ForWrite(path)} }

// Outputs returns the files or folders writing the cube creates.
func (t Target) Outputs() []string { return t.Format.Outputs(t.Path) }

// Refuse returns an *atomicfile.ExistsError when writing the cube would
// replace something that exists (for an ENVI path its .hdr or its .img,
// whatever the case of the extension given; for FILE.mat:NAME the file),
// and the error of a format that does not write (msi.ReadOnly). Jobs call
// it before long work, so that a run that could not write its result does
// not start.
func (t Target) Refuse() error {
	if r, ok := t.Format.(msi.ReadOnly); ok {
		return r.WriteError(t.Path)
	}
	return atomicfile.Refuse(t.Outputs()...)
}

// Check returns the error that writing a height×width×bands cube with
// opts would meet, found before the cube is made: a name of no format
// (CheckName) or of a format that does not write (msi.ReadOnly), an
// existing output without opts.Force, a folder that does not exist or
// cannot be written (atomicfile.Check), a cube larger than the format
// holds (msi.SizeLimiter). A size of 0×0×0 (not known yet) skips the
// last. Commands call it before they read their input, and again with the
// size once they know it.
func (t Target) Check(height, width, bands int, opts msi.WriteOptions) error {
	if err := CheckName(t.Path); err != nil {
		return err
	}
	if r, ok := t.Format.(msi.ReadOnly); ok {
		return r.WriteError(t.Path)
	}
	if err := atomicfile.Check(opts.Force, t.Outputs()...); err != nil {
		return err
	}
	if l, ok := t.Format.(msi.SizeLimiter); ok && height*width*bands > 0 {
		return l.CheckSize(t.Path, height, width, bands, opts)
	}
	return nil
}

// Write stores c, atomically (see msi.Format). A name of no format is an
// error (CheckName).
func (t Target) Write(c *msi.Cube, opts msi.WriteOptions) (msi.WriteInfo, error) {
	if err := CheckName(t.Path); err != nil {
		return msi.WriteInfo{}, err
	}
	return t.Format.Write(t.Path, c, opts)
}

// Windows returns nil when the format writes windows of lines, and
// otherwise an error saying so and which formats can.
func (t Target) Windows() error {
	if r, ok := t.Format.(msi.ReadOnly); ok {
		return r.WriteError(t.Path)
	}
	if _, ok := t.Format.(msi.WindowCreator); !ok {
		return errors.New(windowsError(t.Format, "written", windowWriters()))
	}
	return nil
}

// CreateWindow starts the output for writing a height×width×bands cube
// with metadata meta a window of lines at a time (see CreateWindow).
func (t Target) CreateWindow(height, width, bands int, meta msi.Metadata, opts msi.WriteOptions) (msi.WindowWriter, error) {
	if err := CheckName(t.Path); err != nil {
		return nil, err
	}
	if r, ok := t.Format.(msi.ReadOnly); ok {
		return nil, r.WriteError(t.Path)
	}
	w, ok := t.Format.(msi.WindowCreator)
	if !ok {
		return nil, fmt.Errorf("%s: %s", t.Path, windowsError(t.Format, "written", windowWriters()))
	}
	return w.CreateWindow(t.Path, height, width, bands, meta, opts)
}

// Lost names the metadata of c (its missing voxels included) that the
// output's format would not keep, its format not carrying it: what a
// command may warn of.
func (t Target) Lost(c *msi.Cube) []string { return c.Present(^t.Format.Info().Carries) }

// ReadLine says how the cube at path, of metadata m, was read: its format,
// element type and size, how its values were brought to the working scale
// (Storage.Units), and how many of its voxels are missing (missing < 0:
// not known, for a cube read in strips), for example
//
//	read x.hdr: ENVI int16 145×145×224, reflectance ×255 (reflectance scale factor 10000); 5 missing voxels (no-data value -9999)
func ReadLine(path string, height, width, bands int, m *msi.Metadata, missing int) string {
	label := m.Stored.Format
	if f := Named(label); f != nil {
		label = f.Info().Label
	}
	if m.Stored.DType != "" {
		label += " " + m.Stored.DType
	}
	line := fmt.Sprintf("read %s: %s %d×%d×%d, %s", path, label, height, width, bands, m.Stored.Units)
	switch {
	case missing > 0 && m.HasNoData:
		line += fmt.Sprintf("; %d missing voxels (no-data value %g)", missing, m.NoData)
	case missing > 0:
		line += fmt.Sprintf("; %d missing voxels (NaN)", missing)
	case missing < 0 && m.HasNoData:
		line += fmt.Sprintf("; no-data value %g", m.NoData)
	}
	if m.Stored.Thin(height, width, bands) {
		line += fmt.Sprintf("\nwarning: %s is read as %d lines of %d samples of %d bands (axes %s, the default): if that is not its layout, give its axes, e.g. %s@BHW or --axes BHW",
			path, height, width, bands, m.Stored.Axes, path)
	}
	return line
}
