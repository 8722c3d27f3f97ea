package gray

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadPNG feeds arbitrary bytes to ReadPNG. Whatever it reads must be
// what image/png decodes, on [0, 1]; an error must name the file; and with
// luminance conversion every image that image/png decodes must be read.
func FuzzReadPNG(f *testing.F) {
	seeds := []image.Image{
		image.NewGray(image.Rect(0, 0, 3, 2)),
		image.NewGray16(image.Rect(0, 0, 2, 3)),
		image.NewNRGBA(image.Rect(0, 0, 2, 2)),
		image.NewPaletted(image.Rect(0, 0, 4, 4), color.Palette{color.Gray{10}, color.RGBA{1, 2, 3, 255}}),
	}
	seeds[0].(*image.Gray).Pix[1] = 77
	seeds[2].(*image.NRGBA).Pix[0] = 200
	for _, img := range seeds {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), false)
		f.Add(buf.Bytes(), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, luminance bool) {
		path := filepath.Join(t.TempDir(), "f.png")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := ReadPNG(path, luminance)
		ref, refErr := png.Decode(bytes.NewReader(data))
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name %s", err, path)
			}
			if refErr == nil && luminance {
				t.Fatalf("refused an image that image/png decodes, with luminance conversion: %v", err)
			}
			return
		}
		if refErr != nil {
			t.Fatalf("read bytes that image/png rejects (%v)", refErr)
		}
		r := ref.Bounds()
		if g.Width != r.Dx() || g.Height != r.Dy() || len(g.Pix) != g.Width*g.Height {
			t.Fatalf("image %d×%d with %d pixels, image/png %v", g.Width, g.Height, len(g.Pix), r)
		}
		for i, v := range g.Pix {
			if !(v >= 0 && v <= 1) || math.IsNaN(v) {
				t.Fatalf("pixel %d is %v, outside [0, 1]", i, v)
			}
		}
	})
}
