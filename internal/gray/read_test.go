package gray

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/formats/pngstack"
	"tdsc/internal/testenv"
)

// writePNG encodes img into dir/name and returns the path.
func writePNG(t *testing.T, dir, name string, img image.Image) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadPNGScalesAndConverts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	const w, h = 7, 5
	g8 := image.NewGray(image.Rect(0, 0, w, h))
	g16 := image.NewGray16(image.Rect(0, 0, w, h))
	gray8RGBA := image.NewNRGBA(image.Rect(0, 0, w, h))
	colour := image.NewRGBA64(image.Rect(0, 0, w, h))
	want8 := make([]float64, w*h)
	want16 := make([]float64, w*h)
	wantGrayRGBA := make([]float64, w*h)
	wantLuma := make([]float64, w*h)
	for y := range h {
		for x := range w {
			i := y*w + x
			v8 := uint8(rng.IntN(256))
			g8.SetGray(x, y, color.Gray{Y: v8})
			want8[i] = float64(v8) / 255
			v16 := uint16(rng.IntN(65536))
			g16.SetGray16(x, y, color.Gray16{Y: v16})
			want16[i] = float64(v16) / 65535
			a := uint8(rng.IntN(256))
			gray8RGBA.SetNRGBA(x, y, color.NRGBA{R: a, G: a, B: a, A: 255})
			wantGrayRGBA[i] = float64(a) / 255
			r, g, b := uint16(rng.IntN(65536)), uint16(rng.IntN(65536)), uint16(rng.IntN(65536))
			colour.SetRGBA64(x, y, color.RGBA64{R: r, G: g, B: b, A: 65535})
			wantLuma[i] = (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(b)) / 65535
		}
	}
	for _, c := range []struct {
		name      string
		img       image.Image
		luminance bool
		want      []float64
	}{
		{"g8.png", g8, false, want8},
		{"g16.png", g16, false, want16},
		{"grayrgba.png", gray8RGBA, false, wantGrayRGBA},
		{"grayrgba2.png", gray8RGBA, true, wantGrayRGBA},
		{"colour.png", colour, true, wantLuma},
	} {
		path := writePNG(t, dir, c.name, c.img)
		got, err := ReadPNG(path, c.luminance)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Width != w || got.Height != h {
			t.Fatalf("%s: size %d×%d, want %d×%d", c.name, got.Width, got.Height, w, h)
		}
		for i := range c.want {
			if math.Abs(got.Pix[i]-c.want[i]) > 1e-12 {
				t.Fatalf("%s: pixel %d is %v, want %v", c.name, i, got.Pix[i], c.want[i])
			}
		}
	}

	// A colour image without luminance conversion is refused.
	path := writePNG(t, dir, "c.png", colour)
	_, err := ReadPNG(path, false)
	if !errors.Is(err, ErrColour) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "pixel (x=0, y=0)") {
		t.Errorf("colour image read as gray: err = %v", err)
	}
	// Not a PNG, a missing file, and a header that declares far more pixels
	// than the file can hold.
	bad := filepath.Join(dir, "bad.png")
	if err := os.WriteFile(bad, []byte("not a png"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPNG(bad, false); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("garbage read: err = %v", err)
	}
	if _, err := ReadPNG(filepath.Join(dir, "missing.png"), false); err == nil || !strings.Contains(err.Error(), "missing.png") {
		t.Errorf("missing file read: err = %v", err)
	}
	huge := writePNG(t, dir, "huge.png", image.NewGray(image.Rect(0, 0, 1, 1)))
	data, _ := os.ReadFile(huge)
	// IHDR: type and data at bytes 12..29 (width and height at 16..24),
	// CRC at 29..33.
	copy(data[16:24], []byte{0, 1, 0, 0, 0, 1, 0, 0})
	binary.BigEndian.PutUint32(data[29:33], crc32.ChecksumIEEE(data[12:29]))
	if err := os.WriteFile(huge, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPNG(huge, false); err == nil || !strings.Contains(err.Error(), huge+": truncated or corrupt PNG") {
		t.Errorf("bomb header read: err = %v", err)
	}
}

// TestReadPNGMatchesBandStackReader checks a 16-bit CAVE band against the
// band-stack reader of package msi, which works on [0, 255].
func TestReadPNGMatchesBandStackReader(t *testing.T) {
	stack := testenv.Path(t, "reference", "balloons_crop", "clean")
	cube, _, err := pngstack.Read(stack)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files([]string{stack})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != cube.Bands {
		t.Fatalf("%d files for %d bands", len(files), cube.Bands)
	}
	for _, b := range []int{0, len(files) - 1} {
		img, err := ReadPNG(files[b], false)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range cube.Band(b) {
			if math.Abs(img.Pix[i]*255-v) > 1e-9 {
				t.Fatalf("band %d pixel %d: %v·255, msi reads %v", b+1, i, img.Pix[i], v)
			}
		}
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	one := image.NewGray(image.Rect(0, 0, 2, 2))
	stack := filepath.Join(dir, "scene_ms")
	nested := filepath.Join(stack, "scene_ms")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	b2 := writePNG(t, nested, "scene_02.png", one)
	b1 := writePNG(t, nested, "scene_01.png", one)
	writePNG(t, nested, ".hidden.png", one)
	if err := os.WriteFile(filepath.Join(nested, "scene_RGB.bmp"), []byte("BM"), 0o644); err != nil {
		t.Fatal(err)
	}
	single := writePNG(t, dir, "single.PNG", one)

	got, err := Files([]string{single, stack, nested})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{single, b1, b2, b1, b2}; !slices.Equal(got, want) {
		t.Errorf("Files = %q, want %q", got, want)
	}

	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		inputs []string
		want   string
	}{
		{nil, "no input images"},
		{[]string{filepath.Join(dir, "missing")}, "missing: no such file or folder"},
		{[]string{filepath.Join(nested, "scene_RGB.bmp")}, "scene_RGB.bmp: not a PNG file"},
		{[]string{empty}, "empty: no PNG files"},
	} {
		if _, err := Files(c.inputs); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Files(%q): err = %v, want %q", c.inputs, err, c.want)
		}
	}
}
