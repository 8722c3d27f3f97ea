package msi

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"tdsc/internal/atomicfile"
)

// ENVIReader reads an ENVI cube a block of lines at a time, so that a cube
// larger than memory can be processed in strips. The lines are read from
// the data file where they lie: one read per band for band-sequential
// (BSQ) files, one read for band-interleaved (BIL, BIP) files.
//
// Values are decoded as readENVI decodes the whole cube, so that a block
// equals the same lines of Open's cube.
type ENVIReader struct {
	h        *enviHeader
	dataPath string
	f        *os.File
	scale    float64
	raw      []byte // the bytes of the last block, reused
}

// OpenENVI opens the ENVI cube whose header or data file is path for reading
// by blocks of lines, the values multiplied by scale (0 means 1) as OpenWith
// does with ReadOptions.Scale. The header is parsed and the data file's size
// checked as Open does. Close releases the file.
func OpenENVI(path string, scale float64) (*ENVIReader, error) {
	if err := checkScale(scale); err != nil {
		return nil, err
	}
	if scale == 0 {
		scale = 1
	}
	h, dataPath, err := loadENVIHeader(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(dataPath)
	if err != nil {
		return nil, err
	}
	return &ENVIReader{h: h, dataPath: dataPath, f: f, scale: scale}, nil
}

// Size returns the cube's height (lines), width (samples) and band count.
func (r *ENVIReader) Size() (height, width, bands int) {
	return r.h.lines, r.h.samples, r.h.bands
}

// DType returns the name of the cube's data type (one of DTypes).
func (r *ENVIReader) DType() string { return enviTypeName(r.h.dataType) }

// Meta returns an empty cube's worth of the cube's metadata: a Cube with
// no data whose Wavelengths and Header are the file's, for an output that
// carries them (CreateENVI).
func (r *ENVIReader) Meta() *Cube {
	return &Cube{Height: r.h.lines, Width: r.h.samples, Bands: r.h.bands, Wavelengths: r.h.wavelengths, Header: r.h.scene}
}

// ReadLines returns lines y0 .. y0+n−1 of the cube, every sample and band,
// as an n×W×B cube with the file's wavelengths. A line range outside the
// cube is an error, as is a NaN or infinite value.
func (r *ENVIReader) ReadLines(y0, n int) (*Cube, error) {
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
	c := NewCube(n, h.samples, h.bands)
	if err := decodeENVI(c, raw, h, y0); err != nil {
		return nil, fmt.Errorf("%s: %v", r.dataPath, err)
	}
	applyScale(c, "", r.scale)
	c.Wavelengths = h.wavelengths
	return c, nil
}

// Close closes the data file.
func (r *ENVIReader) Close() error { return r.f.Close() }

// ENVIWriter writes an ENVI float32 cube a block of lines at a time, in
// the layout WriteENVI writes (band-sequential, little-endian, no header
// offset) and with the same header, so that a cube written in blocks is
// byte for byte the file WriteENVI writes for the whole cube.
//
// Both files are built under temporary names and renamed into place by
// Commit, as WriteENVI does; Abort, or a Commit before every line is
// written, leaves nothing behind.
type ENVIWriter struct {
	meta          *Cube // the size and header fields, no data
	hdr, img      *atomicfile.File
	written       []bool // per line
	left          int    // lines not yet written
	buf           []byte
	hdrPath, path string
}

// CreateENVI starts the ENVI float32 cube at path (its .hdr or .img
// extension, if any, replaced as WriteENVI does) for a cube of meta's size
// whose header carries meta's Wavelengths, Description and Header (meta's
// Data is not used). An existing output is an *atomicfile.ExistsError
// unless force is set.
func CreateENVI(path string, meta *Cube, force bool) (*ENVIWriter, error) {
	if meta.Height < 1 || meta.Width < 1 || meta.Bands < 1 {
		return nil, fmt.Errorf("%s: bad cube size %s", path, meta.Size())
	}
	if meta.Wavelengths != nil && len(meta.Wavelengths) != meta.Bands {
		return nil, fmt.Errorf("%s: %d wavelengths for %d bands", path, len(meta.Wavelengths), meta.Bands)
	}
	stem := path
	if IsENVIPath(path) {
		stem = strings.TrimSuffix(path, filepath.Ext(path))
	}
	hdrPath, imgPath := stem+".hdr", stem+".img"
	hdr, err := atomicfile.Create(hdrPath, force)
	if err != nil {
		return nil, err
	}
	img, err := atomicfile.Create(imgPath, force)
	if err != nil {
		hdr.Abort()
		return nil, err
	}
	m := *meta
	m.Data = nil
	return &ENVIWriter{meta: &m, hdr: hdr, img: img, written: make([]bool, meta.Height), left: meta.Height, hdrPath: hdrPath, path: imgPath}, nil
}

// WriteLines writes the lines of c as lines y0 .. y0+c.Height−1 of the
// output. c must have the output's width and band count; each line may be
// written once. A value that is NaN or does not fit in a float32 is an
// error, as in WriteENVI.
func (w *ENVIWriter) WriteLines(c *Cube, y0 int) error {
	m := w.meta
	if c.Width != m.Width || c.Bands != m.Bands || len(c.Data) != c.Height*c.Width*c.Bands {
		return fmt.Errorf("%s: a block of %s for a %s cube", w.path, c.Size(), m.Size())
	}
	if y0 < 0 || y0 > m.Height-c.Height {
		return fmt.Errorf("%s: lines [%d, %d) are outside the cube's %d lines", w.path, y0, y0+c.Height, m.Height)
	}
	for y := y0; y < y0+c.Height; y++ {
		if w.written[y] {
			return fmt.Errorf("%s: line %d written twice", w.path, y)
		}
	}
	band := c.Height * c.Width
	if cap(w.buf) < 4*band {
		w.buf = make([]byte, 4*band)
	}
	buf := w.buf[:4*band]
	for b := range c.Bands {
		for i, v := range c.Band(b) {
			f := float32(v)
			if math.IsNaN(v) || math.IsInf(float64(f), 0) {
				return fmt.Errorf("%s: value %v at band %d, line %d, sample %d (from 0) cannot be stored as float32",
					w.path, v, b, y0+i/c.Width, i%c.Width)
			}
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(f))
		}
		off := 4 * (int64(b)*int64(m.Height) + int64(y0)) * int64(m.Width)
		if _, err := w.img.WriteAt(buf, off); err != nil {
			return fmt.Errorf("%s: %v", w.path, err)
		}
	}
	for y := y0; y < y0+c.Height; y++ {
		w.written[y] = true
	}
	w.left -= c.Height
	return nil
}

// Commit writes the header and renames both files into place. Every line
// must have been written; otherwise nothing is committed and the temporary
// files are removed.
func (w *ENVIWriter) Commit() error {
	if w.left != 0 {
		w.Abort()
		return fmt.Errorf("%s: %d of %d lines were not written", w.path, w.left, w.meta.Height)
	}
	if _, err := w.hdr.WriteString(enviHeaderText(w.meta)); err != nil {
		w.Abort()
		return fmt.Errorf("%s: %v", w.hdrPath, err)
	}
	return atomicfile.Commit(w.img, w.hdr)
}

// Abort removes the temporary files. It may be called after Commit, when
// it does nothing.
func (w *ENVIWriter) Abort() {
	w.img.Abort()
	w.hdr.Abort()
}

// SetDescription sets the description the header records (Cube.Description).
func (w *ENVIWriter) SetDescription(s string) { w.meta.Description = s }
