package msi

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

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

// TestCloneIsDeep checks that a clone shares nothing with its original.
func TestCloneIsDeep(t *testing.T) {
	c := NewCube(1, 2, 2)
	c.Wavelengths, c.FWHM, c.BandNames = []float64{400, 500}, []float64{10, 10}, []string{"a", "b"}
	c.Fields = []Field{{Format: "envi", Key: "map info", Value: "{x}"}}
	d := c.Clone()
	d.Data[0], d.Wavelengths[0], d.FWHM[0], d.BandNames[0], d.Fields[0].Value = 1, 1, 1, "z", "{y}"
	if c.Data[0] != 0 || c.Wavelengths[0] != 400 || c.FWHM[0] != 10 || c.BandNames[0] != "a" || c.Fields[0].Value != "{x}" {
		t.Errorf("the clone shares memory with the original: %+v", c)
	}
}

// TestCheck checks that Check refuses what writers cannot store.
func TestCheck(t *testing.T) {
	good := func() *Cube { return NewCube(2, 2, 3) }
	if err := good().Check(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(c *Cube)
		want string
	}{
		{"short data", func(c *Cube) { c.Data = c.Data[1:] }, "has 11 values"},
		{"wavelengths", func(c *Cube) { c.Wavelengths = []float64{1, 2} }, "2 wavelengths"},
		{"NaN wavelength", func(c *Cube) { c.Wavelengths = []float64{1, 2, nan()} }, "wavelength NaN"},
		{"FWHM", func(c *Cube) { c.FWHM = []float64{1} }, "1 FWHM values"},
		{"band names", func(c *Cube) { c.BandNames = []string{"a"} }, "1 band names"},
		{"no-data", func(c *Cube) { c.NoData, c.HasNoData = nan(), true }, "no-data value NaN"},
	} {
		c := good()
		tc.edit(c)
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func nan() float64 { var z float64; return z / z }

// TestLines checks the bookkeeping of a window writer's lines.
func TestLines(t *testing.T) {
	l := NewLines(5)
	if err := l.Check(1, 2); err != nil {
		t.Fatal(err)
	}
	l.Mark(1, 2)
	for _, bad := range [][2]int{{2, 1}, {0, 2}, {-1, 1}, {4, 2}, {0, 0}} {
		if err := l.Check(bad[0], bad[1]); err == nil {
			t.Errorf("lines %d+%d accepted", bad[0], bad[1])
		}
	}
	if err := l.Done(); err == nil || !strings.Contains(err.Error(), "3 of 5 lines") {
		t.Errorf("Done with 3 lines missing: %v", err)
	}
	l.Mark(0, 1)
	l.Mark(3, 2)
	if err := l.Done(); err != nil {
		t.Error(err)
	}
}

// TestPresent checks the names of the metadata a cube has.
func TestPresent(t *testing.T) {
	m := NewCube(1, 1, 1)
	if got := m.Present(^Carried(0)); got != nil {
		t.Errorf("empty metadata has %v", got)
	}
	m.Wavelengths, m.BandNames, m.Description, m.HasNoData = []float64{1}, []string{"a"}, "x", true
	if got := m.Present(^CarriesBandNames); !slices.Equal(got, []string{"wavelengths", "description", "no-data value"}) {
		t.Errorf("got %v", got)
	}
	m.Data[0] = math.NaN()
	if got := m.Present(CarriesMissing); !slices.Equal(got, []string{"mark of missing voxels (written as 0)"}) {
		t.Errorf("with a missing voxel: %v", got)
	}
}

func TestCheckFits(t *testing.T) {
	// 2×3×4 values of 8 bytes and 100 stored bytes: 292 bytes.
	if err := CheckFits("c.hdr", 2, 3, 4, 100, 292); err != nil {
		t.Fatalf("at the budget: %v", err)
	}
	if err := CheckFits("c.hdr", 100000, 100000, 10, 1e11, 0); err != nil {
		t.Fatalf("no budget: %v", err)
	}
	err := CheckFits("c.hdr", 2, 3, 4, 100, 291)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Need != 292 || tl.Budget != 291 || tl.Height != 2 || tl.Width != 3 || tl.Bands != 4 {
		t.Fatalf("over the budget: %#v", err)
	}
	if want := "c.hdr: the 2×3×4 cube needs 292 B to read whole"; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("%q, want it to start %q", err, want)
	}
	// No overflow for a cube far beyond memory.
	err = CheckFits("big.hdr", 1<<40, 1<<40, 1<<20, 0, 1<<30)
	if !errors.As(err, &tl) || tl.Need != math.MaxInt64 || !strings.Contains(err.Error(), "budget of 1.0 GiB") {
		t.Fatalf("huge cube: %v", err)
	}
	if err := CheckFits("x.mat", 0, 0, 0, 2048, 1024); err == nil || !strings.HasPrefix(err.Error(), "x.mat: reading it whole needs 2.0 KiB") {
		t.Fatalf("file alone: %v", err)
	}
}
