package msi

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestENVIHeaderFieldsSurvive writes an ENVI cube whose header carries the
// scene's metadata, reads it, writes it again and checks that every field
// that describes the scene comes back verbatim and in order, that the
// layout and value-scaling fields are the writer's own, and that tdsc's
// description goes beside the scene's instead of replacing it.
func TestENVIHeaderFieldsSurvive(t *testing.T) {
	dir := t.TempDir()
	scene := []HeaderField{
		{"description", "{Scene one\n  from a flight line}"},
		{"map info", "{UTM, 1.000, 1.000, 500000.000, 4000000.000, 2.0, 2.0, 11, North, WGS-84, units=Meters}"},
		{"coordinate system string", `{PROJCS["WGS_1984_UTM_Zone_11N"]}`},
		{"wavelength units", "Micrometers"},
		{"wavelength", "{ 0.40, 0.45,\n 0.50 }"},
		{"fwhm", "{0.01, 0.01, 0.01}"},
		{"band names", "{b1, b2, b3}"},
		{"sensor type", "Unknown"},
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
	c, err := Open(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Header, scene) {
		t.Fatalf("read header fields\n%q\nwant\n%q", c.Header, scene)
	}
	if want := []float64{400, 450, 500}; !reflect.DeepEqual(c.Wavelengths, want) {
		t.Errorf("wavelengths %v, want %v nm", c.Wavelengths, want)
	}
	c.Description = "tdsc denoise --method 2dsc"
	out := filepath.Join(dir, "out.hdr")
	if err := WriteENVI(out, c, false); err != nil {
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
	back, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	// tdsc's own line is not carried on: the next output writes its own.
	if !reflect.DeepEqual(back.Header, scene) {
		t.Errorf("read back\n%q\nwant\n%q", back.Header, scene)
	}
}
