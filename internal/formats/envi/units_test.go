package envi

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tdsc/internal/msi"
)

// int16Cube writes a 2×3×2 int16 BSQ cube of the given values with the
// extra header lines and returns its header's path.
func int16Cube(t *testing.T, dir string, values []int16, extra string) string {
	t.Helper()
	var data []byte
	for _, v := range values {
		data = binary.LittleEndian.AppendUint16(data, uint16(v))
	}
	writeFile(t, dir, "c.img", data)
	return writeFile(t, dir, "c.hdr", []byte("ENVI\nsamples = 3\nlines = 2\nbands = 2\ndata type = 2\ninterleave = bsq\nbyte order = 0\n"+extra))
}

// TestGainsAndReflectance checks the units an ENVI header states: data
// gain and offset values applied per band, then the reflectance scale
// factor (working = physical / factor × 255), the data ignore value
// compared as stored, and an output in the input's units that records
// them and reads back as it was written.
func TestGainsAndReflectance(t *testing.T) {
	dir := t.TempDir()
	values := []int16{100, 200, -9999, 400, 500, 600, 10, 20, 30, 40, -9999, 60}
	hdr := int16Cube(t, dir, values, "data gain values = {2, 0.5}\ndata offset values = {0, 100}\nreflectance scale factor = 1000\ndata ignore value = -9999\n")
	c, err := openCube(hdr)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		gain, offset := 2.0, 0.0
		if i >= 6 {
			gain, offset = 0.5, 100
		}
		want := (float64(v)*gain + offset) / 1000 * 255
		if v == -9999 {
			if !math.IsNaN(c.Data[i]) {
				t.Errorf("voxel %d holds the data ignore value but reads as %v", i, c.Data[i])
			}
			continue
		}
		if math.Abs(c.Data[i]-want) > 1e-12 {
			t.Errorf("voxel %d: %v, want %v", i, c.Data[i], want)
		}
	}
	s := c.Stored
	if s.Scale != 0.255 || s.Gains[1] != 0.5 || s.Offsets[1] != 100 || !strings.HasPrefix(s.Units, "data gain and offset values applied, then reflectance ×255 (reflectance scale factor 1000)") {
		t.Errorf("stored %+v", s)
	}

	out := filepath.Join(dir, "o.hdr")
	if err := write(out, c, msi.WriteOptions{}.Like(c.Stored, false)); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"\nreflectance scale factor = 1000\n", "\ndata gain values = {2, 0.5}\n", "\ndata offset values = {0, 100}\n", "\ndata ignore value = -9999\n"} {
		if !strings.Contains(string(text), line) {
			t.Errorf("output header lacks %q:\n%s", line, text)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "o.img"))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); math.Abs(float64(got)-float64(v)) > 1e-3 {
			t.Errorf("voxel %d stored as %v, want the input's %v", i, got, v)
		}
	}
	back, err := openCube(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range back.Data {
		if math.IsNaN(v) != math.IsNaN(c.Data[i]) || !math.IsNaN(v) && math.Abs(v-c.Data[i]) > 1e-6 {
			t.Errorf("voxel %d reads back as %v, was %v", i, v, c.Data[i])
		}
	}
}

// TestUnitErrors checks that a header's units that cannot be right are
// errors naming the key, and so is writing with gains of the wrong length.
func TestUnitErrors(t *testing.T) {
	for extra, want := range map[string]string{
		"reflectance scale factor = 0\n":    "reflectance scale factor = \"0\": want a positive number",
		"reflectance scale factor = abc\n":  "reflectance scale factor",
		"data gain values = {1}\n":          "data gain values: want 2 finite numbers, one per band",
		"data gain values = {1, 0}\n":       "data gain values: band 2's gain is 0",
		"data offset values = {1, inf}\n":   "data offset values: want 2 finite numbers",
		"data gain values = {1, nan}\n":     "data gain values",
		"data ignore value = lots\n":        "data ignore value",
		"reflectance scale factor = -100\n": "want a positive number",
	} {
		dir := t.TempDir()
		_, err := openCube(int16Cube(t, dir, make([]int16, 12), extra))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "c.hdr") {
			t.Errorf("%q: got %v, want an error naming c.hdr with %q", extra, err, want)
		}
	}
	c := msi.NewCube(1, 1, 2)
	err := write(filepath.Join(t.TempDir(), "g.hdr"), c, msi.WriteOptions{Scale: 1, Gains: []float64{1}, Offsets: []float64{0}})
	if err == nil || !strings.Contains(err.Error(), "1 gains and 1 offsets for 2 bands") {
		t.Errorf("gains of the wrong length: %v", err)
	}
}

// TestDarkOutputRecordsScale checks that an output on the working scale
// whose values the automatic rule would take for reflectance (a mask of
// codes 0 to 2) records its scale and reads back as it was written, while
// one of brighter values keeps the header it always had.
func TestDarkOutputRecordsScale(t *testing.T) {
	dir := t.TempDir()
	c := msi.NewCube(2, 2, 1)
	copy(c.Data, []float64{0, 1, 2, 1})
	out := filepath.Join(dir, "mask.hdr")
	if err := write(out, c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := openCube(out)
	if err != nil || back.Data[2] != 2 || back.Stored.Scale != 1 {
		t.Fatalf("codes read back as %v (%+v), %v", back.Data, back.Stored, err)
	}
	c.Data[3] = 255
	bright := filepath.Join(dir, "bright.hdr")
	if err := write(bright, c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if text, _ := os.ReadFile(bright); strings.Contains(string(text), "reflectance scale factor") {
		t.Errorf("a [0, 255] output records a scale:\n%s", text)
	}
}

// TestWindowScaleAndCancel checks that a window reader of a cube whose
// automatic scale needs the largest value finds it in a pass that a
// cancelled context stops, and then reads every block on Open's scale.
func TestWindowScaleAndCancel(t *testing.T) {
	dir := t.TempDir()
	hdr := int16Cube(t, dir, []int16{100, 4000, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, "")
	r, err := openWindow(hdr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Prepare(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled pass: %v", err)
	}
	if err := r.Prepare(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	whole, err := openCube(hdr)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Metadata()
	if err != nil || m.Stored.Scale != 255.0/4095 || m.Stored.Scale != whole.Stored.Scale {
		t.Fatalf("window scale %v, whole %v, %v", m.Stored.Scale, whole.Stored.Scale, err)
	}
	lines, err := r.ReadLines(0, 1)
	if err != nil || lines.Data[1] != whole.Data[1] {
		t.Fatalf("block %v, whole %v, %v", lines.Data, whole.Data, err)
	}
}
