package envi

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/msi"
)

// Every block of lines that the window reader reads equals the same lines of the
// cube Open reads, in every layout, data type, byte order and header
// offset.
func TestReaderLinesMatchOpen(t *testing.T) {
	const samples, lines, bands = 3, 5, 4
	hdrs, _ := synthLayouts(t, samples, lines, bands)
	for _, hdr := range hdrs {
		whole, err := openCube(hdr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := openWindow(hdr, 0)
		if err != nil {
			t.Fatal(err)
		}
		if h, w, b := r.Size(); h != lines || w != samples || b != bands {
			t.Fatalf("%s: size %d×%d×%d", hdr, h, w, b)
		}
		for y0 := range lines {
			for n := 1; y0+n <= lines; n++ {
				got, err := r.ReadLines(y0, n)
				if err != nil {
					t.Fatalf("%s: lines %d+%d: %v", hdr, y0, n, err)
				}
				want := whole.Crop(y0, 0, 0, n, samples, bands)
				if !slices.Equal(got.Data, want.Data) || got.Height != n {
					t.Fatalf("%s: lines [%d, %d): %v, want %v", hdr, y0, y0+n, got.Data, want.Data)
				}
			}
		}
		for _, bad := range [][2]int{{-1, 1}, {0, 0}, {4, 2}, {0, lines + 1}} {
			if _, err := r.ReadLines(bad[0], bad[1]); err == nil {
				t.Errorf("%s: lines %d+%d read", hdr, bad[0], bad[1])
			}
		}
		r.Close()
	}
}

// A cube written in blocks of lines, in any order, is byte for byte the
// files write writes for the whole cube, header included.
func TestWriterMatchesWrite(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	c := msi.NewCube(7, 5, 3)
	for i := range c.Data {
		c.Data[i] = rng.Float64()*300 - 20
	}
	c.Wavelengths = []float64{400, 410.5, 420}
	c.Fields = []msi.Field{field("map info", "{UTM, 1, 1}"), field("description", "{a scene}")}
	c.Processing = "tdsc denoise --method 2dsc"
	if err := write(filepath.Join(dir, "whole.hdr"), c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// A scale multiplies the values as Open's does.
	r, err := openWindow(filepath.Join(dir, "whole.hdr"), 2.5)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	scaled, err := Format.Open(filepath.Join(dir, "whole.hdr"), msi.ReadOptions{Scale: 2.5})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadLines(2, 3); err != nil || !slices.Equal(got.Data, scaled.Crop(2, 0, 0, 3, 5, 3).Data) {
		t.Errorf("scaled lines: %v", err)
	}
	if _, err := openWindow(filepath.Join(dir, "whole.hdr"), -1); err == nil {
		t.Error("a negative scale was accepted")
	}

	w, err := create(filepath.Join(dir, "blocks.hdr"), c.Height, c.Width, c.Bands, c.Metadata, msi.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, blk := range [][2]int{{4, 3}, {0, 2}, {2, 2}} {
		if err := w.WriteLines(c.Crop(blk[0], 0, 0, blk[1], c.Width, c.Bands), blk[0]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteLines(c.Crop(1, 0, 0, 1, c.Width, c.Bands), 1); err == nil {
		t.Error("a line written twice was accepted")
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".hdr", ".img"} {
		a, err := os.ReadFile(filepath.Join(dir, "whole"+ext))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "blocks"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from write's:\n%q\n%q", ext, b, a)
		}
	}
}

// A writer that is not given every line, or is aborted, or is given a bad
// block, commits nothing and leaves no file behind; an existing output is
// refused without force.
func TestWriterFailures(t *testing.T) {
	dir := t.TempDir()
	w, err := create(filepath.Join(dir, "o.hdr"), 4, 2, 2, msi.Metadata{}, msi.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	block := msi.NewCube(2, 2, 2)
	if err := w.WriteLines(block, 0); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		c  *msi.Cube
		y0 int
	}{{block, 3}, {block, -1}, {msi.NewCube(1, 3, 2), 2}, {msi.NewCube(1, 2, 1), 2}} {
		if err := w.WriteLines(bad.c, bad.y0); err == nil {
			t.Errorf("block %s at line %d accepted", bad.c.Size(), bad.y0)
		}
	}
	nan := msi.NewCube(1, 2, 2)
	nan.Data[3] = 1e39 // no float32
	if err := w.WriteLines(nan, 2); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("value too large for float32: %v", err)
	}
	if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "not written") {
		t.Errorf("Commit with lines missing: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	if err := os.WriteFile(filepath.Join(dir, "o.img"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := create(filepath.Join(dir, "o.hdr"), 4, 2, 2, msi.Metadata{}, msi.WriteOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("existing output: %v", err)
	}
	w, err = create(filepath.Join(dir, "o.hdr"), 4, 2, 2, msi.Metadata{}, msi.WriteOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("after Abort the folder holds %v", entries)
	}
}
