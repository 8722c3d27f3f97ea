package envi

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"tdsc/internal/msi"
)

func FuzzParseENVIHeader(f *testing.F) {
	f.Add([]byte("ENVI\nsamples = 3\nlines = 2\nbands = 2\ndata type = 4\ninterleave = bsq\nbyte order = 0\n"))
	f.Add([]byte("ENVI\r\ndescription = {a\r\nb}\r\nSAMPLES = 640\r\nlines = 480\r\nbands = 3\r\ndata type = 12\r\n" +
		"interleave = bip\r\nbyte order = 1\r\nheader offset = 128\r\nwavelength units = Micrometers\r\n" +
		"wavelength = {\r\n0.45,\r\n0.55,\r\n0.65}\r\n"))
	f.Add([]byte(headerText(2, 3, 2, &msi.Metadata{Wavelengths: []float64{400, 410}}, storedUnits{scale: 1})))
	f.Add([]byte(headerText(2, 3, 2, &msi.Metadata{NoData: -9999, HasNoData: true}, storedUnits{scale: 255.0 / 4095, gains: []float64{0.5, 2}, offsets: []float64{0, -1}})))
	f.Add([]byte("ENVI\nsamples = 1\nlines = 1\nbands = 1\ndata type = 1\nwavelength = {\n"))
	f.Add([]byte("ENVI\nsamples = 1\nlines = 1\nbands = 2\ndata type = 2\nreflectance scale factor = 0\ndata offset values = {1, nan}\n"))
	f.Add([]byte("ENVI\nsamples = 1\nlines = 1\nbands = 2\ndata type = 2\ndata gain values = {0.5, 0}\ndata ignore value = -9999\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		h, err := parseENVIHeader(text)
		if err != nil {
			return
		}
		if h.samples <= 0 || h.lines <= 0 || h.bands <= 0 || h.headerOffset < 0 {
			t.Fatalf("accepted sizes %d×%d×%d, offset %d", h.samples, h.lines, h.bands, h.headerOffset)
		}
		if enviBytes(h.dataType) == 0 {
			t.Fatalf("accepted data type %d", h.dataType)
		}
		if h.interleave != "bsq" && h.interleave != "bil" && h.interleave != "bip" {
			t.Fatalf("accepted interleave %q", h.interleave)
		}
		if h.meta.Wavelengths != nil && len(h.meta.Wavelengths) != h.bands {
			t.Fatalf("%d wavelengths for %d bands", len(h.meta.Wavelengths), h.bands)
		}
		for _, wl := range h.meta.Wavelengths {
			if math.IsNaN(wl) || math.IsInf(wl, 0) {
				t.Fatalf("accepted wavelength %v", wl)
			}
		}
		if h.reflectance < 0 || math.IsNaN(h.reflectance) || math.IsInf(h.reflectance, 0) {
			t.Fatalf("accepted reflectance scale factor %v", h.reflectance)
		}
		if (h.gains == nil) != (h.offsets == nil) || h.gains != nil && (len(h.gains) != h.bands || len(h.offsets) != h.bands) {
			t.Fatalf("%d gains and %d offsets for %d bands", len(h.gains), len(h.offsets), h.bands)
		}
		for b, g := range h.gains {
			if g == 0 || math.IsNaN(g) || math.IsInf(g, 0) || math.IsNaN(h.offsets[b]) || math.IsInf(h.offsets[b], 0) {
				t.Fatalf("band %d: accepted gain %v, offset %v", b, g, h.offsets[b])
			}
		}
		if h.meta.HasNoData && (math.IsNaN(h.meta.NoData) || math.IsInf(h.meta.NoData, 0)) {
			t.Fatalf("accepted no-data value %v", h.meta.NoData)
		}
	})
}

// unitKeys are header lines of the units and no-data that
// FuzzENVIReadLines adds to its cubes, chosen by the bits of a fuzzed
// byte.
var unitKeys = []string{"data ignore value = 0\n", "reflectance scale factor = 100\n", "data gain values = {2, 0.5}\ndata offset values = {1, -1}\n"}

// FuzzENVIReadLines reads fuzzed data as a small ENVI cube of a fuzzed
// layout, units and no-data value, whole (Open) and by blocks of lines
// (the window reader). Neither may panic, and they must agree: the same
// error or none, the same scale, and every block the same lines as the
// whole cube, missing voxels (NaN) included.
func FuzzENVIReadLines(f *testing.F) {
	f.Add(uint8(4), uint8(0), false, uint8(0), bytes.Repeat([]byte{0, 0, 128, 63}, 12), uint8(1), uint8(1), uint8(0))
	f.Add(uint8(12), uint8(2), true, uint8(3), append(bytes.Repeat([]byte{1, 2}, 13), 9), uint8(0), uint8(2), uint8(5))
	f.Add(uint8(5), uint8(1), false, uint8(0), append(bytes.Repeat([]byte{0}, 88), 0, 0, 0, 0, 0, 0, 0xf8, 0x7f), uint8(1), uint8(2), uint8(1))
	f.Add(uint8(2), uint8(0), false, uint8(0), bytes.Repeat([]byte{0, 1}, 12), uint8(0), uint8(3), uint8(4))
	f.Fuzz(func(t *testing.T, dataType, interleave uint8, bigEndian bool, offset uint8, data []byte, y0, n, keys uint8) {
		const samples, lines, bands = 2, 3, 2
		order := 0
		if bigEndian {
			order = 1
		}
		header := fmt.Sprintf("ENVI\nsamples = %d\nlines = %d\nbands = %d\ndata type = %d\ninterleave = %s\nbyte order = %d\nheader offset = %d\n",
			samples, lines, bands, dataType%16, []string{"bsq", "bil", "bip"}[interleave%3], order, offset%8)
		for i, key := range unitKeys {
			if keys&(1<<i) != 0 {
				header += key
			}
		}
		dir := t.TempDir()
		hdr := filepath.Join(dir, "c.hdr")
		if err := os.WriteFile(hdr, []byte(header), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "c.img"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		whole, openErr := openCube(hdr)
		r, err := openWindow(hdr, 0)
		if err != nil {
			if openErr == nil {
				t.Fatalf("Open reads what openWindow refuses: %v", err)
			}
			return
		}
		defer r.Close()
		y, k := int(y0%lines), 1+int(n%lines)
		got, err := r.ReadLines(y, k)
		switch {
		case y+k > lines:
			if err == nil {
				t.Fatalf("lines [%d, %d) of %d read", y, y+k, lines)
			}
		case err != nil:
			// An infinite value in the file; Open must refuse the cube too.
			if openErr == nil {
				t.Fatalf("ReadLines(%d, %d): %v, but Open reads the cube", y, k, err)
			}
		case openErr == nil:
			want := whole.Crop(y, 0, 0, k, samples, bands)
			if !slices.EqualFunc(got.Data, want.Data, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
				t.Fatalf("lines [%d, %d): %v, Open has %v", y, y+k, got.Data, want.Data)
			}
			if m, err := r.Metadata(); err != nil || m.Stored.Scale != whole.Stored.Scale {
				t.Fatalf("window scale %v (%v), Open's %v", m.Stored.Scale, err, whole.Stored.Scale)
			}
		}
	})
}
