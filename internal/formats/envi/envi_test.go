package envi

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/testenv/cubetest"
)

func TestENVIRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	c := msi.NewCube(5, 7, 3)
	for i := range c.Data {
		c.Data[i] = float64(float32(-100 + 500*rng.Float64()))
	}
	c.Wavelengths = []float64{450.5, 550, 1650.25}
	dir := t.TempDir()
	hdr := filepath.Join(dir, "noisy.hdr")
	info, err := Format.Write(hdr, c, msi.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Clipped != 0 {
		t.Errorf("ENVI write reports %d clipped voxels", info.Clipped)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"noisy.hdr", "noisy.img"}) {
		t.Fatalf("files %v, want noisy.hdr and noisy.img", names)
	}

	// The data file is band-sequential little-endian float32.
	raw, err := os.ReadFile(filepath.Join(dir, "noisy.img"))
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]float32, len(c.Data))
	if err := binary.Read(bytes.NewReader(raw), binary.LittleEndian, vals); err != nil {
		t.Fatalf("data file of %d bytes: %v", len(raw), err)
	}
	for i, v := range vals {
		if float64(v) != c.Data[i] {
			t.Fatalf("value %d in the file is %v, want %v", i, v, c.Data[i])
		}
	}
	text, err := os.ReadFile(hdr)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"ENVI\n", "samples = 7\n", "lines = 5\n", "bands = 3\n", "data type = 4\n",
		"interleave = bsq\n", "byte order = 0\n", "header offset = 0\n", "wavelength units = Nanometers\n",
		"wavelength = {450.5, 550, 1650.25}\n"} {
		if !strings.Contains(string(text), line) {
			t.Errorf("header lacks %q:\n%s", line, text)
		}
	}

	for _, path := range []string{hdr, filepath.Join(dir, "noisy.img")} {
		got, err := openCube(path)
		if err != nil {
			t.Fatal(err)
		}
		if !got.SameSize(c) || !slices.Equal(got.Data, c.Data) || !slices.Equal(got.Wavelengths, c.Wavelengths) {
			t.Fatalf("openCube(%s) does not give back the cube written", path)
		}
	}

	// Written through the .img name, without wavelengths.
	c.Wavelengths = nil
	if _, err := Format.Write(filepath.Join(dir, "plain.img"), c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := openCube(filepath.Join(dir, "plain.hdr"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Data, c.Data) || got.Wavelengths != nil {
		t.Fatal("plain.img round trip differs")
	}
}

// enviValue is the known value of voxel (b, y, x) in the synthetic files,
// exactly representable in every data type (negative only for signed and
// float types).
func enviValue(dataType, b, y, x int) float64 {
	v := float64(b*40 + y*10 + x)
	switch dataType {
	case enviInt16:
		return v - 100
	case enviUint16:
		return v * 300
	case enviInt32:
		return v*1000 - 100000 // beyond int16, negative
	case enviUint32:
		return v*100000 + 70000 // beyond uint16
	case enviInt64:
		return v*1e9 - 5e10 // beyond int32, negative
	case enviUint64:
		return v*1e12 + 1 // beyond uint32, exact below 2⁵³
	case enviFloat32, enviFloat64:
		return v/4 - 3
	}
	return v
}

// putValue appends v in the given data type and byte order.
func putValue(buf []byte, dataType int, order binary.AppendByteOrder, v float64) []byte {
	switch dataType {
	case enviUint8:
		return append(buf, byte(v))
	case enviInt16:
		return order.AppendUint16(buf, uint16(int16(v)))
	case enviUint16:
		return order.AppendUint16(buf, uint16(v))
	case enviInt32:
		return order.AppendUint32(buf, uint32(int32(v)))
	case enviUint32:
		return order.AppendUint32(buf, uint32(v))
	case enviInt64:
		return order.AppendUint64(buf, uint64(int64(v)))
	case enviUint64:
		return order.AppendUint64(buf, uint64(v))
	case enviFloat32:
		return order.AppendUint32(buf, math.Float32bits(float32(v)))
	case enviFloat64:
		return order.AppendUint64(buf, math.Float64bits(v))
	}
	panic("bad data type")
}

// synthENVI writes X.hdr and X.img by hand for a cube of the given layout
// with enviValue's values, and returns the header path.
func synthENVI(t *testing.T, dir string, dataType int, interleave string, bigEndian bool, offset, samples, lines, bands int) string {
	t.Helper()
	var order binary.AppendByteOrder = binary.LittleEndian
	byteOrder := 0
	if bigEndian {
		order, byteOrder = binary.BigEndian, 1
	}
	data := bytes.Repeat([]byte{0xAB}, offset)
	switch interleave {
	case "bsq":
		for b := range bands {
			for y := range lines {
				for x := range samples {
					data = putValue(data, dataType, order, enviValue(dataType, b, y, x))
				}
			}
		}
	case "bil":
		for y := range lines {
			for b := range bands {
				for x := range samples {
					data = putValue(data, dataType, order, enviValue(dataType, b, y, x))
				}
			}
		}
	case "bip":
		for y := range lines {
			for x := range samples {
				for b := range bands {
					data = putValue(data, dataType, order, enviValue(dataType, b, y, x))
				}
			}
		}
	}
	name := fmt.Sprintf("t%d_%s_%d", dataType, interleave, byteOrder)
	header := fmt.Sprintf("ENVI\nsamples = %d\nlines = %d\nbands = %d\nheader offset = %d\ndata type = %d\ninterleave = %s\nbyte order = %d\n",
		samples, lines, bands, offset, dataType, strings.ToUpper(interleave), byteOrder)
	writeFile(t, dir, name+".img", data)
	return writeFile(t, dir, name+".hdr", []byte(header))
}

// synthLayouts writes one synthENVI cube of the given size in every data
// type, interleave and byte order (big-endian files with a header offset)
// and returns their header paths.
func synthLayouts(t *testing.T, samples, lines, bands int) (hdrs []string, dataTypes []int) {
	t.Helper()
	dir := t.TempDir()
	for _, dataType := range []int{enviUint8, enviInt16, enviInt32, enviFloat32, enviFloat64, enviUint16, enviUint32, enviInt64, enviUint64} {
		for _, interleave := range []string{"bsq", "bil", "bip"} {
			for _, bigEndian := range []bool{false, true} {
				offset := 0
				if bigEndian {
					offset = 13
				}
				hdrs = append(hdrs, synthENVI(t, dir, dataType, interleave, bigEndian, offset, samples, lines, bands))
				dataTypes = append(dataTypes, dataType)
			}
		}
	}
	return hdrs, dataTypes
}

func TestENVIReadLayouts(t *testing.T) {
	const samples, lines, bands = 3, 2, 4
	hdrs, dataTypes := synthLayouts(t, samples, lines, bands)
	for i, hdr := range hdrs {
		c, err := Format.Open(hdr, msi.ReadOptions{Scale: 1}) // the values as stored
		if err != nil {
			t.Fatalf("%s: %v", hdr, err)
		}
		if c.Width != samples || c.Height != lines || c.Bands != bands {
			t.Fatalf("%s: size %s, want %d×%d×%d", hdr, c.Size(), lines, samples, bands)
		}
		for b := range bands {
			for y := range lines {
				for x := range samples {
					if got, want := c.At(y, x, b), enviValue(dataTypes[i], b, y, x); got != want {
						t.Fatalf("%s: voxel (y=%d, x=%d, b=%d) = %v, want %v", hdr, y, x, b, got, want)
					}
				}
			}
		}
	}
}

func TestENVIDataFileNames(t *testing.T) {
	c := msi.NewCube(2, 3, 1)
	for i := range c.Data {
		c.Data[i] = float64(i)
	}
	header := []byte("ENVI\nsamples = 3\nlines = 2\nbands = 1\ndata type = 4\n")
	data := make([]byte, 0, 24)
	for _, v := range c.Data {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
	}
	for _, tc := range []struct{ hdr, data, open string }{
		{"a.hdr", "a.raw", "a.hdr"},
		{"b.hdr", "b.dat", "b.hdr"},
		{"c.hdr", "c", "c.hdr"},
		{"d.img.hdr", "d.img", "d.img"},
		{"e.img.hdr", "e.img", "e.img.hdr"},
		{"f.hdr", "f.dat", "f.dat"},
		{"g.hdr", "g.raw", "g.raw"},
		{"h.hdr", "h.bsq", "h.bsq"},
		{"i.hdr", "i.bil", "i.bil"},
		{"j.bip.hdr", "j.bip", "j.bip"},
	} {
		dir := t.TempDir()
		writeFile(t, dir, tc.hdr, header)
		writeFile(t, dir, tc.data, data)
		got, err := openCube(filepath.Join(dir, tc.open))
		if err != nil {
			t.Fatalf("%s + %s, opened as %s: %v", tc.hdr, tc.data, tc.open, err)
		}
		if !slices.Equal(got.Data, c.Data) {
			t.Fatalf("%s + %s: got %v, want %v", tc.hdr, tc.data, got.Data, c.Data)
		}
	}
}

func TestParseENVIHeader(t *testing.T) {
	text := "\xef\xbb\xbfENVI\r\n" +
		"description = {A scene,\r\n  with = signs and\r\n  several lines}\r\n" +
		"; a comment line\r\n" +
		"SAMPLES = 640\r\n" +
		"Lines=480\r\n" +
		"bands   = 3\r\n" +
		"Data Type = 12\r\n" +
		"sensor type = Unknown\r\n" +
		"Interleave = BIP\r\n" +
		"byte  order = 1\r\n" +
		"header offset = 128\r\n" +
		"\r\n" +
		"wavelength units = Micrometers\r\n" +
		"wavelength = {\r\n 0.45,\r\n 0.55,\r\n 0.65\r\n}\r\n"
	h, err := parseENVIHeader([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if h.samples != 640 || h.lines != 480 || h.bands != 3 || h.dataType != enviUint16 ||
		h.interleave != "bip" || !h.bigEndian || h.headerOffset != 128 || len(h.meta.Wavelengths) != 3 {
		t.Fatalf("got %+v", *h)
	}
	for i, wl := range []float64{450, 550, 650} {
		if math.Abs(h.meta.Wavelengths[i]-wl) > 1e-9 {
			t.Errorf("wavelength %d = %v nm, want %v", i, h.meta.Wavelengths[i], wl)
		}
	}

	// Defaults, and wavelengths without units are dropped.
	h, err = parseENVIHeader([]byte("ENVI\nsamples = 1\nlines = 2\nbands = 2\ndata type = 1\nwavelength = {1, 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if h.interleave != "bsq" || h.bigEndian || h.headerOffset != 0 || h.meta.Wavelengths != nil {
		t.Errorf("defaults: got %+v", *h)
	}
}

func TestParseENVIHeaderErrors(t *testing.T) {
	const base = "samples = 2\nlines = 2\nbands = 2\ndata type = 4\n"
	cases := []struct{ name, text, want string }{
		{"no magic", base, "not an ENVI header"},
		{"empty", "", "not an ENVI header"},
		{"no samples", "ENVI\nlines = 2\nbands = 2\ndata type = 4\n", `no "samples"`},
		{"no lines", "ENVI\nsamples = 2\nbands = 2\ndata type = 4\n", `no "lines"`},
		{"no bands", "ENVI\nsamples = 2\nlines = 2\ndata type = 4\n", `no "bands"`},
		{"no data type", "ENVI\nsamples = 2\nlines = 2\nbands = 2\n", `no "data type"`},
		{"non-numeric", "ENVI\n" + base + "lines = two\n", "lines"},
		{"zero bands", "ENVI\n" + base + "bands = 0\n", "bands"},
		{"negative offset", "ENVI\n" + base + "header offset = -1\n", "header offset"},
		{"data type 6 (complex)", "ENVI\n" + base + "data type = 6\n", "unsupported data type 6"},
		{"interleave", "ENVI\n" + base + "interleave = bsx\n", "unsupported interleave"},
		{"byte order", "ENVI\n" + base + "byte order = 2\n", "byte order"},
		{"unclosed brace", "ENVI\n" + base + "wavelength = {1,\n2\n", "never closed"},
		{"wavelength count", "ENVI\n" + base + "wavelength = {1, 2, 3}\n", "3 values for 2 bands"},
		{"wavelength text", "ENVI\n" + base + "wavelength = {1, red}\n", "not a number"},
		{"no equals", "ENVI\n" + base + "just words\n", "line 6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseENVIHeader([]byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			// Through Open, the error names the header file.
			dir := t.TempDir()
			hdr := writeFile(t, dir, "x.hdr", []byte(tc.text))
			writeFile(t, dir, "x.img", make([]byte, 32))
			if _, err := openCube(hdr); err == nil || !strings.Contains(err.Error(), hdr) {
				t.Fatalf("Open: got %v, want an error naming %s", err, hdr)
			}
		})
	}
}

func TestReadENVIErrors(t *testing.T) {
	header := "ENVI\nsamples = 3\nlines = 2\nbands = 2\ndata type = %d\n"
	cases := []struct {
		name     string
		dataType int
		data     []byte
		open     string   // file to open, x.hdr if empty
		noData   bool     // write no data file
		noHeader bool     // write no header file
		want     []string // substrings besides the file name
		culprit  string   // the file the error must name
	}{
		{name: "short data", dataType: 4, data: make([]byte, 47), want: []string{"47 bytes", "48"}, culprit: "x.img"},
		{name: "long data", dataType: 2, data: make([]byte, 25), want: []string{"25 bytes", "24"}, culprit: "x.img"},
		{name: "Inf float64", dataType: 5, data: func() []byte {
			b := make([]byte, 96)
			binary.LittleEndian.PutUint64(b[8*1:], math.Float64bits(math.Inf(-1)))
			return b
		}(), want: []string{"-Inf", "band 0, line 0, sample 1"}, culprit: "x.img"},
		{name: "no data file", dataType: 4, noData: true, want: []string{"no ENVI data file", "x.raw"}, culprit: "x.hdr"},
		{name: "no header", dataType: 4, data: make([]byte, 48), noHeader: true, open: "x.img", want: []string{"no ENVI header"}, culprit: "x.img"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if !tc.noHeader {
				writeFile(t, dir, "x.hdr", fmt.Appendf(nil, header, tc.dataType))
			}
			if !tc.noData {
				writeFile(t, dir, "x.img", tc.data)
			}
			open := cmp.Or(tc.open, "x.hdr")
			_, err := openCube(filepath.Join(dir, open))
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range append([]string{filepath.Join(dir, tc.culprit)}, tc.want...) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestENVIOverwriteAndFailure(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	first := cubetest.Uniform(rng, 3, 4, 2, -50, 300)
	second := cubetest.Uniform(rng, 3, 4, 5, -50, 300)
	dir := t.TempDir()
	hdr := filepath.Join(dir, "n.hdr")

	// An existing data file alone blocks the write.
	writeFile(t, dir, "n.img", []byte("old"))
	if err := write(hdr, first, msi.WriteOptions{}); err == nil || !strings.Contains(err.Error(), "n.img") {
		t.Fatalf("got %v, want a refusal naming n.img", err)
	}
	if err := write(hdr, first, msi.WriteOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := write(hdr, second, msi.WriteOptions{}); err == nil || !strings.Contains(err.Error(), hdr) || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("got %v, want an 'already exists' error naming %s", err, hdr)
	}

	// A write that fails part-way (an infinite value in the last band)
	// leaves the old cube and no temporary files.
	bad := second.Clone()
	bad.Set(2, 3, 4, math.Inf(1))
	err := write(hdr, bad, msi.WriteOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), "n.img") || !strings.Contains(err.Error(), "band 4, line 2, sample 3") {
		t.Fatalf("got %v, want an error naming n.img and the infinite value's position", err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"n.hdr", "n.img"}) {
		t.Fatalf("folder holds %v after a failed write", names)
	}
	got, err := openCube(hdr)
	if err != nil {
		t.Fatal(err)
	}
	if got.Bands != 2 {
		t.Fatalf("the failed write changed the old cube (%d bands)", got.Bands)
	}

	// Values too large for float32 are refused, not stored as infinity.
	huge := msi.NewCube(1, 1, 1)
	huge.Data[0] = 1e300
	if err := write(filepath.Join(dir, "h.hdr"), huge, msi.WriteOptions{}); err == nil || !strings.Contains(err.Error(), "float32") {
		t.Fatalf("got %v, want a float32 range error", err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"n.hdr", "n.img"}) {
		t.Fatalf("folder holds %v after a failed write", names)
	}

	if err := write(hdr, second, msi.WriteOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got, err = openCube(hdr); err != nil || !slices.Equal(got.Data, float32Values(second.Data)) {
		t.Fatalf("forced write: %v", err)
	}
}

// float32Values returns xs rounded to float32.
func float32Values(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(float32(x))
	}
	return out
}

func BenchmarkOpenENVI(b *testing.B) {
	rng := rand.New(rand.NewPCG(25, 26))
	c := cubetest.Uniform(rng, 512, 512, 31, -60, 315)
	hdr := filepath.Join(b.TempDir(), "n.hdr")
	if err := write(hdr, c, msi.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := openCube(hdr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteENVI(b *testing.B) {
	rng := rand.New(rand.NewPCG(27, 28))
	c := cubetest.Uniform(rng, 512, 512, 31, -60, 315)
	hdr := filepath.Join(b.TempDir(), "n.hdr")
	for b.Loop() {
		if err := write(hdr, c, msi.WriteOptions{Force: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOpenScale checks the automatic scale of every data type (the rule
// of msi.AutoScale: uint8 as it is, the 16-bit values of synthENVI as
// counts, the small floats and int16 as they are), and that a given scale
// replaces it.
func TestOpenScale(t *testing.T) {
	dir := t.TempDir()
	for _, dt := range []int{enviUint8, enviUint16, enviInt16, enviFloat32, enviFloat64} {
		hdr := synthENVI(t, dir, dt, "bsq", false, 0, 3, 2, 2)
		stored, err := read(hdr, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		scale, _ := msi.AutoScale(dt == enviFloat32 || dt == enviFloat64, msi.Largest(stored.Data))
		if s, _, ok := msi.TypeScale(enviTypeName(dt)); ok {
			scale = s
		}
		got, err := Format.Open(hdr, msi.ReadOptions{})
		if err != nil || got.Stored.Scale != scale || got.Stored.ScaleGiven || got.Stored.Format != "envi" || got.Data[1] != scale*stored.Data[1] {
			t.Fatalf("data type %d: stored %+v, err %v, want scale %v", dt, got.Stored, err, scale)
		}
		if fromData := dt != enviUint8 && dt != enviUint16; got.Stored.FromData != fromData {
			t.Errorf("data type %d: found from the data %v, want %v", dt, got.Stored.FromData, fromData)
		}
		if dt == enviUint16 && scale != 255.0/65535 {
			t.Errorf("uint16 counts up to %v: scale %v, want its full range", msi.Largest(stored.Data), scale)
		}
		got, err = Format.Open(hdr, msi.ReadOptions{Scale: 2})
		if err != nil || got.Stored.Scale != 2 || !got.Stored.ScaleGiven || got.Data[1] != 2*stored.Data[1] {
			t.Fatalf("data type %d, scale 2: %+v, %v", dt, got.Stored, err)
		}
	}
}
