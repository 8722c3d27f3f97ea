// Package envi reads and writes cubes as ENVI files: a text header
// (X.hdr) beside the raw values (X.img). It reads band-sequential (BSQ),
// band-interleaved-by-line (BIL) and by-pixel (BIP) files of uint8, int16,
// uint16, int32, uint32, int64, uint64 (64-bit integers rounded to the
// nearest float64 above 2⁵³), float32 and float64 values of either byte
// order, named by the header or the data file (.img, .dat, .raw, .bsq,
// .bil, .bip), whole or a window of lines at a time, and writes float32 BSQ little-endian, whole
// or a window of lines at a time.
//
// Units. Reading applies the header's data gain values and data offset
// values (physical = stored × gain + offset, per band), then the scale of
// msi's rule of units: the given one, else 255/F for a reflectance scale
// factor F (stored = reflectance × F), else msi.AutoScale's from the data
// type (floats, or any type with gains) and the largest value. Writing
// undoes them: an output holds the input's units, and its header records
// the scale as a reflectance scale factor (when it is not 1) and the
// gains and offsets, so that it reads back as it was written.
//
// No data. A voxel equal to the data ignore value (as stored), or NaN in
// a float file, is missing: NaN in the cube. Writing stores NaN voxels as
// the cube's no-data value, exactly, or as NaN when it has none.
//
// Metadata: the header's description, wavelength (with its units), fwhm,
// band names, data ignore value and map info with coordinate system
// string (north-up; msi.Georef) map to the neutral fields of
// msi.Metadata, and every field that describes the scene rather than the
// data layout (those and map info, coordinate system string, sensor type,
// …) is kept verbatim, in order, in Metadata.Fields, so that an ENVI
// output carries them unchanged. A neutral field that has no verbatim
// field of the same key (a cube read from another format) is written from
// its value.
package envi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"tdsc/internal/msi"
)

// name is the format's name in Storage.Format and in Metadata.Fields.
const name = "envi"

// Format is the ENVI format.
var Format msi.Format = format{}

type format struct{}

func (format) Info() msi.Info {
	return msi.Info{Name: name, Label: "ENVI", Path: "an ENVI .hdr",
		Carries: msi.CarriesWavelengths | msi.CarriesFWHM | msi.CarriesBandNames | msi.CarriesDescription | msi.CarriesNoData | msi.CarriesMissing | msi.CarriesGeoref}
}

// Recognize reports whether path ends in .hdr or .img, in any case.
func (format) Recognize(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".hdr" || ext == ".img"
}

// dataExtensions are the extensions of ENVI data files that name a cube
// to read, as .img does: the header is found beside them (enviPaths).
var dataExtensions = []string{".img", ".raw", ".dat", ".bsq", ".bil", ".bip"}

// RecognizeInput reports whether path names an ENVI cube to read: a .hdr,
// or a data file of one of dataExtensions, in any case.
func (format) RecognizeInput(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".hdr" || slices.Contains(dataExtensions, ext)
}

// Outputs returns the header and data file that writing path makes: path
// with its .hdr or .img extension replaced by .hdr and .img.
func (format) Outputs(path string) []string {
	hdr, img := outputPaths(path)
	return []string{hdr, img}
}

// outputPaths returns the header and data file of an output named path,
// with or without its extension.
func outputPaths(path string) (hdr, img string) {
	stem := path
	if Format.Recognize(path) {
		stem = strings.TrimSuffix(path, filepath.Ext(path))
	}
	return stem + ".hdr", stem + ".img"
}

// Open reads the ENVI cube whose header or data file is path (the other
// file of the pair is found beside it, see dataPaths), its values brought
// to the working scale (see the package comment; opts.Scale, when not 0,
// is the scale). A cube larger than opts.Budget is refused before its
// data is read.
func (format) Open(path string, opts msi.ReadOptions) (*msi.Cube, error) {
	if err := msi.CheckScale(opts.Scale); err != nil {
		return nil, err
	}
	if err := msi.Exists(path); err != nil {
		return nil, err
	}
	return read(path, opts.Scale, opts.Budget)
}

// Write writes c as an ENVI float32 cube (see write) in the units
// opts.Scale, Gains and Offsets give; its axes and element type do not
// apply.
func (format) Write(path string, c *msi.Cube, opts msi.WriteOptions) (msi.WriteInfo, error) {
	return msi.WriteInfo{}, write(path, c, opts)
}

// OpenWindow opens the cube for reading a window of lines at a time (see
// Reader).
func (format) OpenWindow(path string, opts msi.ReadOptions) (msi.WindowReader, error) {
	return openWindow(path, opts.Scale)
}

// CreateWindow starts an ENVI output written a window of lines at a time
// (see Writer).
func (format) CreateWindow(path string, height, width, bands int, meta msi.Metadata, opts msi.WriteOptions) (msi.WindowWriter, error) {
	return create(path, height, width, bands, meta, opts)
}

// ENVI data types read by this package (the "data type" header field).
const (
	enviUint8   = 1
	enviInt16   = 2
	enviInt32   = 3
	enviFloat32 = 4
	enviFloat64 = 5
	enviUint16  = 12
	enviUint32  = 13
	enviInt64   = 14
	enviUint64  = 15
)

// enviBytes maps each supported data type to the size of one value.
func enviBytes(dataType int) int {
	switch dataType {
	case enviUint8:
		return 1
	case enviInt16, enviUint16:
		return 2
	case enviInt32, enviUint32, enviFloat32:
		return 4
	case enviInt64, enviUint64, enviFloat64:
		return 8
	}
	return 0
}

// enviHeader is what this package takes from an ENVI header.
type enviHeader struct {
	samples, lines, bands int // width, height, band count
	dataType              int
	interleave            string       // "bsq", "bil" or "bip"
	bigEndian             bool         // byte order = 1
	headerOffset          int          // bytes to skip at the start of the data file
	meta                  msi.Metadata // the scene's metadata; the no-data value as stored
	// reflectance is the reflectance scale factor (stored = reflectance ×
	// factor), 0 when the header has none.
	reflectance float64
	// gains and offsets are the data gain and offset values (physical =
	// stored × gain + offset), nil when the header has none; offsets are
	// zeros when only gains are given.
	gains, offsets []float64
}

// tdscDescription and tdscUnitsDescription start the description tdsc
// writes when the cube has no scene description of its own, on the
// working scale and in the input's units; such a description is tdsc's,
// not the scene's, and is not carried on.
const (
	tdscDescription      = "multispectral cube, [0, 255] intensity scale"
	tdscUnitsDescription = "multispectral cube in the units of the cube it was made from"
)

// isTDSCDescription reports whether a description is one tdsc wrote.
func isTDSCDescription(d string) bool {
	return strings.HasPrefix(d, tdscDescription) || strings.HasPrefix(d, tdscUnitsDescription)
}

// layoutFields are the ENVI header fields that describe how the values are
// stored or scaled rather than the scene, and the one tdsc writes about its
// own processing; they are not carried from an input to an output, which
// has its own layout (float32 BSQ on the working scale) and processing.
// (The data ignore value is taken into Metadata.NoData and written from
// there; the scale factor, gains and offsets into Storage, and written
// from the options that store an output like its input.)
var layoutFields = map[string]bool{
	"samples": true, "lines": true, "bands": true, "header offset": true, "file type": true,
	"data type": true, "interleave": true, "byte order": true, "data gain values": true,
	"data offset values": true, "reflectance scale factor": true, "data ignore value": true,
	"data reflectance gain values": true, "data reflectance offset values": true,
	"tdsc processing": true,
}

// maxHeaderBytes bounds the size of a file taken for an ENVI header.
const maxHeaderBytes = 1 << 24

// parseENVIHeader parses the text of an ENVI header: the magic line "ENVI",
// then "key = value" lines, where a value starting with '{' runs to the
// matching '}' across lines. Keys are case-insensitive and unknown keys are
// ignored, as are blank lines and lines starting with ';'. samples, lines,
// bands and data type are required; interleave defaults to bsq, byte order
// and header offset to 0. Wavelengths and FWHM are kept (in nanometres)
// when the wavelength units are nanometres, micrometres or millimetres;
// FWHM and band names only when they list one value per band (the
// verbatim field is carried either way). A data ignore value must be a
// number; a NaN or infinite one marks nothing and is not kept.
func parseENVIHeader(text []byte) (*enviHeader, error) {
	text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))
	lines := strings.Split(string(text), "\n")
	if strings.TrimSpace(lines[0]) != "ENVI" {
		return nil, errors.New(`not an ENVI header: the first line is not "ENVI"`)
	}
	fields := map[string]string{}
	var scene []msi.Field
	for i := 1; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || line[0] == ';' {
			continue
		}
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			return nil, fmt.Errorf("line %d: %q is not a key = value line", i+1, clip(line))
		}
		key := strings.ToLower(strings.Join(strings.Fields(line[:eq]), " "))
		if key == "" {
			return nil, fmt.Errorf("line %d: no key before '='", i+1)
		}
		value := strings.TrimSpace(line[eq+1:])
		raw := value
		if strings.HasPrefix(value, "{") {
			start := i
			for !strings.Contains(value, "}") {
				i++
				if i == len(lines) {
					return nil, fmt.Errorf("line %d: the { of %q is never closed", start+1, key)
				}
				value += "\n" + lines[i]
			}
			raw = value[:strings.IndexByte(value, '}')+1]
			value = value[1:strings.IndexByte(value, '}')]
		}
		if _, seen := fields[key]; !seen && !layoutFields[key] && !(key == "description" && isTDSCDescription(value)) {
			scene = append(scene, msi.Field{Format: name, Key: strings.Join(strings.Fields(line[:eq]), " "), Value: raw})
		}
		fields[key] = value
	}

	h := &enviHeader{interleave: "bsq", meta: msi.Metadata{Fields: scene}}
	for _, f := range []struct {
		key      string
		dst      *int
		min      int
		required bool
	}{
		{"samples", &h.samples, 1, true},
		{"lines", &h.lines, 1, true},
		{"bands", &h.bands, 1, true},
		{"data type", &h.dataType, 0, true},
		{"header offset", &h.headerOffset, 0, false},
	} {
		v, ok := fields[f.key]
		if !ok {
			if f.required {
				return nil, fmt.Errorf("no %q field", f.key)
			}
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < f.min {
			return nil, fmt.Errorf("%s = %q: want a whole number of at least %d", f.key, clip(v), f.min)
		}
		*f.dst = n
	}
	if enviBytes(h.dataType) == 0 {
		return nil, fmt.Errorf("unsupported data type %d (supported: 1 uint8, 2 int16, 3 int32, 4 float32, 5 float64, 12 uint16, 13 uint32, 14 int64, 15 uint64)", h.dataType)
	}
	if v, ok := fields["interleave"]; ok {
		h.interleave = strings.ToLower(strings.TrimSpace(v))
		if h.interleave != "bsq" && h.interleave != "bil" && h.interleave != "bip" {
			return nil, fmt.Errorf("unsupported interleave %q (want bsq, bil or bip)", clip(v))
		}
	}
	if v, ok := fields["byte order"]; ok {
		switch strings.TrimSpace(v) {
		case "0":
		case "1":
			h.bigEndian = true
		default:
			return nil, fmt.Errorf("byte order = %q: want 0 or 1", clip(v))
		}
	}
	unit := wavelengthScale(fields["wavelength units"])
	if v, ok := fields["wavelength"]; ok {
		parts := strings.Split(v, ",")
		if len(parts) != h.bands {
			return nil, fmt.Errorf("wavelength lists %d values for %d bands", len(parts), h.bands)
		}
		wl := make([]float64, len(parts))
		for i, p := range parts {
			x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, fmt.Errorf("wavelength %d = %q is not a number", i, clip(p))
			}
			wl[i] = x
		}
		if unit > 0 {
			for i := range wl {
				wl[i] *= unit
			}
			h.meta.Wavelengths = wl
		}
	}
	if v, ok := fields["fwhm"]; ok && unit > 0 {
		h.meta.FWHM = numbers(v, h.bands, unit)
	}
	if v, ok := fields["band names"]; ok {
		if names := strings.Split(v, ","); len(names) == h.bands {
			for i := range names {
				names[i] = strings.TrimSpace(names[i])
			}
			h.meta.BandNames = names
		}
	}
	h.meta.Georef = georef(fields["map info"], fields["coordinate system string"])
	if v, ok := fields["description"]; ok && !isTDSCDescription(v) {
		h.meta.Description = strings.TrimSpace(v)
	}
	if v, ok := fields["data ignore value"]; ok {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, fmt.Errorf("data ignore value = %q is not a number", clip(v))
		}
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			h.meta.NoData, h.meta.HasNoData = x, true
		}
	}
	if v, ok := fields["reflectance scale factor"]; ok {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("reflectance scale factor = %q: want a positive number (stored value = reflectance × factor)", clip(v))
		}
		h.reflectance = x
	}
	if v, ok := fields["data gain values"]; ok {
		h.gains = numbers(v, h.bands, 1)
		if h.gains == nil {
			return nil, fmt.Errorf("data gain values: want %d finite numbers, one per band, got %q", h.bands, clip(v))
		}
		for b, g := range h.gains {
			if g == 0 {
				return nil, fmt.Errorf("data gain values: band %d's gain is 0", b+1)
			}
		}
		h.offsets = make([]float64, h.bands)
	}
	if v, ok := fields["data offset values"]; ok {
		h.offsets = numbers(v, h.bands, 1)
		if h.offsets == nil {
			return nil, fmt.Errorf("data offset values: want %d finite numbers, one per band, got %q", h.bands, clip(v))
		}
		if h.gains == nil {
			h.gains = make([]float64, h.bands)
			for b := range h.gains {
				h.gains[b] = 1
			}
		}
	}
	return h, nil
}

// numbers returns the n comma-separated numbers of list times unit, or nil
// when list does not hold n finite numbers.
func numbers(list string, n int, unit float64) []float64 {
	parts := strings.Split(list, ",")
	if len(parts) != n {
		return nil
	}
	xs := make([]float64, n)
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil
		}
		xs[i] = x * unit
	}
	return xs
}

// wavelengthScale returns the factor that turns the given ENVI wavelength
// units into nanometres, or 0 for units that are missing or not a length.
func wavelengthScale(units string) float64 {
	switch strings.ToLower(strings.TrimSpace(units)) {
	case "nanometers", "nanometres", "nanometer", "nm":
		return 1
	case "micrometers", "micrometres", "micrometer", "microns", "micron", "um", "µm":
		return 1e3
	case "millimeters", "millimetres", "millimeter", "mm":
		return 1e6
	}
	return 0
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 40
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// enviPaths returns the header and data file of the ENVI cube named by path
// (either of the two). The data file of X.hdr is the first of X with one of
// dataExtensions (X.img, X.raw, …) and X that exists; the header of a data
// file X.img (or X.dat, …) is X.hdr or X.img.hdr.
func enviPaths(path string) (hdr, data string, err error) {
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	var candidates []string
	if strings.EqualFold(ext, ".hdr") {
		hdr = path
		for _, e := range dataExtensions {
			candidates = append(candidates, stem+e)
		}
		candidates = append(candidates, stem)
	} else {
		data, candidates = path, []string{stem + ".hdr", path + ".hdr"}
	}
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			if hdr == "" {
				return p, data, nil
			}
			return hdr, p, nil
		}
	}
	if hdr == "" {
		return "", "", fmt.Errorf("%s: no ENVI header beside it (tried %s)", path, strings.Join(candidates, ", "))
	}
	return "", "", fmt.Errorf("%s: no ENVI data file beside it (tried %s)", path, strings.Join(candidates, ", "))
}

// loadENVIHeader finds and parses the header of the ENVI cube whose header
// or data file is path, and checks that the data file has the size the
// header describes. It returns the header and the data file's path.
func loadENVIHeader(path string) (*enviHeader, string, error) {
	hdrPath, dataPath, err := enviPaths(path)
	if err != nil {
		return nil, "", err
	}
	fi, err := os.Stat(hdrPath)
	if err != nil {
		return nil, "", err
	}
	if fi.Size() > maxHeaderBytes {
		return nil, "", fmt.Errorf("%s: %d bytes is too large for an ENVI header", hdrPath, fi.Size())
	}
	text, err := os.ReadFile(hdrPath)
	if err != nil {
		return nil, "", err
	}
	h, err := parseENVIHeader(text)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", hdrPath, err)
	}
	size := enviBytes(h.dataType)
	values, ok := mulInt(h.samples, h.lines, h.bands)
	var want int
	if ok {
		want, ok = mulInt(values, size)
	}
	if !ok || want > math.MaxInt-h.headerOffset {
		return nil, "", fmt.Errorf("%s: %d×%d×%d cube is too large", hdrPath, h.samples, h.lines, h.bands)
	}
	want += h.headerOffset
	fi, err = os.Stat(dataPath)
	if err != nil {
		return nil, "", err
	}
	if fi.Size() != int64(want) {
		return nil, "", fmt.Errorf("%s: %d bytes, but %s describes %d (header offset %d + %d samples × %d lines × %d bands × %d bytes)",
			dataPath, fi.Size(), filepath.Base(hdrPath), want, h.headerOffset, h.samples, h.lines, h.bands, size)
	}
	return h, dataPath, nil
}

// read reads the ENVI cube whose header or data file is path, its values
// brought to the working scale with the scale given (0: the header's or
// the automatic one, see the package comment), unless it needs more than
// budget bytes (msi.CheckFits; 0: no limit). Missing voxels are NaN; an
// infinite value is an error.
func read(path string, scale float64, budget int64) (*msi.Cube, error) {
	h, dataPath, err := loadENVIHeader(path)
	if err != nil {
		return nil, err
	}
	stored := int64(h.headerOffset) + int64(h.samples)*int64(h.lines)*int64(h.bands)*int64(enviBytes(h.dataType))
	if err := msi.CheckFits(path, h.lines, h.samples, h.bands, stored, budget); err != nil {
		return nil, err
	}
	raw, err := os.ReadFile(dataPath)
	if err != nil {
		return nil, err
	}
	if want := h.headerOffset + h.samples*h.lines*h.bands*enviBytes(h.dataType); len(raw) != want {
		return nil, fmt.Errorf("%s: read %d bytes, want %d", dataPath, len(raw), want)
	}
	c := msi.NewCube(h.lines, h.samples, h.bands)
	if err := decodeENVI(c, raw[h.headerOffset:], h, 0); err != nil {
		return nil, fmt.Errorf("%s: %v", dataPath, err)
	}
	u := h.units(scale)
	if u.scale == 0 {
		u.scale, u.text = h.autoScale(msi.Largest(c.Data))
		u.fromData = true
	}
	c.Metadata = h.metadata(u)
	scaleValues(c.Data, u.scale)
	return c, nil
}

// readUnits is how a cube's physical values are brought to the working
// scale: the factor, whether the user gave it, and the phrase of
// msi.Storage.Units.
type readUnits struct {
	scale    float64
	given    bool
	fromData bool // found from the largest value (msi.Storage.FromData)
	text     string
}

// units returns the scale given (not 0), else the one the header states
// or the data type alone decides (uint8 without gains: every value is at
// most 255, so the automatic scale is 1; uint16 without gains: its full
// range, msi.TypeScale); a zero scale when the automatic one needs the
// largest value (autoScale).
func (h *enviHeader) units(given float64) readUnits {
	switch {
	case given != 0:
		return readUnits{scale: given, given: true, text: h.gainsText() + msi.GivenScale(given)}
	case h.reflectance > 0:
		s, text := msi.ReflectanceScale(h.reflectance)
		return readUnits{scale: s, text: h.gainsText() + text}
	case h.dataType == enviUint8 && h.gains == nil:
		return readUnits{scale: 1, text: "×1 (auto: 8-bit integers)"}
	}
	if s, text, ok := msi.TypeScale(enviTypeName(h.dataType)); ok && h.gains == nil {
		return readUnits{scale: s, text: text}
	}
	return readUnits{}
}

// autoScale returns msi.AutoScale's factor and phrase for the physical
// values of the cube whose largest value is largest: floats for a float
// data type or any type with gains.
func (h *enviHeader) autoScale(largest float64) (float64, string) {
	float := h.dataType == enviFloat32 || h.dataType == enviFloat64 || h.gains != nil
	s, text := msi.AutoScale(float, largest)
	return s, h.gainsText() + text
}

// gainsText starts the phrase of a read of a file with gains.
func (h *enviHeader) gainsText() string {
	if h.gains == nil {
		return ""
	}
	return "data gain and offset values applied, then "
}

// metadata returns the cube's metadata as read in units u: the no-data
// value as stored, the gains, offsets and scale in Stored.
func (h *enviHeader) metadata(u readUnits) msi.Metadata {
	m := h.meta
	m.Stored = msi.Storage{Format: name, DType: enviTypeName(h.dataType), Scale: u.scale, ScaleGiven: u.given, FromData: u.fromData,
		Gains: slices.Clone(h.gains), Offsets: slices.Clone(h.offsets), Units: u.text}
	return m
}

// scaleValues multiplies values by scale in place (nothing to do for 1).
func scaleValues(values []float64, scale float64) {
	if scale != 1 {
		for i := range values {
			values[i] *= scale
		}
	}
}

// enviTypeName returns the DTypes name of an ENVI data type.
func enviTypeName(dataType int) string {
	switch dataType {
	case enviUint8:
		return "uint8"
	case enviInt16:
		return "int16"
	case enviUint16:
		return "uint16"
	case enviInt32:
		return "int32"
	case enviUint32:
		return "uint32"
	case enviInt64:
		return "int64"
	case enviUint64:
		return "uint64"
	case enviFloat32:
		return "float32"
	}
	return "float64"
}

// mulInt returns the product of xs and whether it fits in an int.
func mulInt(xs ...int) (int, bool) {
	p := 1
	for _, x := range xs {
		if x < 0 || x != 0 && p > math.MaxInt/x {
			return 0, false
		}
		p *= x
	}
	return p, true
}

// decodeENVI fills c with the physical values of raw (stored × gain +
// offset, see the package comment), the data of c.Height lines of an ENVI
// file laid out as h says (all of them, or a block read by a reader), the
// first of which is line firstLine of the file (for error messages). A
// voxel holding the data ignore value, or NaN, is NaN; an infinite value
// is an error.
func decodeENVI(c *msi.Cube, raw []byte, h *enviHeader, firstLine int) error {
	var order binary.ByteOrder = binary.LittleEndian
	if h.bigEndian {
		order = binary.BigEndian
	}
	var value func(b []byte) float64
	switch h.dataType {
	case enviUint8:
		value = func(b []byte) float64 { return float64(b[0]) }
	case enviInt16:
		value = func(b []byte) float64 { return float64(int16(order.Uint16(b))) }
	case enviUint16:
		value = func(b []byte) float64 { return float64(order.Uint16(b)) }
	case enviInt32:
		value = func(b []byte) float64 { return float64(int32(order.Uint32(b))) }
	case enviUint32:
		value = func(b []byte) float64 { return float64(order.Uint32(b)) }
	case enviInt64:
		value = func(b []byte) float64 { return float64(int64(order.Uint64(b))) }
	case enviUint64:
		value = func(b []byte) float64 { return float64(order.Uint64(b)) }
	case enviFloat32:
		value = func(b []byte) float64 { return float64(math.Float32frombits(order.Uint32(b))) }
	case enviFloat64:
		value = func(b []byte) float64 { return math.Float64frombits(order.Uint64(b)) }
	}
	size := enviBytes(h.dataType)
	// Strides, in values, of band, line and sample in the file.
	S, L, B := h.samples, c.Height, h.bands
	var bandStride, lineStride, sampleStride int
	switch h.interleave {
	case "bsq":
		bandStride, lineStride, sampleStride = L*S, S, 1
	case "bil":
		bandStride, lineStride, sampleStride = S, B*S, 1
	case "bip":
		bandStride, lineStride, sampleStride = 1, S*B, B
	}
	noData, hasNoData := h.meta.NoData, h.meta.HasNoData
	float := h.dataType == enviFloat32 || h.dataType == enviFloat64
	for b := range B {
		out := c.Band(b)
		gain, offset := 1.0, 0.0
		if h.gains != nil {
			gain, offset = h.gains[b], h.offsets[b]
		}
		for y := range L {
			row := out[y*S : (y+1)*S]
			src := b*bandStride + y*lineStride
			for x := range row {
				off := (src + x*sampleStride) * size
				v := value(raw[off : off+size])
				switch {
				case math.IsInf(v, 0):
					return fmt.Errorf("value %v at band %d, line %d, sample %d (from 0): infinite values are not supported (NaN or the data ignore value mark a missing value)", v, b, firstLine+y, x)
				case float && msi.Implausible(v):
					return msi.ImplausibleError(v, b, firstLine+y, x)
				case hasNoData && v == noData:
					v = math.NaN()
				case h.gains != nil:
					v = v*gain + offset
				}
				row[x] = v
			}
		}
	}
	return nil
}

// write writes c as an ENVI float32 cube: path with its .hdr or .img
// extension (if any) replaced by .img for the data (band-sequential,
// little-endian float32, no header offset) and by .hdr for the header
// (see headerText). Values are stored in the units opts gives (see
// storedUnits), so the format is lossless for float32-representable
// values of any range; a NaN (missing) voxel is stored as c's no-data
// value, or NaN when it has none; a value that does not fit in a float32
// is an error.
//
// Both files are written under temporary names in the same folder and
// renamed into place as a pair (package atomicfile): on error neither is
// changed and the temporary files are removed. An existing .hdr or .img is
// an *atomicfile.ExistsError unless opts.Force is set. Once opts.Context is
// cancelled the write stops between bands with its error.
func write(path string, c *msi.Cube, opts msi.WriteOptions) error {
	if err := c.Check(); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	w, err := create(path, c.Height, c.Width, c.Bands, c.Metadata, opts)
	if err != nil {
		return err
	}
	if err := w.WriteLines(c, 0); err != nil {
		w.Abort()
		return err
	}
	return w.Commit()
}

// storedUnits is how an output's values are stored: stored = (working /
// scale − offsets[b]) / gains[b] (gains nil: working / scale).
type storedUnits struct {
	scale          float64
	gains, offsets []float64
	// dark is set for values stored at scale 1 that are at most 2, which
	// the automatic rule would take for reflectance (a mask of codes, a
	// very dark scene): the header then records the scale.
	dark bool
}

// unitsOf returns the units opts asks an output of bands bands to be
// stored in (scale 0 made 1), or an error for gains or offsets of
// another length than bands or a zero gain.
func unitsOf(opts msi.WriteOptions, bands int) (storedUnits, error) {
	u := storedUnits{scale: opts.Scale, gains: opts.Gains, offsets: opts.Offsets}
	if u.scale == 0 {
		u.scale = 1
	}
	if u.gains == nil && u.offsets == nil {
		return u, nil
	}
	if len(u.gains) != bands || len(u.offsets) != bands {
		return u, fmt.Errorf("%d gains and %d offsets for %d bands", len(u.gains), len(u.offsets), bands)
	}
	if slices.Contains(u.gains, 0) {
		return u, errors.New("a gain of 0")
	}
	return u, nil
}

// onWorkingScale reports whether u stores values as they are.
func (u storedUnits) onWorkingScale() bool { return u.scale == 1 && u.gains == nil }

// scaleNote says what the stored values are, for tdsc's description.
func (u storedUnits) scaleNote() string {
	if u.onWorkingScale() {
		return "[0, 255] intensity scale"
	}
	return "the units of the cube it was made from (see reflectance scale factor, data gain values)"
}

// headerText returns the header of a height×width×bands cube with
// metadata m written as float32 BSQ in units u. The ENVI fields of
// m.Fields come after the layout, verbatim. The description is the
// verbatim field when there is one, else m.Description, else what the
// values are and m.Processing; a scene description keeps tdsc's line out
// of it, in a field of its own, "tdsc processing". Wavelengths, FWHM and
// band names are written from m when m.Fields has no field of their key
// (wavelengths and FWHM in the units of a verbatim wavelength units
// field, else in nanometres), the no-data value as the data ignore value,
// and units that are not the working scale as a reflectance scale factor
// (255/scale, when the scale is not 1, or the values are dark) and data
// gain and offset values.
func headerText(height, width, bands int, m *msi.Metadata, u storedUnits) string {
	fields := m.FieldsOf(name)
	field := func(key string) (string, bool) {
		for _, f := range fields {
			if strings.EqualFold(f.Key, key) {
				return f.Value, true
			}
		}
		return "", false
	}
	has := func(key string) bool { _, ok := field(key); return ok }
	// A brace would end the header's field early.
	unbrace := strings.NewReplacer("{", "(", "}", ")", "\n", " ").Replace
	var b strings.Builder
	b.WriteString("ENVI\n")
	sceneDescription := has("description") || m.Description != ""
	switch {
	case has("description"):
	case m.Description != "":
		fmt.Fprintf(&b, "description = {%s}\n", unbrace(m.Description))
	default:
		desc := tdscDescription
		if !u.onWorkingScale() {
			desc = tdscUnitsDescription
		}
		if m.Processing != "" {
			desc += "; " + unbrace(m.Processing)
		}
		fmt.Fprintf(&b, "description = {%s}\n", desc)
	}
	fmt.Fprintf(&b, "samples = %d\nlines = %d\nbands = %d\n", width, height, bands)
	fmt.Fprintf(&b, "header offset = 0\nfile type = ENVI Standard\ndata type = %d\ninterleave = bsq\nbyte order = 0\n", enviFloat32)
	if m.HasNoData {
		fmt.Fprintf(&b, "data ignore value = %s\n", strconv.FormatFloat(m.NoData, 'g', -1, 64))
	}
	if u.scale != 1 || u.dark {
		fmt.Fprintf(&b, "reflectance scale factor = %s\n", strconv.FormatFloat(msi.ReflectanceFactor(u.scale), 'g', -1, 64))
	}
	if u.gains != nil {
		fmt.Fprintf(&b, "data gain values = {%s}\ndata offset values = {%s}\n", listText(u.gains, 1), listText(u.offsets, 1))
	}
	// Wavelengths and FWHM are in nanometres, or in the unit a verbatim
	// field states; a unit that is not a length cannot hold them.
	unit := 1.0
	if u, ok := field("wavelength units"); ok {
		unit = wavelengthScale(u)
	}
	writeWavelengths := m.Wavelengths != nil && !has("wavelength") && unit > 0
	writeFWHM := m.FWHM != nil && !has("fwhm") && unit > 0
	if (writeWavelengths || writeFWHM) && !has("wavelength units") {
		b.WriteString("wavelength units = Nanometers\n")
	}
	if writeWavelengths {
		fmt.Fprintf(&b, "wavelength = {%s}\n", listText(m.Wavelengths, unit))
	}
	if writeFWHM {
		fmt.Fprintf(&b, "fwhm = {%s}\n", listText(m.FWHM, unit))
	}
	if m.BandNames != nil && !has("band names") {
		names := make([]string, len(m.BandNames))
		for i, n := range m.BandNames {
			// A comma would split the name in two on reading.
			names[i] = strings.ReplaceAll(unbrace(n), ",", ";")
		}
		fmt.Fprintf(&b, "band names = {%s}\n", strings.Join(names, ", "))
	}
	if g := m.Georef; g != nil && !has("map info") && g.Transform[2] == 0 && g.Transform[4] == 0 {
		t := g.Transform
		fmt.Fprintf(&b, "map info = {Arbitrary, 1, 1, %s}\n", listText([]float64{t[0], t[3], t[1], -t[5]}, 1))
		if g.Projection != "" && !has("coordinate system string") {
			fmt.Fprintf(&b, "coordinate system string = {%s}\n", unbrace(g.Projection))
		}
	}
	for _, f := range fields {
		fmt.Fprintf(&b, "%s = %s\n", f.Key, f.Value)
	}
	if sceneDescription && m.Processing != "" {
		fmt.Fprintf(&b, "tdsc processing = {%s; %s}\n", u.scaleNote(), unbrace(m.Processing))
	}
	return b.String()
}

// georef returns the georeferencing that an ENVI map info field (its
// reference pixel, counted from 1 at the top-left corner of the image,
// the map coordinates of that point and the pixel size, projection name
// first) and coordinate system string (WKT) state, or nil when there is
// no map info or it is rotated (then only the verbatim fields carry it,
// to ENVI outputs).
func georef(mapInfo, wkt string) *msi.Georef {
	parts := strings.Split(mapInfo, ",")
	if len(parts) < 7 || strings.Contains(strings.ToLower(mapInfo), "rotation") {
		return nil
	}
	var v [6]float64
	for i := range v {
		x, err := strconv.ParseFloat(strings.TrimSpace(parts[1+i]), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		v[i] = x
	}
	refX, refY, x, y, px, py := v[0], v[1], v[2], v[3], v[4], v[5]
	return &msi.Georef{Transform: [6]float64{x - (refX-1)*px, px, 0, y + (refY-1)*py, 0, -py}, Projection: strings.TrimSpace(wkt)}
}

// listText writes values divided by unit as an ENVI list, shortest
// decimals that read back as the same numbers.
func listText(values []float64, unit float64) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = strconv.FormatFloat(v/unit, 'g', -1, 64)
	}
	return strings.Join(parts, ", ")
}
