package pngstack

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
		c, scene, err := Read(dir)
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
