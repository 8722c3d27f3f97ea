package npy

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// FuzzReadNPY decodes fuzzed bytes as a .npy file. Decoding must not panic;
// an error must name the file; a decoded cube must be sane and survive
// being written as float64 and read back unchanged, in its axis order.
func FuzzReadNPY(f *testing.F) {
	addFixtures(f, ".npy")
	f.Fuzz(func(t *testing.T, data []byte) {
		const name = "fuzz.npy"
		for _, axes := range []string{"HWB", "BHW"} {
			c, dtype, err := decode(data, axes, name)
			if err != nil {
				if !strings.HasPrefix(err.Error(), name+": ") {
					t.Fatalf("error %q does not name the file", err)
				}
				continue
			}
			checkDecoded(t, c)
			if !isReadType(dtype) {
				t.Fatalf("element type %q", dtype)
			}
			path := filepath.Join(t.TempDir(), "back.npy")
			if _, err := write(path, c, axes, array.Float64, 1, msi.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			back, err := Format.Open(path, msi.ReadOptions{Axes: axes, Scale: 1})
			if err != nil || !back.SameSize(c) || !slices.Equal(back.Data, c.Data) {
				t.Fatalf("write and read back: %v", err)
			}
		}
	})
}

// FuzzReadLines reads fuzzed values as a small .npy array of a fuzzed
// element type, axis order and memory order, whole (Open) and by windows
// of lines (the window reader), with the automatic scale or a given one.
// Neither may panic, and they must agree: every window holds the same
// lines as the whole cube, and a window fails when Open does (but for a
// non-finite value outside it, with a given scale).
func FuzzReadLines(f *testing.F) {
	f.Add(uint8(0), uint8(0), false, bytes.Repeat([]byte{0, 0, 128, 63}, 24), uint8(1), uint8(1), false)
	f.Add(uint8(3), uint8(2), true, bytes.Repeat([]byte{1, 2}, 24), uint8(0), uint8(2), true)
	f.Add(uint8(1), uint8(5), true, append(bytes.Repeat([]byte{0}, 184), 0, 0, 0, 0, 0, 0, 0xf8, 0x7f), uint8(2), uint8(1), false)
	descrs := []string{"<f4", ">f8", "|u1", "<u2", ">i2"}
	orders := []string{"HWB", "HBW", "BHW", "WHB", "BWH", "WBH"}
	f.Fuzz(func(t *testing.T, descr, axes uint8, fortran bool, values []byte, y0, n uint8, given bool) {
		const lines = 3
		h, err := parseHeader([]byte("{'descr': '" + descrs[descr%5] + "', 'fortran_order': False, 'shape': (1,), }"))
		if err != nil {
			t.Fatal(err)
		}
		order := orders[axes%6]
		h.Fortran = fortran
		h.Shape = []int{2, 2, 2}
		h.Shape[strings.IndexByte(order, 'H')] = lines
		if want := 12 * h.Size; len(values) > want {
			values = values[:want] // a short file must fail both ways
		}
		var buf bytes.Buffer
		if _, err := writeHeader(&buf, h); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "f.npy")
		if err := os.WriteFile(path, append(buf.Bytes(), values...), 0o644); err != nil {
			t.Fatal(err)
		}
		opts := msi.ReadOptions{Axes: order}
		if given {
			opts.Scale = 0.5
		}
		whole, openErr := Format.Open(path, opts)
		r, err := Format.(msi.WindowOpener).OpenWindow(path, opts)
		if err != nil {
			if openErr == nil {
				t.Fatalf("Open reads what OpenWindow refuses: %v", err)
			}
			return
		}
		defer r.Close()
		y, k := int(y0%lines), 1+int(n%lines)
		got, err := r.ReadLines(y, k)
		switch {
		case y+k > lines:
			if err == nil {
				t.Fatalf("lines [%d, %d) of %d read", y, y+k, lines)
			}
		case err != nil:
			// A non-finite value in the array; Open must refuse it too.
			if openErr == nil {
				t.Fatalf("ReadLines(%d, %d): %v, but Open reads the cube", y, k, err)
			}
		case openErr != nil:
			// A non-finite value outside these lines: found only by the
			// automatic scale's pass over the whole array.
			if !given {
				t.Fatalf("ReadLines(%d, %d) reads what Open refuses: %v", y, k, openErr)
			}
		default:
			if want := whole.Crop(y, 0, 0, k, whole.Width, whole.Bands); !slices.Equal(got.Data, want.Data) {
				t.Fatalf("lines [%d, %d): %v, Open has %v", y, y+k, got.Data, want.Data)
			}
		}
	})
}

// FuzzReadTypes reads fuzzed values as a small .npy array of any element
// type that is read (float16 included), stored with its shape as it is
// and with a dimension of length 1 before or after it. Nothing may panic;
// the 4-D file must read as the 3-D one, whole and by windows of lines,
// and every value must be finite.
func FuzzReadTypes(f *testing.F) {
	f.Add(uint8(0), uint8(1), bytes.Repeat([]byte{0x00, 0x3c}, 24))
	f.Add(uint8(5), uint8(2), bytes.Repeat([]byte{0xff, 0x7b, 0x01, 0x00}, 24))
	f.Add(uint8(9), uint8(0), bytes.Repeat([]byte{0xff}, 96))
	f.Add(uint8(1), uint8(1), append(bytes.Repeat([]byte{0}, 22), 0x00, 0x7c))
	descrs := []string{"<f2", ">f2", "|i1", "<i4", ">i8", "<u4", ">u8", "<f4", "<f8", "|u1", "<i2"}
	f.Fuzz(func(t *testing.T, descr, extra uint8, values []byte) {
		h, err := parseHeader([]byte("{'descr': '" + descrs[int(descr)%len(descrs)] + "', 'fortran_order': False, 'shape': (1,), }"))
		if err != nil {
			t.Fatal(err)
		}
		h.Fortran = descr&0x80 != 0
		if want := 12 * h.Size; len(values) > want {
			values = values[:want]
		}
		dir := t.TempDir()
		store := func(name string, shape []int) string {
			h.Shape = shape
			var buf bytes.Buffer
			if _, err := writeHeader(&buf, h); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, append(buf.Bytes(), values...), 0o644); err != nil {
				t.Fatal(err)
			}
			return path
		}
		plain := store("plain.npy", []int{3, 2, 2})
		shape := []int{3, 2, 2}
		switch extra % 3 {
		case 1:
			shape = []int{1, 3, 2, 2}
		case 2:
			shape = []int{3, 2, 2, 1}
		}
		squeezed := store("squeezed.npy", shape)
		want, wantErr := Format.Open(plain, msi.ReadOptions{})
		got, err := Format.Open(squeezed, msi.ReadOptions{})
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("shape %v: %v; shape (3, 2, 2): %v", shape, err, wantErr)
		}
		if err != nil {
			return
		}
		checkDecoded(t, got)
		if !slices.Equal(got.Data, want.Data) || !reflect.DeepEqual(got.Stored, want.Stored) {
			t.Fatalf("shape %v reads %v %+v, shape (3, 2, 2) %v %+v", shape, got.Data, got.Stored, want.Data, want.Stored)
		}
		r, err := Format.(msi.WindowOpener).OpenWindow(squeezed, msi.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		lines, err := r.ReadLines(0, 3)
		if err != nil || !slices.Equal(lines.Data, got.Data) {
			t.Fatalf("windows of shape %v: %v", shape, err)
		}
	})
}
