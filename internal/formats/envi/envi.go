// Package envi reads and writes cubes as ENVI files: a text header
// (X.hdr) beside the raw values (X.img). It reads band-sequential (BSQ),
// band-interleaved-by-line (BIL) and by-pixel (BIP) files of uint8, int16,
// uint16, float32 and float64 values of either byte order, whole or a
// window of lines at a time, and writes float32 BSQ little-endian on the
// working scale, whole or a window of lines at a time.
//
// Metadata: the header's description, wavelength (with its units), fwhm,
// band names and data ignore value map to the neutral fields of
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
	return msi.Info{Name: name, Label: "ENVI", Path: "an ENVI .hdr", Takes: msi.TakesScale,
		Carries: msi.CarriesWavelengths | msi.CarriesFWHM | msi.CarriesBandNames | msi.CarriesDescription | msi.CarriesNoData}
}

// Recognize reports whether path ends in .hdr or .img, in any case.
func (format) Recognize(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".hdr" || ext == ".img"
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
// file of the pair is found beside it, see dataPaths), its values
// multiplied by opts.Scale (0 means 1: values as stored). A cube larger
// than opts.Budget is refused before its data is read.
func (format) Open(path string, opts msi.ReadOptions) (*msi.Cube, error) {
	if err := msi.CheckScale(opts.Scale); err != nil {
		return nil, err
	}
	if err := msi.Exists(path); err != nil {
		return nil, err
	}
	return read(path, opts.Scale, opts.Budget)
}

// Write writes c as an ENVI float32 cube (see write); the array options
// of opts do not apply.
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
	enviFloat32 = 4
	enviFloat64 = 5
	enviUint16  = 12
)

// enviBytes maps each supported data type to the size of one value.
func enviBytes(dataType int) int {
	switch dataType {
	case enviUint8:
		return 1
	case enviInt16, enviUint16:
		return 2
	case enviFloat32:
		return 4
	case enviFloat64:
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
	meta                  msi.Metadata // the scene's metadata, on the stored scale
}

// tdscDescription starts the description tdsc writes when the cube has no
// scene description of its own; such a description is tdsc's, not the
// scene's, and is not carried on.
const tdscDescription = "multispectral cube, [0, 255] intensity scale"

// layoutFields are the ENVI header fields that describe how the values are
// stored or scaled rather than the scene, and the one tdsc writes about its
// own processing; they are not carried from an input to an output, which
// has its own layout (float32 BSQ on the working scale) and processing.
// (The data ignore value is on the stored scale: it is taken into
// Metadata.NoData and written from there.)
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
		if _, seen := fields[key]; !seen && !layoutFields[key] && !(key == "description" && strings.HasPrefix(value, tdscDescription)) {
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
		return nil, fmt.Errorf("unsupported data type %d (supported: 1 uint8, 2 int16, 4 float32, 5 float64, 12 uint16)", h.dataType)
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
	if v, ok := fields["description"]; ok && !strings.HasPrefix(v, tdscDescription) {
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
// (either of the two). The data file of X.hdr is the first of X.img, X.raw,
// X.dat and X that exists; the header of X.img is X.hdr or X.img.hdr.
func enviPaths(path string) (hdr, data string, err error) {
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	var candidates []string
	if strings.EqualFold(ext, ".hdr") {
		hdr, candidates = path, []string{stem + ".img", stem + ".raw", stem + ".dat", stem}
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
// multiplied by scale (0 means 1), unless it needs more than budget bytes
// (msi.CheckFits; 0: no limit). NaN or infinite values are an error.
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
	c.Metadata = h.metadata(scale)
	scaleValues(c.Data, c.Stored.Scale)
	return c, nil
}

// metadata returns the cube's metadata as read with scale (0 means 1):
// the no-data value scaled as the values are.
func (h *enviHeader) metadata(scale float64) msi.Metadata {
	if scale == 0 {
		scale = 1
	}
	m := h.meta
	m.NoData *= scale
	m.Stored = msi.Storage{Format: name, DType: enviTypeName(h.dataType), Scale: scale}
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

// decodeENVI fills c from raw, the data of c.Height lines of an ENVI file
// laid out as h says (all of them, or a block read by a reader), the
// first of which is line firstLine of the file (for error messages).
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
	float := h.dataType == enviFloat32 || h.dataType == enviFloat64
	for b := range B {
		out := c.Band(b)
		for y := range L {
			row := out[y*S : (y+1)*S]
			src := b*bandStride + y*lineStride
			for x := range row {
				off := (src + x*sampleStride) * size
				v := value(raw[off : off+size])
				if float && (math.IsNaN(v) || math.IsInf(v, 0)) {
					return fmt.Errorf("value %v at band %d, line %d, sample %d (from 0)", v, b, firstLine+y, x)
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
// (see headerText). Values are stored as they are, so the format is
// lossless for float32-representable values outside [0, 255]; a value
// that is NaN or does not fit in a float32 is an error.
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

// headerText returns the header of a height×width×bands cube with
// metadata m written as float32 BSQ. The ENVI fields of m.Fields come
// after the layout, verbatim. The description is the verbatim field when
// there is one, else m.Description, else the intensity scale and
// m.Processing; a scene description keeps tdsc's line out of it, in a
// field of its own, "tdsc processing". Wavelengths, FWHM and band names
// are written from m when m.Fields has no field of their key (wavelengths
// and FWHM in the units of a verbatim wavelength units field, else in
// nanometres), and the no-data value as the data ignore value.
func headerText(height, width, bands int, m *msi.Metadata) string {
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
	for _, f := range fields {
		fmt.Fprintf(&b, "%s = %s\n", f.Key, f.Value)
	}
	if sceneDescription && m.Processing != "" {
		fmt.Fprintf(&b, "tdsc processing = {[0, 255] intensity scale; %s}\n", unbrace(m.Processing))
	}
	return b.String()
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
