package msi

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"tdsc/internal/atomicfile"
)

// Open reads the cube at path: a folder is read as a PNG band stack
// (ReadPNGStack), a file ending in .hdr or .img as an ENVI cube (the other
// file of the pair is found beside it). Anything else is an error, as is a
// missing path; errors name the path at fault.
func Open(path string) (*Cube, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file or folder", path)
		}
		return nil, err
	}
	if fi.IsDir() {
		c, _, err := ReadPNGStack(path)
		return c, err
	}
	if isENVIPath(path) {
		return readENVI(path)
	}
	if strings.EqualFold(filepath.Ext(path), ".png") {
		return nil, fmt.Errorf("%s: a single PNG is not a cube: give the folder of band PNGs (<scene>_NN.png)", path)
	}
	return nil, fmt.Errorf("%s: unknown format: want a folder of band PNGs or an ENVI .hdr/.img file", path)
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
	// ENVI output ignores it.
	Scene string
}

// WriteInfo reports what Write did.
type WriteInfo struct {
	// Clipped counts the voxels outside [0, 255] that a PNG band stack
	// had to clip. ENVI output stores every value as it is, so it is 0.
	Clipped int
}

// Write stores c at path. A path ending in .hdr or .img writes an ENVI
// float32 cube (path without extension plus .hdr and .img, see WriteENVI);
// any other path writes a PNG band stack folder (see WritePNGStack).
//
// Writing is atomic: the output is built under a temporary name in the same
// folder and renamed into place, and on failure nothing is left behind. An
// existing output is an error unless opts.Force is set. Non-finite values
// are an error in both formats.
func Write(path string, c *Cube, opts WriteOptions) (WriteInfo, error) {
	if isENVIPath(path) {
		return WriteInfo{}, WriteENVI(path, c, opts.Force)
	}
	return WritePNGStack(path, c, opts)
}

// RefuseExisting returns an *atomicfile.ExistsError when Write(path, …)
// would replace something that exists: for an ENVI path its .hdr or its
// .img, whatever the case of the extension given; otherwise the folder.
// Commands call it before long work, so that a run that could not write its
// result does not start.
func RefuseExisting(path string) error {
	if isENVIPath(path) {
		stem := strings.TrimSuffix(path, filepath.Ext(path))
		return atomicfile.Refuse(stem+".hdr", stem+".img")
	}
	return atomicfile.Refuse(path)
}

// isENVIPath reports whether path names an ENVI header or data file.
func isENVIPath(path string) bool {
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
