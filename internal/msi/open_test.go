package msi

import (
	"image"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestOpenDispatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	dir := t.TempDir()
	c := randomCube(rng, 3, 4, 2, 0, 255)
	for i := range c.Data {
		c.Data[i] = float64(int(c.Data[i])) // whole levels survive both formats exactly
	}
	stack := filepath.Join(dir, "stack")
	if _, err := Write(stack, c, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(filepath.Join(dir, "cube.hdr"), c, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{stack, filepath.Join(dir, "cube.hdr"), filepath.Join(dir, "cube.img")} {
		got, err := Open(path)
		if err != nil {
			t.Fatalf("Open(%s): %v", path, err)
		}
		if !got.SameSize(c) || !slices.Equal(got.Data, c.Data) {
			t.Fatalf("Open(%s) differs from the cube written", path)
		}
	}

	band := writeFile(t, dir, "x_01.png", encodePNGBytes(t, image.NewGray(image.Rect(0, 0, 2, 2))))
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "no such file or folder"},
		{filepath.Join(dir, "missing.hdr"), "no such file or folder"},
		{writeFile(t, dir, "cube.tif", []byte("II*")), "unknown format"},
		{band, "single PNG"},
	} {
		_, err := Open(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%s): got %v, want an error naming it and containing %q", tc.path, err, tc.want)
		}
	}
}
