//go:build gdal

package gdal

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"tdsc/internal/formats/array"
	"tdsc/internal/msi"
)

// Available reports whether this build has GDAL.
const Available = true

// region is a box of a GDAL raster: samples x0 .. x0+nx−1, lines y0 ..
// y0+ny−1, bands b0 .. b0+nb−1 (from 0).
type region struct{ x0, y0, b0, nx, ny, nb int }

func (r region) size() int { return r.nx * r.ny * r.nb }

// Open reads the whole raster at path (see the package comment).
func (f format) Open(path string, opts msi.ReadOptions) (*msi.Cube, error) {
	r, err := openReader(path, opts)
	if err != nil {
		return nil, err
	}
	defer r.ds.close()
	h, w, b := r.Size()
	// GDAL's values come as float64 into a buffer beside the cube.
	if err := msi.CheckFits(path, h, w, b, 8*int64(h)*int64(w)*int64(b), opts.Budget); err != nil {
		return nil, err
	}
	c, err := r.ReadLines(0, h)
	if err != nil {
		return nil, err
	}
	meta, err := r.Metadata()
	if err != nil {
		return nil, err
	}
	c.Metadata = meta
	return c, nil
}

// OpenWindow opens the raster at path for reading a window of lines at a
// time.
func (format) OpenWindow(path string, opts msi.ReadOptions) (msi.WindowReader, error) {
	return openReader(path, opts)
}

// reader reads a raster through GDAL a window of lines at a time
// (msi.WindowReader): one RasterIO call of the lines' region, in every
// band, as float64, which holds every value of the integer types GDAL
// reads exactly.
type reader struct {
	path string
	ds   *dataset
	// dims are GDAL's bands, lines and samples; axes names them (in that
	// order) as the cube's; hdim is the one that is the cube's lines.
	dims  [3]int
	axes  string
	hdim  int
	dtype string
	float bool
	// Per GDAL band: the no-data value, and the gain and offset (nil
	// when no band states them).
	noData         []float64
	hasNoData      []bool
	gains, offsets []float64
	scale          float64 // 0 until Prepare has found it
	given          bool
	fromData       bool // the scale was found from the values (msi.Storage.FromData)
	units          string
}

// passValues bounds the values of a window read by Prepare's pass.
const passValues = 1 << 18

// defaultAxes is GDAL's own order of a raster's dimensions.
const defaultAxes = "BHW"

// openReader opens path through GDAL and reads what every window needs.
func openReader(path string, opts msi.ReadOptions) (*reader, error) {
	axes := defaultAxes
	if opts.Axes != "" {
		var err error
		if axes, err = array.ParseAxes(opts.Axes); err != nil {
			return nil, err
		}
	}
	if err := msi.CheckScale(opts.Scale); err != nil {
		return nil, err
	}
	if !datasetName.MatchString(path) {
		if err := msi.Exists(path); err != nil {
			return nil, err
		}
	}
	ds, err := open(path, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	h, w, b := ds.size()
	if b == 0 || h == 0 || w == 0 {
		ds.close()
		return nil, fmt.Errorf("%s: GDAL shows no raster in it (%d bands of %d×%d): name one of its datasets (gdalinfo lists them as SUBDATASET_n_NAME)", path, b, h, w)
	}
	r := &reader{path: path, ds: ds, dims: [3]int{b, h, w}, axes: axes, hdim: strings.IndexByte(axes, 'H'),
		noData: make([]float64, b), hasNoData: make([]bool, b), scale: opts.Scale, given: opts.Scale != 0}
	if r.given {
		r.units = msi.GivenScale(opts.Scale)
	}
	gains, offsets := make([]float64, b), make([]float64, b)
	stated := false
	for i := range b {
		t, ok := typeName(ds.dataType(i))
		if !ok {
			ds.close()
			return nil, fmt.Errorf("%s: band %d holds %s values; a cube needs integers or floats", path, i+1, t)
		}
		if i == 0 {
			r.dtype = t
		} else if t != r.dtype {
			ds.close()
			return nil, fmt.Errorf("%s: band %d holds %s values, band 1 %s: the bands of a cube must have one type", path, i+1, t, r.dtype)
		}
		r.noData[i], r.hasNoData[i] = ds.noData(i)
		var s bool
		gains[i], offsets[i], s = ds.scaleOffset(i)
		stated = stated || s
	}
	if stated {
		r.gains, r.offsets = gains, offsets
	}
	tt, _ := array.ReadType(r.dtype)
	r.float = tt.Float || stated
	return r, nil
}

// Size returns the cube's height, width and band count.
func (r *reader) Size() (height, width, bands int) {
	var s [3]int
	for k, a := range r.axes {
		s[strings.IndexRune("HWB", a)] = r.dims[k]
	}
	return s[0], s[1], s[2]
}

// Prepare finds the automatic scale when the user gives none: the element
// type's (msi.TypeScale) for values without a GDAL scale and offset, else
// msi.AutoScale's from the largest physical value, found in one pass over
// the raster by windows of lines, checking ctx before each and calling
// progress (if not nil) with the lines read.
func (r *reader) Prepare(ctx context.Context, progress func(lines int)) error {
	if r.scale != 0 {
		return nil
	}
	if r.gains == nil {
		if s, text, ok := msi.TypeScale(r.dtype); ok {
			r.scale, r.units = s, text
			return nil
		}
	}
	h, w, b := r.Size()
	step := max(1, passValues/(w*b))
	largest := math.Inf(-1)
	for y0 := 0; y0 < h; y0 += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		if progress != nil {
			progress(y0)
		}
		c, err := r.physical(y0, min(step, h-y0))
		if err != nil {
			return err
		}
		largest = max(largest, msi.Largest(c.Data))
	}
	if progress != nil {
		progress(h)
	}
	r.scale, r.units = msi.AutoScale(r.float, largest)
	r.fromData = true
	if r.gains != nil {
		r.units = "GDAL scale and offset applied, then " + r.units
	}
	return nil
}

// ReadLines returns lines y0 .. y0+n−1 of the cube on the working scale,
// missing voxels NaN.
func (r *reader) ReadLines(y0, n int) (*msi.Cube, error) {
	if err := r.Prepare(context.Background(), nil); err != nil {
		return nil, err
	}
	c, err := r.physical(y0, n)
	if err != nil {
		return nil, err
	}
	array.Scale(c.Data, r.scale)
	c.Wavelengths = r.wavelengths()
	return c, nil
}

// physical returns lines y0 .. y0+n−1 of the cube as physical values:
// stored × gain + offset, a band's no-data value NaN.
func (r *reader) physical(y0, n int) (*msi.Cube, error) {
	h, _, _ := r.Size()
	if n < 1 || y0 < 0 || y0 > h-n {
		return nil, fmt.Errorf("%s: lines [%d, %d) are outside the cube's %d lines", r.path, y0, y0+n, h)
	}
	// The region: every band, line and sample of GDAL's, but along the
	// dimension that is the cube's lines.
	lo, count := [3]int{}, r.dims
	lo[r.hdim], count[r.hdim] = y0, n
	reg := region{b0: lo[0], y0: lo[1], x0: lo[2], nb: count[0], ny: count[1], nx: count[2]}
	buf := make([]float64, reg.size())
	if err := r.ds.io(false, reg, buf); err != nil {
		return nil, fmt.Errorf("%s: %v", r.path, err)
	}
	l := array.NewLayout(count, r.axes, false)
	c := msi.NewCube(l.Height, l.Width, l.Bands)
	for b := range l.Bands {
		band := c.Band(b)
		for y := range l.Height {
			for x := range l.Width {
				at := [3]int{y0 + y, x, b} // the voxel's index along H, W and B
				gb := at[strings.IndexByte("HWB", r.axes[0])]
				v := buf[b*l.SB+y*l.SY+x*l.SX]
				switch {
				case r.hasNoData[gb] && v == r.noData[gb]:
					v = math.NaN()
				case math.IsInf(v, 0):
					return nil, fmt.Errorf("%s: value %v at band %d, line %d, sample %d (from 0): infinite values are not supported (NaN or the no-data value marks a missing value)", r.path, v, b, y0+y, x)
				case r.gains != nil:
					v = v*r.gains[gb] + r.offsets[gb]
				}
				band[y*l.Width+x] = v
			}
		}
	}
	return c, nil
}

// Close closes the dataset.
func (r *reader) Close() error { return r.ds.close() }

// Metadata returns the cube's metadata, as Open sets it.
func (r *reader) Metadata() (msi.Metadata, error) {
	if err := r.Prepare(context.Background(), nil); err != nil {
		return msi.Metadata{}, err
	}
	m := msi.Metadata{
		Stored: msi.Storage{Format: name, DType: r.dtype, Axes: r.axes, Scale: r.scale, ScaleGiven: r.given, FromData: r.fromData, Gains: r.gains, Offsets: r.offsets, Units: r.units},
	}
	m.Description = r.ds.metadataItem(-1, "TIFFTAG_IMAGEDESCRIPTION", "")
	if r.axes[0] != 'B' {
		return m, nil // GDAL's bands are not the cube's: their metadata is not
	}
	m.Wavelengths = r.wavelengths()
	m.FWHM = r.bandNumbers("fwhm")
	m.NoData, m.HasNoData = r.noData[0], r.hasNoData[0]
	var names []string
	for b := range r.dims[0] {
		names = append(names, r.ds.description(b))
	}
	if strings.Join(names, "") != "" {
		m.BandNames = names
	}
	if r.axes == defaultAxes {
		if t, p := r.ds.georef(); t != nil || p != "" {
			m.Georef = &msi.Georef{Projection: p}
			if t != nil {
				m.Georef.Transform = *t
			} else {
				m.Georef.Transform = [6]float64{0, 1, 0, 0, 0, 1}
			}
		}
	}
	return m, nil
}

// wavelengths returns the bands' wavelengths in nanometres, or nil (see
// bandNumbers).
func (r *reader) wavelengths() []float64 {
	if r.axes[0] != 'B' {
		return nil
	}
	return r.bandNumbers("wavelength")
}

// bandNumbers returns one number per band for item key ("wavelength",
// "fwhm"), in nanometres: every band's metadata item key in the default
// domain (as GDAL's ENVI driver and tdsc's GeoTIFF give them), else the
// dataset's item key of the ENVI domain, a list "{a, b, …}"; converted
// by the unit of item "wavelength_units" (nanometres when absent). Nil
// when the numbers are missing, not finite or one short.
func (r *reader) bandNumbers(key string) []float64 {
	bands := r.dims[0]
	values := make([]string, bands)
	unit := r.ds.metadataItem(0, "wavelength_units", "")
	for b := range bands {
		values[b] = r.ds.metadataItem(b, key, "")
	}
	if values[0] == "" {
		values = strings.Split(strings.Trim(r.ds.metadataItem(-1, key, "ENVI"), "{} "), ",")
		unit = r.ds.metadataItem(-1, "wavelength_units", "ENVI")
	}
	factor, ok := nanometres(unit)
	if !ok || len(values) != bands {
		return nil
	}
	out := make([]float64, bands)
	for i, s := range values {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		out[i] = v * factor
	}
	return out
}

// nanometres returns the factor that brings wavelengths in unit to
// nanometres (ENVI's and GDAL's names of units), and whether unit is one
// of length.
func nanometres(unit string) (float64, bool) {
	switch strings.ToLower(strings.TrimSpace(unit)) {
	case "", "nanometers", "nanometres", "nm":
		return 1, true
	case "micrometers", "micrometres", "microns", "um", "µm":
		return 1000, true
	case "millimeters", "millimetres", "mm":
		return 1e6, true
	}
	return 0, false
}
