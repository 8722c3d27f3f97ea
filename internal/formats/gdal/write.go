//go:build gdal

package gdal

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"tdsc/internal/atomicfile"
	"tdsc/internal/formats/array"
	"tdsc/internal/msi"
)

// creationOptions are GDAL's GeoTIFF creation options of an output:
// tiled, deflate-compressed, pixel-interleaved, BigTIFF when the file
// could exceed 4 GiB.
var creationOptions = []string{"TILED=YES", "COMPRESS=DEFLATE", "INTERLEAVE=PIXEL", "BIGTIFF=IF_SAFER"}

// stagingOptions are those of the uncompressed file that the lines are
// written to before the output is made from it: strips are written where
// they belong in any order, which a compressed tiled file cannot take.
var stagingOptions = []string{"INTERLEAVE=BAND", "BIGTIFF=YES"}

// Write stores c at path as a GeoTIFF (see CreateWindow).
func (f format) Write(path string, c *msi.Cube, opts msi.WriteOptions) (msi.WriteInfo, error) {
	if err := c.Check(); err != nil {
		return msi.WriteInfo{}, fmt.Errorf("%s: %v", path, err)
	}
	w, err := create(path, c.Height, c.Width, c.Bands, c.Metadata, opts)
	if err != nil {
		return msi.WriteInfo{}, err
	}
	if err := w.WriteLines(c, 0); err != nil {
		w.Abort()
		return msi.WriteInfo{}, err
	}
	return msi.WriteInfo{Clipped: w.clipped}, w.Commit()
}

// CreateWindow starts the GeoTIFF at path for a height×width×bands cube
// written a window of lines at a time.
func (format) CreateWindow(path string, height, width, bands int, meta msi.Metadata, opts msi.WriteOptions) (msi.WindowWriter, error) {
	return create(path, height, width, bands, meta, opts)
}

// writer writes a GeoTIFF a window of lines at a time (msi.WindowWriter):
// the lines go to an uncompressed staging GeoTIFF beside the output, and
// Commit copies it into the output with creationOptions, so that the
// output is the same bytes however its lines were written.
//
// Values: working values divided by opts.UnrecordedScale, then, for an
// integer output of an input with gains and offsets (GDAL's scale and
// offset, ENVI's data gains), stored = (physical − offset)/gain with the
// gains and offsets recorded as the bands' scale and offset; rounded and
// clipped to an integer type (array.Encode), a missing voxel stored as
// the no-data value (NaN in a float type without one).
type writer struct {
	path           string
	height, width  int
	bands          int
	meta           msi.Metadata
	t              array.Type
	scale          float64
	gains, offsets []float64
	stage          *dataset
	stagePath      string
	out            *atomicfile.File
	lines          *msi.Lines
	clipped        int
	opts           msi.WriteOptions
}

// create starts the output (see writer).
func create(path string, height, width, bands int, meta msi.Metadata, opts msi.WriteOptions) (*writer, error) {
	if !geoTIFF(path) {
		return nil, fmt.Errorf("%s: GDAL writes GeoTIFF: name the output .tif or .tiff", path)
	}
	if err := msi.CheckCreate(path, height, width, bands, &meta, opts.Scale); err != nil {
		return nil, err
	}
	t, err := array.TypeNamed(opts.DType)
	if err != nil {
		return nil, err
	}
	gt, _ := gdalType(t.Name)
	w := &writer{path: path, height: height, width: width, bands: bands, meta: meta, t: t, scale: opts.UnrecordedScale(t.Float),
		lines: msi.NewLines(height), opts: opts}
	if !t.Float && opts.Gains != nil {
		if len(opts.Gains) != bands || len(opts.Offsets) != bands {
			return nil, fmt.Errorf("%s: %d gains and %d offsets for %d bands", path, len(opts.Gains), len(opts.Offsets), bands)
		}
		w.gains, w.offsets = opts.Gains, opts.Offsets
	}
	if w.out, err = atomicfile.Create(path, opts.Force); err != nil {
		return nil, err
	}
	stage, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".stage-*.tif")
	if err != nil {
		w.out.Abort()
		return nil, fmt.Errorf("%s: cannot create a temporary file beside it: %v", path, err)
	}
	stage.Close()
	w.stagePath = stage.Name()
	if w.stage, err = createDataset("GTiff", w.stagePath, width, height, bands, gt, stagingOptions); err != nil {
		w.Abort()
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return w, nil
}

// WriteLines writes the lines of c as lines y0 .. y0+c.Height−1.
func (w *writer) WriteLines(c *msi.Cube, y0 int) error {
	if c.Width != w.width || c.Bands != w.bands || len(c.Data) != c.Height*c.Width*c.Bands {
		return fmt.Errorf("%s: a block of %s for a %d×%d×%d cube", w.path, c.Size(), w.height, w.width, w.bands)
	}
	if err := w.lines.Check(y0, c.Height); err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	if err := w.opts.Err(); err != nil {
		return err
	}
	// The values in the stored units, then as stored (rounded, clipped,
	// missing voxels marked), read back as float64 for GDAL.
	s := &msi.Cube{Height: c.Height, Width: c.Width, Bands: c.Bands, Data: make([]float64, len(c.Data))}
	for b := range c.Bands {
		src, dst := c.Band(b), s.Band(b)
		for i, v := range src {
			v /= w.scale
			if w.gains != nil {
				v = (v - w.offsets[b]) / w.gains[b]
			}
			dst[i] = v
		}
	}
	l := array.NewLayout([3]int{c.Bands, c.Height, c.Width}, defaultAxes, false)
	raw, clipped, err := array.Encode(s, l, w.t, 1, y0, w.meta.NoData, w.meta.HasNoData)
	if err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	decode := array.Decoder(kindOf(w.t), w.t.Size, binary.LittleEndian)
	for i := range s.Data {
		s.Data[i] = decode(raw[i*w.t.Size:])
	}
	reg := region{y0: y0, nx: w.width, ny: c.Height, nb: w.bands}
	if err := w.stage.io(true, reg, s.Data); err != nil {
		return fmt.Errorf("%s: %v", w.path, err)
	}
	w.clipped += clipped
	w.lines.Mark(y0, c.Height)
	return nil
}

// kindOf returns the decoder kind of t: 'f', 'u' or 'i'.
func kindOf(t array.Type) byte {
	switch {
	case t.Float:
		return 'f'
	case strings.HasPrefix(t.Name, "u"):
		return 'u'
	}
	return 'i'
}

// SetProcessing sets the history the output records.
func (w *writer) SetProcessing(s string) { w.meta.Processing = s }

// Commit records the metadata, copies the staging file into the output
// with the output's creation options, and renames it into place. Every
// line must have been written; otherwise nothing is committed.
func (w *writer) Commit() error {
	if err := w.lines.Done(); err != nil {
		w.Abort()
		return fmt.Errorf("%s: %v", w.path, err)
	}
	w.describe()
	err := w.stage.close()
	w.stage = nil
	var src *dataset
	if err == nil {
		src, err = open(w.stagePath, false)
	}
	if err == nil {
		err = src.copyTo("GTiff", w.out.TempName(), creationOptions)
		if cerr := src.close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		w.Abort()
		return fmt.Errorf("%s: %v", w.path, err)
	}
	os.Remove(w.stagePath)
	return atomicfile.Commit(w.out)
}

// describe records the metadata in the staging file: georeferencing,
// description and history, and per band its description, no-data value,
// scale and offset, wavelength and FWHM (in nanometres, as the items
// "wavelength", "fwhm" and "wavelength_units" that GDAL's ENVI driver
// uses).
func (w *writer) describe() {
	m := &w.meta
	if m.Georef != nil {
		w.stage.setGeoref(m.Georef.Transform, m.Georef.Projection)
	}
	if m.Description != "" {
		w.stage.setDatasetItem("TIFFTAG_IMAGEDESCRIPTION", m.Description)
	}
	if m.Processing != "" {
		w.stage.setDatasetItem("TDSC_PROCESSING", m.Processing)
	}
	for b := range w.bands {
		var items []string
		if m.Wavelengths != nil {
			items = append(items, "wavelength", strconv.FormatFloat(m.Wavelengths[b], 'g', -1, 64), "wavelength_units", "Nanometers")
		}
		if m.FWHM != nil {
			items = append(items, "fwhm", strconv.FormatFloat(m.FWHM[b], 'g', -1, 64))
		}
		desc := ""
		if m.BandNames != nil {
			desc = m.BandNames[b]
		}
		gain, offset := 1.0, 0.0
		if w.gains != nil {
			gain, offset = w.gains[b], w.offsets[b]
		}
		w.stage.setBand(b, desc, m.NoData, m.HasNoData, gain, offset, w.gains != nil, items)
	}
}

// Abort removes what was written.
func (w *writer) Abort() {
	if w.stage != nil {
		w.stage.close()
		w.stage = nil
	}
	if w.stagePath != "" {
		os.Remove(w.stagePath)
		w.stagePath = ""
	}
	w.out.Abort()
}
