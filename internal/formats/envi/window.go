package envi

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"tdsc/internal/atomicfile"
	"tdsc/internal/msi"
)

// reader reads an ENVI cube a block of lines at a time (msi.WindowReader),
// so that a cube larger than memory can be processed in strips. The lines
// are read from the data file where they lie: one read per band for
// band-sequential (BSQ) files, one read for band-interleaved (BIL, BIP)
// files.
//
// Values are decoded and scaled as read does for the whole cube, so that
// a block equals the same lines of Open's cube; an automatic scale that
// needs the largest value is found by one pass over the file (Prepare).
type reader struct {
	h        *enviHeader
	dataPath string
	f        *os.File
	units    readUnits // scale 0 until Prepare has found it
	raw      []byte    // the bytes of the last block, reused
}

// passBytes bounds the bytes of a block read by Prepare's pass.
const passBytes = 1 << 20

// openWindow opens the ENVI cube whose header or data file is path for
// reading by blocks of lines, the values scaled as Open scales them (scale
// 0: the header's or the automatic scale). The header is parsed and the
// data file's size checked as Open does.
func openWindow(path string, scale float64) (*reader, error) {
	if err := msi.CheckScale(scale); err != nil {
		return nil, err
	}
	if err := msi.Exists(path); err != nil {
		return nil, err
	}
	h, dataPath, err := loadENVIHeader(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(dataPath)
	if err != nil {
		return nil, err
	}
	return &reader{h: h, dataPath: dataPath, f: f, units: h.units(scale)}, nil
}

// Size returns the cube's height (lines), width (samples) and band count.
func (r *reader) Size() (height, width, bands int) {
	return r.h.lines, r.h.samples, r.h.bands
}

// Prepare finds the automatic scale, when it needs the largest value, in
// one pass over the file by blocks of lines, checking ctx before each and
// calling progress (if not nil) with the lines read.
func (r *reader) Prepare(ctx context.Context, progress func(lines int)) error {
	if r.units.scale != 0 {
		return nil
	}
	lineBytes := r.h.samples * r.h.bands * enviBytes(r.h.dataType)
	step := max(1, passBytes/lineBytes)
	largest := math.Inf(-1)
	for y0 := 0; y0 < r.h.lines; y0 += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		if progress != nil {
			progress(y0)
		}
		c, err := r.physical(y0, min(step, r.h.lines-y0))
		if err != nil {
			return err
		}
		largest = max(largest, msi.Largest(c.Data))
	}
	if progress != nil {
		progress(r.h.lines)
	}
	r.units.scale, r.units.text = r.h.autoScale(largest)
	r.units.fromData = true
	return nil
}

// Metadata returns the cube's metadata as Open sets it.
func (r *reader) Metadata() (msi.Metadata, error) {
	if err := r.Prepare(context.Background(), nil); err != nil {
		return msi.Metadata{}, err
	}
	return r.h.metadata(r.units), nil
}

// ReadLines returns lines y0 .. y0+n−1 of the cube, every sample and band,
// as an n×W×B cube on the working scale with the file's wavelengths,
// missing voxels NaN. A line range outside the cube is an error, as is an
// infinite value.
func (r *reader) ReadLines(y0, n int) (*msi.Cube, error) {
	if err := r.Prepare(context.Background(), nil); err != nil {
		return nil, err
	}
	c, err := r.physical(y0, n)
	if err != nil {
		return nil, err
	}
	scaleValues(c.Data, r.units.scale)
	c.Wavelengths = r.h.meta.Wavelengths
	return c, nil
}

// physical returns lines y0 .. y0+n−1 of the cube as physical values
// (decodeENVI), not scaled.
func (r *reader) physical(y0, n int) (*msi.Cube, error) {
	h := r.h
	if n < 1 || y0 < 0 || y0 > h.lines-n {
		return nil, fmt.Errorf("%s: lines [%d, %d) are outside the cube's %d lines", r.dataPath, y0, y0+n, h.lines)
	}
	size := enviBytes(h.dataType)
	lineBytes := h.samples * size // one band of one line
	block := n * lineBytes * h.bands
	if cap(r.raw) < block {
		r.raw = make([]byte, block)
	}
	raw := r.raw[:block]
	if h.interleave == "bsq" {
		// Band b's lines are at (b·L + y0)·S values; gathered band after
		// band, they are the BSQ layout of an n-line cube.
		bandBytes := n * lineBytes
		for b := range h.bands {
			off := int64(h.headerOffset) + (int64(b)*int64(h.lines)+int64(y0))*int64(lineBytes)
			if _, err := r.f.ReadAt(raw[b*bandBytes:(b+1)*bandBytes], off); err != nil {
				return nil, fmt.Errorf("%s: %v", r.dataPath, err)
			}
		}
	} else {
		// BIL and BIP keep a line's bands together: the block is contiguous
		// and is the layout of an n-line cube.
		off := int64(h.headerOffset) + int64(y0)*int64(lineBytes)*int64(h.bands)
		if _, err := r.f.ReadAt(raw, off); err != nil {
			return nil, fmt.Errorf("%s: %v", r.dataPath, err)
		}
	}
	c := msi.NewCube(n, h.samples, h.bands)
	if err := decodeENVI(c, raw, h, y0); err != nil {
		return nil, fmt.Errorf("%s: %v", r.dataPath, err)
	}
	return c, nil
}

// Close closes the data file.
func (r *reader) Close() error { return r.f.Close() }

// writer writes an ENVI float32 cube a block of lines at a time
// (msi.WindowWriter), in the layout write writes (band-sequential,
// little-endian, no header offset) and with the same header, so that a
// cube written in blocks is byte for byte the file write writes for the
// whole cube.
//
// Both files are built under temporary names and renamed into place by
// Commit, as write does; Abort, or a Commit before every line is written,
// leaves nothing behind.
type writer struct {
	height, width, bands int
	meta                 msi.Metadata
	units                storedUnits
	largest              float64 // of the working values written, missing aside
	hdr, img             *atomicfile.File
	lines                *msi.Lines
	buf                  []byte
	hdrPath, path        string
	opts                 msi.WriteOptions // its Err stops WriteLines between bands
}

// create starts the ENVI float32 cube at path (its .hdr or .img
// extension, if any, replaced as write does) for a height×width×bands cube
// whose header carries meta, stored in the units of opts (see headerText).
// An existing output is an *atomicfile.ExistsError unless opts.Force is
// set; once opts.Context is cancelled, WriteLines returns its error.
func create(path string, height, width, bands int, meta msi.Metadata, opts msi.WriteOptions) (*writer, error) {
	if err := msi.CheckCreate(path, height, width, bands, &meta, opts.Scale); err != nil {
		return nil, err
	}
	units, err := unitsOf(opts, bands)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	hdrPath, imgPath := outputPaths(path)
	hdr, err := atomicfile.Create(hdrPath, opts.Force)
	if err != nil {
		return nil, err
	}
	img, err := atomicfile.Create(imgPath, opts.Force)
	if err != nil {
		hdr.Abort()
		return nil, err
	}
	return &writer{height: height, width: width, bands: bands, meta: meta, units: units, largest: math.Inf(-1), hdr: hdr, img: img, lines: msi.NewLines(height),
		hdrPath: hdrPath, path: imgPath, opts: opts}, nil
}

// WriteLines writes the lines of c as lines y0 .. y0+c.Height−1 of the
// output, in the writer's units, missing (NaN) voxels as the no-data
// value (NaN without one). c must have the output's width and band count;
// each line may be written once. A value that does not fit in a float32
// is an error, as in write; so is the cancellation of the writer's
// context, checked before every band.
func (w *writer) WriteLines(c *msi.Cube, y0 int) error {
	if c.Width != w.width || c.Bands != w.bands || len(c.Data) != c.Height*c.Width*c.Bands {
		return fmt.Errorf("%s: a block of %s for a %d×%d×%d cube", w.path, c.Size(), w.height, w.width, w.bands)
	}
	if err := w.lines.Check(y0, c.Height); err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	band := c.Height * c.Width
	if cap(w.buf) < 4*band {
		w.buf = make([]byte, 4*band)
	}
	buf := w.buf[:4*band]
	for b := range c.Bands {
		if err := w.opts.Err(); err != nil {
			return err
		}
		for i, v := range c.Band(b) {
			if v > w.largest { // NaN is not
				w.largest = v
			}
			f := float32(w.stored(v, b))
			if math.IsInf(float64(f), 0) {
				return fmt.Errorf("%s: value %v at band %d, line %d, sample %d (from 0) cannot be stored as float32",
					w.path, v, b, y0+i/c.Width, i%c.Width)
			}
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(f))
		}
		off := 4 * (int64(b)*int64(w.height) + int64(y0)) * int64(w.width)
		if _, err := w.img.WriteAt(buf, off); err != nil {
			return fmt.Errorf("%s: %v", w.path, err)
		}
	}
	w.lines.Mark(y0, c.Height)
	return nil
}

// stored returns the value stored for working value v of band b: the
// no-data value (or NaN) for a missing voxel, else v in the writer's
// units.
func (w *writer) stored(v float64, b int) float64 {
	u := w.units
	switch {
	case math.IsNaN(v) && w.meta.HasNoData:
		return w.meta.NoData
	case u.onWorkingScale():
		return v
	case u.gains == nil:
		return v / u.scale
	}
	return (v/u.scale - u.offsets[b]) / u.gains[b]
}

// SetProcessing sets the history the header records (Metadata.Processing).
func (w *writer) SetProcessing(s string) { w.meta.Processing = s }

// Commit writes the header and renames both files into place. Every line
// must have been written; otherwise nothing is committed and the temporary
// files are removed.
func (w *writer) Commit() error {
	if err := w.lines.Done(); err != nil {
		w.Abort()
		return fmt.Errorf("%s: %v", w.path, err)
	}
	u := w.units
	u.dark = u.scale == 1 && !(w.largest > 2)
	if _, err := w.hdr.WriteString(headerText(w.height, w.width, w.bands, &w.meta, u)); err != nil {
		w.Abort()
		return fmt.Errorf("%s: %v", w.hdrPath, err)
	}
	return atomicfile.Commit(w.img, w.hdr)
}

// Abort removes the temporary files. It may be called after Commit, when
// it does nothing.
func (w *writer) Abort() {
	w.img.Abort()
	w.hdr.Abort()
}
