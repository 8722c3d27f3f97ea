package mat

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tdsc/internal/formats/array"
	"tdsc/internal/msi"
)

// addFixtures seeds f with the fixtures whose names end in ext.
func addFixtures(f *testing.F, ext string) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "arrays", "*"+ext))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no %s fixtures: %v", ext, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// isReadType reports whether name is the name of a type that is read.
func isReadType(name string) bool {
	_, ok := array.ReadType(name)
	return ok
}

// checkDecoded checks a cube decoded from fuzzed bytes: a sane size, as
// many values as voxels, all finite.
func checkDecoded(t *testing.T, c *msi.Cube) {
	if c.Height <= 0 || c.Width <= 0 || c.Bands <= 0 || len(c.Data) != c.Height*c.Width*c.Bands {
		t.Fatalf("cube %s with %d values", c.Size(), len(c.Data))
	}
	for i, v := range c.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("value %d is %v", i, v)
		}
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

// FuzzReadMAT decodes fuzzed bytes as a MAT-file, taking the one 3-D
// variable or the variable named. Decoding must not panic; an error must
// name the file; a decoded cube must be sane, and its wavelengths, if any,
// one finite value per band.
func FuzzReadMAT(f *testing.F) {
	addFixtures(f, ".mat")
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.mat"
		for _, variable := range []string{"", "cube", "dbl"} {
			c, dtype, v, err := decode(data, variable, "HWB", name, 0)
			if err != nil {
				if !strings.HasPrefix(err.Error(), name+": ") {
					t.Fatalf("error %q does not name the file", err)
				}
				continue
			}
			checkDecoded(t, c)
			if !isReadType(dtype) || variable != "" && v != variable {
				t.Fatalf("element type %q, variable %q (asked for %q)", dtype, v, variable)
			}
		}
	})
}
