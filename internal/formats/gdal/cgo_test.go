//go:build gdal

package gdal

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"tdsc/internal/formats/hdf5"
	"tdsc/internal/msi"
	"tdsc/internal/testenv/cubetest"
)

// geoCube returns an h×w×b cube of whole levels in [0, 255] with a few
// missing voxels, and metadata of every kind GeoTIFF carries.
func geoCube(rng *rand.Rand, h, w, b int) *msi.Cube {
	c := cubetest.Levels(rng, h, w, b, 256)
	c.Data[3], c.Data[len(c.Data)-1] = math.NaN(), math.NaN()
	c.Georef = &msi.Georef{Transform: [6]float64{300000, 10, 0, 5e6, 0, -10}}
	for i := range b {
		c.Wavelengths = append(c.Wavelengths, 450+12.5*float64(i))
		c.BandNames = append(c.BandNames, "B"+string(rune('a'+i)))
	}
	c.NoData, c.HasNoData = 65535, true
	c.Description = "a test scene"
	return c
}

// TestWriteRead writes random cubes as float32 and, with gains and
// offsets, as uint16 GeoTIFF, whole and in strips of every height, and
// reads them back whole and a window of lines at a time: the values
// (missing voxels included) and the metadata are the cube's, and the file
// written in strips is the file written whole.
func TestWriteRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 1))
	dir := t.TempDir()
	c := geoCube(rng, 13, 7, 3)
	for _, tc := range []struct {
		name string
		opts msi.WriteOptions
	}{
		{"float32", msi.WriteOptions{Scale: 1, ScaleGiven: true}},
		{"uint16", msi.WriteOptions{DType: "uint16", Scale: 1, Gains: []float64{0.5, 0.25, 1}, Offsets: []float64{-10, 0, -1}}},
	} {
		whole := filepath.Join(dir, tc.name+".tif")
		if _, err := Format.Write(whole, c, tc.opts); err != nil {
			t.Fatal(err)
		}
		got, err := Format.Open(whole, msi.ReadOptions{Scale: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !got.SameSize(c) {
			t.Fatalf("%s: read %s, wrote %s", tc.name, got.Size(), c.Size())
		}
		for i, v := range c.Data {
			if g := got.Data[i]; g != v && !(math.IsNaN(g) && math.IsNaN(v)) {
				t.Fatalf("%s: value %d is %v, want %v", tc.name, i, g, v)
			}
		}
		if *got.Georef != *c.Georef || !slices.Equal(got.Wavelengths, c.Wavelengths) || !slices.Equal(got.BandNames, c.BandNames) ||
			got.Description != c.Description || !got.HasNoData || got.NoData != c.NoData {
			t.Errorf("%s: metadata %+v", tc.name, got.Metadata)
		}
		if tc.opts.Gains != nil && !slices.Equal(got.Stored.Gains, tc.opts.Gains) {
			t.Errorf("%s: gains %v", tc.name, got.Stored.Gains)
		}
		r, err := Format.(msi.WindowOpener).OpenWindow(whole, msi.ReadOptions{Scale: 1})
		if err != nil {
			t.Fatal(err)
		}
		for y0 := 0; y0 < c.Height; y0 += 5 {
			n := min(5, c.Height-y0)
			lines, err := r.ReadLines(y0, n)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range lines.Data {
				b, y, x := i/(n*c.Width), i/c.Width%n, i%c.Width
				if w := got.At(y0+y, x, b); v != w && !(math.IsNaN(v) && math.IsNaN(w)) {
					t.Fatalf("%s: window at line %d: voxel %d is %v, want %v", tc.name, y0, i, v, w)
				}
			}
		}
		r.Close()
		for _, step := range []int{1, 4, 13} {
			strips := filepath.Join(dir, tc.name+"-strips.tif")
			w, err := Format.(msi.WindowCreator).CreateWindow(strips, c.Height, c.Width, c.Bands, c.Metadata, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			// Strips written bottom first: the order does not matter.
			for y0 := (c.Height - 1) / step * step; y0 >= 0; y0 -= step {
				if err := w.WriteLines(c.Crop(y0, 0, 0, min(step, c.Height-y0), c.Width, c.Bands), y0); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(whole)
			b, _ := os.ReadFile(strips)
			if !slices.Equal(a, b) {
				t.Errorf("%s: written in strips of %d lines, the file differs from the one written whole", tc.name, step)
			}
			os.Remove(strips)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left in the folder: %v", entries)
	}
}

// TestReadAxes reads a dataset of lines × bands × samples through GDAL's
// HDF5 driver with the axes HBW: the same cube as the pure-Go reader's.
func TestReadAxes(t *testing.T) {
	file, err := filepath.Abs(filepath.Join("..", "..", "..", "testdata", "arrays", "cubes.h5"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := hdf5.Format.Open(file+":/prisma/VNIR_Cube", msi.ReadOptions{Axes: "HBW"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Format.Open(`HDF5:"`+file+`"://prisma/VNIR_Cube`, msi.ReadOptions{Axes: "HBW"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.SameSize(want) || !slices.Equal(got.Data, want.Data) {
		t.Fatalf("through GDAL %s, without %s, or values differ", got.Size(), want.Size())
	}
}
