package envi

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/msi"
)

// TestENVIHeaderFieldsSurvive writes an ENVI cube whose header carries the
// scene's metadata, reads it, writes it again and checks that every field
// that describes the scene comes back verbatim and in order, that the
// layout and value-scaling fields are the writer's own, and that tdsc's
// description goes beside the scene's instead of replacing it.
func TestENVIHeaderFieldsSurvive(t *testing.T) {
	dir := t.TempDir()
	scene := []msi.Field{
		field("description", "{Scene one\n  from a flight line}"),
		field("map info", "{UTM, 1.000, 1.000, 500000.000, 4000000.000, 2.0, 2.0, 11, North, WGS-84, units=Meters}"),
		field("coordinate system string", `{PROJCS["WGS_1984_UTM_Zone_11N"]}`),
		field("wavelength units", "Micrometers"),
		field("wavelength", "{ 0.40, 0.45,\n 0.50 }"),
		field("fwhm", "{0.01, 0.01, 0.01}"),
		field("band names", "{b1, b2, b3}"),
		field("sensor type", "Unknown"),
	}
	var hdr strings.Builder
	hdr.WriteString("ENVI\nsamples = 4\nlines = 3\nbands = 3\nheader offset = 0\ndata type = 4\ninterleave = bil\nbyte order = 0\n")
	hdr.WriteString("data gain values = {2, 2, 2}\n")
	for _, f := range scene {
		hdr.WriteString(f.Key + " = " + f.Value + "\n")
	}
	in := filepath.Join(dir, "in.hdr")
	if err := os.WriteFile(in, []byte(hdr.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.img"), make([]byte, 4*3*3*4), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := openCube(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Fields, scene) {
		t.Fatalf("read header fields\n%q\nwant\n%q", c.Fields, scene)
	}
	if want := []float64{400, 450, 500}; !reflect.DeepEqual(c.Wavelengths, want) {
		t.Errorf("wavelengths %v, want %v nm", c.Wavelengths, want)
	}
	if c.Description != "Scene one\n  from a flight line" || !slices.Equal(c.BandNames, []string{"b1", "b2", "b3"}) {
		t.Errorf("description %q, band names %q", c.Description, c.BandNames)
	}
	if len(c.FWHM) != 3 || math.Abs(c.FWHM[0]-10) > 1e-9 {
		t.Errorf("FWHM %v, want 10 nm each", c.FWHM)
	}
	c.Processing = "tdsc denoise --method 2dsc"
	out := filepath.Join(dir, "out.hdr")
	if err := write(out, c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range scene {
		if !strings.Contains(string(text), "\n"+f.Key+" = "+f.Value+"\n") {
			t.Errorf("written header lacks %s = %s", f.Key, f.Value)
		}
	}
	for _, bad := range []string{"data gain values", "interleave = bil", "intensity scale; tdsc denoise --method 2dsc}\nsamples"} {
		if strings.Contains(string(text), bad) {
			t.Errorf("written header has %q:\n%s", bad, text)
		}
	}
	if !strings.Contains(string(text), "\ntdsc processing = {[0, 255] intensity scale; tdsc denoise --method 2dsc}\n") {
		t.Errorf("written header lacks tdsc's line:\n%s", text)
	}
	back, err := openCube(out)
	if err != nil {
		t.Fatal(err)
	}
	// tdsc's own line is not carried on: the next output writes its own.
	if !reflect.DeepEqual(back.Fields, scene) {
		t.Errorf("read back\n%q\nwant\n%q", back.Fields, scene)
	}
}

// TestMetadataWithoutFields writes a cube whose metadata has no ENVI fields
// (read from another format): every neutral field must be written from its
// value and read back equal, and tdsc's line goes beside a scene
// description.
func TestMetadataWithoutFields(t *testing.T) {
	dir := t.TempDir()
	c := msi.NewCube(2, 3, 3)
	c.Wavelengths = []float64{400.5, 500, 1650.25}
	c.FWHM = []float64{10, 12.5, 20}
	c.BandNames = []string{"blue", "green {G}", "swir, 1"}
	c.Description = "a scene"
	c.NoData, c.HasNoData = -9999.5, true
	c.Processing = "tdsc noise"
	out := filepath.Join(dir, "m.hdr")
	if err := write(out, c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"\ndescription = {a scene}\n", "\ndata ignore value = -9999.5\n", "\nwavelength units = Nanometers\n",
		"\nfwhm = {10, 12.5, 20}\n", "\nband names = {blue, green (G), swir; 1}\n", "\ntdsc processing = {[0, 255] intensity scale; tdsc noise}\n"} {
		if !strings.Contains(string(text), line) {
			t.Errorf("header lacks %q:\n%s", line, text)
		}
	}
	back, err := openCube(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Wavelengths, c.Wavelengths) || !slices.Equal(back.FWHM, c.FWHM) || back.Description != c.Description ||
		!slices.Equal(back.BandNames, []string{"blue", "green (G)", "swir; 1"}) || !back.HasNoData || back.NoData != c.NoData {
		t.Errorf("read back %+v", back.Metadata)
	}

	// The data ignore value is as stored, whatever the scale of reading:
	// the voxels that hold it are missing (NaN), and a missing voxel is
	// written as it, exactly, in any units.
	c.Data[4] = math.NaN()
	if err := write(out, c, msi.WriteOptions{Force: true, Scale: 0.5}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "m.img"))
	if err != nil {
		t.Fatal(err)
	}
	if v := math.Float32frombits(binary.LittleEndian.Uint32(raw[16:])); v != -9999.5 {
		t.Errorf("the missing voxel is stored as %v, want the data ignore value", v)
	}
	scaled, err := Format.Open(out, msi.ReadOptions{Scale: 2})
	if err != nil || scaled.NoData != c.NoData || scaled.Stored.Scale != 2 || !math.IsNaN(scaled.Data[4]) || scaled.Missing() != 1 {
		t.Errorf("scale 2: no-data %v, stored %+v, voxel %v, %v", scaled.NoData, scaled.Stored, scaled.Data[4], err)
	}
	r, err := Format.(msi.WindowOpener).OpenWindow(out, msi.ReadOptions{Scale: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if m, err := r.Metadata(); err != nil || m.NoData != c.NoData || !slices.Equal(m.FWHM, c.FWHM) {
		t.Errorf("window reader's metadata %+v, %v", m, err)
	}
	if lines, err := r.ReadLines(0, 2); err != nil || !math.IsNaN(lines.Data[4]) {
		t.Errorf("window: %v, %v", lines, err)
	}
	c.Data[4] = 0

	// A verbatim unit other than nanometres holds the values written.
	c.Fields = []msi.Field{field("wavelength units", "Micrometers")}
	c.Wavelengths = []float64{400, 500, 1650}
	c.FWHM = nil
	if err := write(out, c, msi.WriteOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if back, err = openCube(out); err != nil || !slices.Equal(back.Wavelengths, c.Wavelengths) {
		t.Errorf("wavelengths in micrometres read back as %v, %v", back.Wavelengths, err)
	}
}

// TestDataIgnoreValue reads the data ignore value in its spellings.
func TestDataIgnoreValue(t *testing.T) {
	for _, tc := range []struct {
		value  string
		want   float64
		has    bool
		errHas string
	}{
		{"0", 0, true, ""},
		{" -9999 ", -9999, true, ""},
		{"1e38", 1e38, true, ""},
		{"NaN", 0, false, ""},
		{"-inf", 0, false, ""},
		{"none", 0, false, `data ignore value = "none" is not a number`},
	} {
		h, err := parseENVIHeader([]byte("ENVI\nsamples = 1\nlines = 1\nbands = 1\ndata type = 4\ndata ignore value = " + tc.value + "\n"))
		switch {
		case tc.errHas != "":
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%q: got %v, want an error containing %q", tc.value, err, tc.errHas)
			}
		case err != nil || h.meta.HasNoData != tc.has || h.meta.NoData != tc.want:
			t.Errorf("%q: no-data %v (%v), %v; want %v (%v)", tc.value, h.meta.NoData, h.meta.HasNoData, err, tc.want, tc.has)
		}
	}
}
