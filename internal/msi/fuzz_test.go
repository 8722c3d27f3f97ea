package msi

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func FuzzParseENVIHeader(f *testing.F) {
	f.Add([]byte("ENVI\nsamples = 3\nlines = 2\nbands = 2\ndata type = 4\ninterleave = bsq\nbyte order = 0\n"))
	f.Add([]byte("ENVI\r\ndescription = {a\r\nb}\r\nSAMPLES = 640\r\nlines = 480\r\nbands = 3\r\ndata type = 12\r\n" +
		"interleave = bip\r\nbyte order = 1\r\nheader offset = 128\r\nwavelength units = Micrometers\r\n" +
		"wavelength = {\r\n0.45,\r\n0.55,\r\n0.65}\r\n"))
	f.Add([]byte(enviHeaderText(&Cube{Height: 2, Width: 3, Bands: 2, Data: make([]float64, 12), Wavelengths: []float64{400, 410}})))
	f.Add([]byte("ENVI\nsamples = 1\nlines = 1\nbands = 1\ndata type = 1\nwavelength = {\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		h, err := parseENVIHeader(text)
		if err != nil {
			return
		}
		if h.samples <= 0 || h.lines <= 0 || h.bands <= 0 || h.headerOffset < 0 {
			t.Fatalf("accepted sizes %d×%d×%d, offset %d", h.samples, h.lines, h.bands, h.headerOffset)
		}
		if enviBytes(h.dataType) == 0 {
			t.Fatalf("accepted data type %d", h.dataType)
		}
		if h.interleave != "bsq" && h.interleave != "bil" && h.interleave != "bip" {
			t.Fatalf("accepted interleave %q", h.interleave)
		}
		if h.wavelengths != nil && len(h.wavelengths) != h.bands {
			t.Fatalf("%d wavelengths for %d bands", len(h.wavelengths), h.bands)
		}
		for _, wl := range h.wavelengths {
			if math.IsNaN(wl) || math.IsInf(wl, 0) {
				t.Fatalf("accepted wavelength %v", wl)
			}
		}
	})
}

// FuzzReadPNGStack reads fuzzed bytes as the one band of a stack. Reading
// must not panic; when it succeeds the cube must match the slow At-based
// decoding of the same bytes, and when it fails the error must name the
// file and be justified: the bytes do not decode, are low-bit grayscale, or
// hold a pixel whose red, green and blue differ.
func FuzzReadPNGStack(f *testing.F) {
	seeds := []image.Image{
		image.NewGray(image.Rect(0, 0, 3, 2)),
		image.NewGray16(image.Rect(0, 0, 2, 3)),
		image.NewRGBA(image.Rect(0, 0, 2, 2)),
		image.NewNRGBA(image.Rect(0, 0, 2, 2)),
		image.NewRGBA64(image.Rect(0, 0, 1, 2)),
		image.NewNRGBA64(image.Rect(0, 0, 2, 1)),
		image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Gray{10}, color.Gray{200}, color.RGBA{1, 2, 3, 255}}),
	}
	seeds[0].(*image.Gray).Pix[1] = 77
	seeds[1].(*image.Gray16).Pix[3] = 0x99
	seeds[3].(*image.NRGBA).Pix[3] = 128
	for _, img := range seeds {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "f_01.png")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, scene, err := ReadPNGStack(dir)
		ref, refErr := png.Decode(bytes.NewReader(data))
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name %s", err, path)
			}
			if refErr != nil {
				return
			}
			if data[25] == pngGray && data[24] < 8 {
				return // low-bit grayscale is refused
			}
			r := ref.Bounds()
			for y := r.Min.Y; y < r.Max.Y; y++ {
				for x := r.Min.X; x < r.Max.X; x++ {
					if _, gray := referenceLevel(ref, x, y); !gray {
						return
					}
				}
			}
			t.Fatalf("refused a decodable gray image: %v", err)
		}
		if refErr != nil {
			t.Fatalf("read bytes that image/png rejects (%v)", refErr)
		}
		r := ref.Bounds()
		if scene != "f" || c.Bands != 1 || c.Width != r.Dx() || c.Height != r.Dy() || len(c.Data) != c.Width*c.Height {
			t.Fatalf("scene %q, cube %s with %d values, image %v", scene, c.Size(), len(c.Data), r)
		}
		for i, v := range c.Data {
			want, gray := referenceLevel(ref, r.Min.X+i%c.Width, r.Min.Y+i/c.Width)
			if !gray || v != want || v < 0 || v > 255 {
				t.Fatalf("pixel %d: got %v, reference %v (gray %v)", i, v, want, gray)
			}
		}
	})
}

// addFixtures seeds f with the fixtures whose names end in ext.
func addFixtures(f *testing.F, ext string) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "arrays", "*"+ext))
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

// checkDecoded checks a cube decoded from fuzzed bytes: a sane size, as
// many values as voxels, all finite.
func checkDecoded(t *testing.T, c *Cube) {
	if c.Height <= 0 || c.Width <= 0 || c.Bands <= 0 || len(c.Data) != c.Height*c.Width*c.Bands {
		t.Fatalf("cube %s with %d values", c.Size(), len(c.Data))
	}
	for i, v := range c.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("value %d is %v", i, v)
		}
	}
	if err := checkCube(c); err != nil {
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
			c, dtype, err := decodeNPY(data, axes, name)
			if err != nil {
				if !strings.HasPrefix(err.Error(), name+": ") {
					t.Fatalf("error %q does not name the file", err)
				}
				continue
			}
			checkDecoded(t, c)
			if !slices.Contains(DTypes, dtype) {
				t.Fatalf("element type %q", dtype)
			}
			path := filepath.Join(t.TempDir(), "back.npy")
			if _, err := writeNPY(path, c, axes, typeFloat64, 1, false); err != nil {
				t.Fatal(err)
			}
			back, _, err := readNPY(path, axes)
			if err != nil || !back.SameSize(c) || !slices.Equal(back.Data, c.Data) {
				t.Fatalf("write and read back: %v", err)
			}
		}
	})
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
			c, dtype, v, err := decodeMAT(data, variable, "HWB", name)
			if err != nil {
				if !strings.HasPrefix(err.Error(), name+": ") {
					t.Fatalf("error %q does not name the file", err)
				}
				continue
			}
			checkDecoded(t, c)
			if !slices.Contains(DTypes, dtype) || variable != "" && v != variable {
				t.Fatalf("element type %q, variable %q (asked for %q)", dtype, v, variable)
			}
		}
	})
}

// FuzzENVIReadLines reads fuzzed data as a small ENVI cube of a fuzzed
// layout, whole (Open) and by blocks of lines (ENVIReader). Neither may
// panic, and they must agree: the same error or none, and every block the
// same lines as the whole cube.
func FuzzENVIReadLines(f *testing.F) {
	f.Add(uint8(4), uint8(0), false, uint8(0), bytes.Repeat([]byte{0, 0, 128, 63}, 12), uint8(1), uint8(1))
	f.Add(uint8(12), uint8(2), true, uint8(3), append(bytes.Repeat([]byte{1, 2}, 13), 9), uint8(0), uint8(2))
	f.Add(uint8(5), uint8(1), false, uint8(0), append(bytes.Repeat([]byte{0}, 88), 0, 0, 0, 0, 0, 0, 0xf8, 0x7f), uint8(1), uint8(2))
	f.Fuzz(func(t *testing.T, dataType, interleave uint8, bigEndian bool, offset uint8, data []byte, y0, n uint8) {
		const samples, lines, bands = 2, 3, 2
		order := 0
		if bigEndian {
			order = 1
		}
		header := fmt.Sprintf("ENVI\nsamples = %d\nlines = %d\nbands = %d\ndata type = %d\ninterleave = %s\nbyte order = %d\nheader offset = %d\n",
			samples, lines, bands, dataType%16, []string{"bsq", "bil", "bip"}[interleave%3], order, offset%8)
		dir := t.TempDir()
		hdr := filepath.Join(dir, "c.hdr")
		if err := os.WriteFile(hdr, []byte(header), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "c.img"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		whole, openErr := Open(hdr)
		r, err := OpenENVI(hdr, 0)
		if err != nil {
			if openErr == nil {
				t.Fatalf("Open reads what OpenENVI refuses: %v", err)
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
			// A non-finite value in these lines; Open must refuse the cube too.
			if openErr == nil {
				t.Fatalf("ReadLines(%d, %d): %v, but Open reads the cube", y, k, err)
			}
		case openErr == nil:
			if want := whole.Crop(y, 0, 0, k, samples, bands); !slices.Equal(got.Data, want.Data) {
				t.Fatalf("lines [%d, %d): %v, Open has %v", y, y+k, got.Data, want.Data)
			}
		}
	})
}
