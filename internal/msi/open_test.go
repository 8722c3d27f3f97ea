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

// TestCrop checks Crop against At on a random cube, and its panics.
func TestCrop(t *testing.T) {
	c := NewCube(7, 9, 5)
	for i := range c.Data {
		c.Data[i] = float64(i*7919%1009) + 0.5
	}
	c.Wavelengths = []float64{400, 410, 420, 430, 440}
	got := c.Crop(2, 3, 1, 4, 5, 3)
	for b := range 3 {
		for y := range 4 {
			for x := range 5 {
				if got.At(y, x, b) != c.At(y+2, x+3, b+1) {
					t.Fatalf("voxel (%d, %d, %d): %v, want %v", y, x, b, got.At(y, x, b), c.At(y+2, x+3, b+1))
				}
			}
		}
	}
	if want := []float64{410, 420, 430}; !slices.Equal(got.Wavelengths, want) {
		t.Errorf("wavelengths %v, want %v", got.Wavelengths, want)
	}
	for _, bad := range [][6]int{{5, 0, 0, 3, 1, 1}, {0, 0, 0, 0, 1, 1}, {0, 5, 0, 1, 5, 1}, {0, 0, 3, 1, 1, 3}, {-1, 0, 0, 1, 1, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Crop%v did not panic", bad)
				}
			}()
			c.Crop(bad[0], bad[1], bad[2], bad[3], bad[4], bad[5])
		}()
	}
}
