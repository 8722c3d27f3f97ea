package hdf5

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tdsc/internal/msi"
)

// fixture returns the path of a fixture of testdata/arrays.
func fixture(name string) string {
	return filepath.Join("..", "..", "..", "testdata", "arrays", name)
}

// g is the value of voxel (h, w, b) of the cubes of cubes.h5 (see
// scripts/make-fixtures.py).
func g(h, w, b int) float64 { return float64((13*h + 5*w + 29*b + 1) % 251) }

// TestReadAxes reads the same uint8 cube stored in three axis orders, in
// nested groups, chunked and deflated or not, and checks every voxel
// against the formula that made it, and the wavelengths beside one.
func TestReadAxes(t *testing.T) {
	for _, tc := range []struct{ dataset, axes string }{
		{"hwb", ""},
		{"/HDFEOS/SWATHS/Data Fields/Cube", "BHW"},
		{"prisma/VNIR_Cube", "hbw"},
	} {
		c, err := Format.Open(fixture("cubes.h5")+":"+tc.dataset, msi.ReadOptions{Axes: tc.axes})
		if err != nil {
			t.Fatal(err)
		}
		if c.Height != 16 || c.Width != 12 || c.Bands != 4 {
			t.Fatalf("%s: %s, want 16×12×4", tc.dataset, c.Size())
		}
		for b := range 4 {
			for y := range 16 {
				for x := range 12 {
					if got := c.At(y, x, b); got != g(y, x, b) {
						t.Fatalf("%s: voxel (%d, %d, %d) = %v, want %v", tc.dataset, y, x, b, got, g(y, x, b))
					}
				}
			}
		}
		if c.Stored.Format != "hdf5" || c.Stored.DType != "uint8" || c.Stored.Scale != 1 {
			t.Errorf("%s: stored %+v", tc.dataset, c.Stored)
		}
		wantWL := strings.HasPrefix(tc.dataset, "/HDFEOS")
		if (c.Wavelengths != nil) != wantWL || wantWL && c.Wavelengths[3] != 750 {
			t.Errorf("%s: wavelengths %v", tc.dataset, c.Wavelengths)
		}
	}
}

// TestReadOnly reads the one cube of a file given without a dataset: the
// fixtures' reflectance f/100 as float32, on the working scale ×255.
func TestReadOnly(t *testing.T) {
	c, err := Format.Open(fixture("one_cube.he5"), msi.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for b := range 3 {
		for y := range 4 {
			for x := range 5 {
				want := float64(float32(float64(20*y+3*x+7*b+1)/100)) * 255
				if got := c.At(y, x, b); math.Abs(got-want) > 1e-12 {
					t.Fatalf("voxel (%d, %d, %d) = %v, want %v", y, x, b, got, want)
				}
			}
		}
	}
}

// TestSplitPath splits paths at the colon after the file's extension
// only, so that a dataset path may hold colons and a folder's name may
// end in .h5.
func TestSplitPath(t *testing.T) {
	for _, tc := range []struct{ path, file, dataset string }{
		{"x.h5", "x.h5", ""},
		{"x.h5:/a/b", "x.h5", "/a/b"},
		{"dir.h5/x.nc:var", "dir.h5/x.nc", "var"},
		{"x.HE5:/a:b", "x.HE5", "/a:b"},
		{"x.npy", "x.npy", ""},
	} {
		file, dataset := SplitPath(tc.path)
		if file != tc.file || dataset != tc.dataset {
			t.Errorf("SplitPath(%q) = %q, %q; want %q, %q", tc.path, file, dataset, tc.file, tc.dataset)
		}
	}
}

// FuzzReadHDF5 decodes fuzzed bytes as an HDF5 file, by the path of each
// dataset of the fixtures and without one: nothing may panic, and a cube
// read must be sane.
func FuzzReadHDF5(f *testing.F) {
	for _, name := range []string{"cubes.h5", "one_cube.he5", "h5py_types.mat", "v73_chunked.mat"} {
		data, err := os.ReadFile(fixture(name))
		if err != nil {
			f.Fatal(err)
		}
		for _, dataset := range []string{"", "hwb", "/HDFEOS/SWATHS/Data Fields/Cube", "prisma/VNIR_Cube", "data/reflectance", "f16_be"} {
			f.Add(data, dataset)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, dataset string) {
		c, _, err := decode(data, "fuzz.h5", dataset, "HWB", 1<<26)
		if err != nil {
			return
		}
		if c.Height <= 0 || c.Width <= 0 || c.Bands <= 0 || len(c.Data) != c.Height*c.Width*c.Bands {
			t.Fatalf("cube %s with %d values", c.Size(), len(c.Data))
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
	})
}
