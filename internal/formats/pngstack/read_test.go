package pngstack

import (
	"bytes"
	"encoding/binary"
	"fmt"
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

	"tdsc/internal/msi"
	"tdsc/internal/testenv"
)

// encodePNGBytes returns img encoded as PNG.
func encodePNGBytes(t testing.TB, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFile writes data to dir/name and returns the path.
func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// randomGray8 returns a w×h 8-bit gray image of random levels.
func randomGray8(rng *rand.Rand, w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.IntN(256))
	}
	return img
}

// patchIHDR rewrites the width, height and bit depth of an encoded PNG and
// fixes the chunk's checksum.
func patchIHDR(data []byte, w, h uint32, depth byte) []byte {
	data = slices.Clone(data)
	binary.BigEndian.PutUint32(data[16:20], w)
	binary.BigEndian.PutUint32(data[20:24], h)
	data[24] = depth
	binary.BigEndian.PutUint32(data[29:33], crc32.ChecksumIEEE(data[12:29]))
	return data
}

// referenceLevel returns the gray level of pixel (x, y) on the [0, 255]
// scale the slow way, through At and the concrete colour type, and whether
// its red, green and blue agree.
func referenceLevel(img image.Image, x, y int) (float64, bool) {
	switch c := img.At(x, y).(type) {
	case color.Gray:
		return float64(c.Y), true
	case color.Gray16:
		return float64(c.Y) * 255 / 65535, true
	case color.RGBA:
		return float64(c.R), c.R == c.G && c.G == c.B
	case color.NRGBA:
		return float64(c.R), c.R == c.G && c.G == c.B
	case color.RGBA64:
		return float64(c.R) * 255 / 65535, c.R == c.G && c.G == c.B
	case color.NRGBA64:
		return float64(c.R) * 255 / 65535, c.R == c.G && c.G == c.B
	default:
		panic(fmt.Sprintf("unexpected colour type %T", c))
	}
}

func TestReadPNGStackColourModels(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const w, h = 13, 7
	levels8 := make([]uint8, w*h)
	levels16 := make([]uint16, w*h)
	for i := range levels8 {
		levels8[i] = uint8(rng.IntN(256))
		levels16[i] = uint16(rng.IntN(65536))
	}
	r := image.Rect(0, 0, w, h)
	want8 := make([]float64, w*h)
	want16 := make([]float64, w*h)
	for i := range want8 {
		want8[i] = float64(levels8[i])
		want16[i] = float64(levels16[i]) / 257
	}
	grayPalette := func(n int, alpha bool) color.Palette {
		p := make(color.Palette, n)
		for i := range p {
			g := uint8(255 - i*255/(n-1))
			if alpha {
				p[i] = color.NRGBA{g, g, g, uint8(100 + i%100)}
			} else {
				p[i] = color.RGBA{g, g, g, 255}
			}
		}
		return p
	}
	cases := []struct {
		name     string
		img      func() image.Image
		decoded  string // the type image/png decodes the file into
		want     []float64
		wantPalN int // palette size, for paletted cases
	}{
		{"gray8", func() image.Image {
			m := image.NewGray(r)
			copy(m.Pix, levels8)
			return m
		}, "*image.Gray", want8, 0},
		{"gray16", func() image.Image {
			m := image.NewGray16(r)
			for i, v := range levels16 {
				m.Pix[2*i], m.Pix[2*i+1] = byte(v>>8), byte(v)
			}
			return m
		}, "*image.Gray16", want16, 0},
		{"rgb8", func() image.Image {
			m := image.NewRGBA(r)
			for i, v := range levels8 {
				m.Pix[4*i], m.Pix[4*i+1], m.Pix[4*i+2], m.Pix[4*i+3] = v, v, v, 255
			}
			return m
		}, "*image.RGBA", want8, 0},
		{"rgba8", func() image.Image {
			m := image.NewNRGBA(r)
			for i, v := range levels8 {
				m.Pix[4*i], m.Pix[4*i+1], m.Pix[4*i+2], m.Pix[4*i+3] = v, v, v, byte(rng.IntN(256))
			}
			return m
		}, "*image.NRGBA", want8, 0},
		{"rgb16", func() image.Image {
			m := image.NewRGBA64(r)
			for i, v := range levels16 {
				m.SetRGBA64(i%w, i/w, color.RGBA64{v, v, v, 65535})
			}
			return m
		}, "*image.RGBA64", want16, 0},
		{"rgba16", func() image.Image {
			m := image.NewNRGBA64(r)
			for i, v := range levels16 {
				m.SetNRGBA64(i%w, i/w, color.NRGBA64{v, v, v, uint16(rng.IntN(65536))})
			}
			return m
		}, "*image.NRGBA64", want16, 0},
		{"paletted8", func() image.Image {
			m := image.NewPaletted(r, grayPalette(256, false))
			for i, v := range levels8 {
				m.Pix[i] = 255 - v
			}
			return m
		}, "*image.Paletted", want8, 256},
		{"paletted8-transparent", func() image.Image {
			m := image.NewPaletted(r, grayPalette(256, true))
			for i, v := range levels8 {
				m.Pix[i] = 255 - v
			}
			return m
		}, "*image.Paletted", want8, 256},
	}
	// A 2-bit palette of four grays.
	small := make([]float64, w*h)
	smallImg := image.NewPaletted(r, grayPalette(4, false))
	for i := range smallImg.Pix {
		k := uint8(rng.IntN(4))
		smallImg.Pix[i] = k
		small[i] = float64(255 - int(k)*255/3)
	}
	cases = append(cases, struct {
		name     string
		img      func() image.Image
		decoded  string
		want     []float64
		wantPalN int
	}{"paletted2", func() image.Image { return smallImg }, "*image.Paletted", small, 4})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := encodePNGBytes(t, tc.img())
			dec, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%T", dec); got != tc.decoded {
				t.Fatalf("test image decodes to %s, want %s: the case does not test what it claims", got, tc.decoded)
			}
			dir := t.TempDir()
			writeFile(t, dir, "s_01.png", data)
			c, scene, err := Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			if scene != "s" || c.Height != h || c.Width != w || c.Bands != 1 || c.Wavelengths != nil {
				t.Fatalf("got scene %q, size %s, wavelengths %v; want s, %d×%d×1, nil", scene, c.Size(), c.Wavelengths, h, w)
			}
			for i, v := range c.Data {
				if math.Abs(v-tc.want[i]) > 1e-12 {
					t.Fatalf("pixel %d: got %v, want %v", i, v, tc.want[i])
				}
				ref, _ := referenceLevel(dec, i%w, i/w)
				if v != ref {
					t.Fatalf("pixel %d: got %v, At-based reference %v", i, v, ref)
				}
			}
		})
	}
}

func TestReadPNGStackOrderAndNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	const bands = 12
	imgs := make([]*image.Gray, bands)
	// Written in a shuffled order, with files the reader must ignore.
	for _, b := range rng.Perm(bands) {
		imgs[b] = randomGray8(rng, 5, 3)
		writeFile(t, dir, fmt.Sprintf("scene_x_%02d.png", b+1), encodePNGBytes(t, imgs[b]))
	}
	writeFile(t, dir, "scene_x_RGB.bmp", []byte("BM not really"))
	writeFile(t, dir, "Thumbs.db", []byte("junk"))
	writeFile(t, dir, "notes.png", []byte("not a band"))
	writeFile(t, dir, "scene_x_RGB.png", []byte("not a band either"))
	writeFile(t, dir, "._scene_x_01.png", []byte("macOS resource fork"))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, scene, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if scene != "scene_x" || c.Bands != bands {
		t.Fatalf("got scene %q with %d bands, want scene_x with %d", scene, c.Bands, bands)
	}
	for b, img := range imgs {
		for i, v := range c.Band(b) {
			if v != float64(img.Pix[i]) {
				t.Fatalf("band %d pixel %d: got %v, want %v", b, i, v, img.Pix[i])
			}
		}
	}
	if c.Wavelengths != nil {
		t.Errorf("12 bands: got wavelengths %v, want nil", c.Wavelengths)
	}
}

func TestReadPNGStackNumbering(t *testing.T) {
	one := encodePNGBytes(t, image.NewGray(image.Rect(0, 0, 2, 2)))
	t.Run("from zero", func(t *testing.T) {
		dir := t.TempDir()
		for b := range caveBands {
			writeFile(t, dir, fmt.Sprintf("z_%02d.png", b), one)
		}
		c, _, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if c.Bands != caveBands || c.Wavelengths != nil {
			t.Fatalf("bands 00..30: got %d bands, wavelengths %v; want 31, nil", c.Bands, c.Wavelengths)
		}
	})
	t.Run("cave wavelengths", func(t *testing.T) {
		dir := t.TempDir()
		for b := range caveBands {
			writeFile(t, dir, fmt.Sprintf("z_%d.png", b+1), one) // one digit below 10
		}
		c, _, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		for b, wl := range c.Wavelengths {
			if wl != float64(400+10*b) {
				t.Fatalf("band %d: wavelength %v, want %d", b, wl, 400+10*b)
			}
		}
		if len(c.Wavelengths) != caveBands {
			t.Fatalf("got %d wavelengths, want 31", len(c.Wavelengths))
		}
	})
}

func TestReadPNGStackNested(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	outer := t.TempDir()
	inner := filepath.Join(outer, "cave_ms")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(outer, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	img := randomGray8(rng, 4, 4)
	writeFile(t, inner, "cave_ms_01.png", encodePNGBytes(t, img))
	writeFile(t, inner, "cave_ms_02.png", encodePNGBytes(t, img))
	writeFile(t, outer, "readme.txt", []byte("x"))
	c, scene, err := Read(outer)
	if err != nil {
		t.Fatal(err)
	}
	if scene != "cave_ms" || c.Bands != 2 || c.At(3, 2, 1) != float64(img.Pix[3*4+2]) {
		t.Fatalf("nested read: scene %q, %d bands, voxel %v", scene, c.Bands, c.At(3, 2, 1))
	}
}

// TestReadPNGStackErrors checks that every bad stack gives an error naming
// the folder or file at fault and what is wrong.
func TestReadPNGStackErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	good := encodePNGBytes(t, randomGray8(rng, 6, 4))
	wider := encodePNGBytes(t, randomGray8(rng, 7, 4))
	noisy := encodePNGBytes(t, randomGray8(rng, 64, 64)) // barely compressible
	colour := image.NewRGBA(image.Rect(0, 0, 5, 5))
	for i := range colour.Pix {
		colour.Pix[i] = 255
	}
	colour.Pix[(2*5+3)*4+1] = 7 // G of pixel (x=3, y=2)
	cases := []struct {
		name  string
		setup func(dir string) string // returns the path to read
		want  []string                // substrings of the error, besides the path
	}{
		{"missing folder", func(dir string) string { return filepath.Join(dir, "nope") }, []string{"nope", "no such folder"}},
		{"not a folder", func(dir string) string { return writeFile(t, dir, "a_01.png", good) }, []string{"a_01.png", "not a folder"}},
		{"empty folder", func(dir string) string { return dir }, []string{"empty folder"}},
		{"no band files", func(dir string) string {
			writeFile(t, dir, "x_RGB.bmp", good)
			writeFile(t, dir, "Thumbs.db", good)
			writeFile(t, dir, "x.png", good)
			return dir
		}, []string{"no band files"}},
		{"gap", func(dir string) string {
			writeFile(t, dir, "x_01.png", good)
			writeFile(t, dir, "x_03.png", good)
			return dir
		}, []string{"band 02 missing"}},
		{"first missing", func(dir string) string {
			writeFile(t, dir, "x_02.png", good)
			writeFile(t, dir, "x_03.png", good)
			return dir
		}, []string{"band 01 missing"}},
		{"duplicate", func(dir string) string {
			writeFile(t, dir, "x_1.png", good)
			writeFile(t, dir, "x_01.png", good)
			writeFile(t, dir, "x_02.png", good)
			return dir
		}, []string{"duplicate band 1", "x_01.png", "x_1.png"}},
		{"mixed scenes", func(dir string) string {
			writeFile(t, dir, "a_01.png", good)
			writeFile(t, dir, "b_02.png", good)
			return dir
		}, []string{"different scenes", "a_01.png", "b_02.png"}},
		{"huge band number", func(dir string) string {
			writeFile(t, dir, "x_99999999999999999999999.png", good)
			return dir
		}, []string{"x_99999999999999999999999.png", "too large"}},
		{"different sizes", func(dir string) string {
			writeFile(t, dir, "x_01.png", good)
			writeFile(t, dir, "x_02.png", good)
			writeFile(t, dir, "x_03.png", wider)
			return dir
		}, []string{"x_03.png", "7×4", "x_01.png", "6×4"}},
		{"not a PNG", func(dir string) string {
			writeFile(t, dir, "x_01.png", good)
			writeFile(t, dir, "x_02.png", []byte("GIF89a..."))
			return dir
		}, []string{"x_02.png", "not a PNG"}},
		{"empty file", func(dir string) string {
			writeFile(t, dir, "x_01.png", nil)
			return dir
		}, []string{"x_01.png", "not a PNG"}},
		{"truncated header", func(dir string) string {
			writeFile(t, dir, "x_01.png", good[:20])
			return dir
		}, []string{"x_01.png", "truncated"}},
		{"truncated data", func(dir string) string {
			writeFile(t, dir, "x_01.png", noisy)
			writeFile(t, dir, "x_02.png", noisy[:len(noisy)/2])
			return dir
		}, []string{"x_02.png", "cannot decode"}},
		{"size the file cannot hold", func(dir string) string {
			writeFile(t, dir, "x_01.png", patchIHDR(good, 1<<20, 1<<20, 8))
			return dir
		}, []string{"x_01.png", "cannot hold"}},
		{"4-bit gray", func(dir string) string {
			writeFile(t, dir, "x_01.png", patchIHDR(good, 6, 4, 4))
			return dir
		}, []string{"x_01.png", "unsupported bit depth"}},
		{"colour band", func(dir string) string {
			writeFile(t, dir, "x_01.png", encodePNGBytes(t, colour))
			return dir
		}, []string{"x_01.png", "not grayscale", "x=3, y=2", "G=7 B=255 (of 255)"}},
		{"two nested stacks", func(dir string) string {
			for _, sub := range []string{"p", "q"} {
				if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(dir, sub), "x_01.png", good)
			}
			return dir
		}, []string{"subfolders", "p, q"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.setup(t.TempDir())
			c, _, err := Read(path)
			if err == nil {
				t.Fatalf("got a %s cube, want an error", c.Size())
			}
			for _, s := range append([]string{path}, tc.want...) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

// checkCAVE reads a CAVE scene through its outer folder and checks its size,
// scene name, wavelengths and value range, and one band against the slow
// At-based decoding. It returns the cube.
func checkCAVE(t *testing.T, scene string) *msi.Cube {
	outer := testenv.Path(t, "cave", scene)
	c, name, err := Read(outer)
	if err != nil {
		t.Fatal(err)
	}
	if name != scene || c.Height != 512 || c.Width != 512 || c.Bands != 31 {
		t.Fatalf("got scene %q of size %s, want %s of 512×512×31", name, c.Size(), scene)
	}
	if len(c.Wavelengths) != 31 || c.Wavelengths[0] != 400 || c.Wavelengths[30] != 700 {
		t.Fatalf("wavelengths %v, want 400..700 nm", c.Wavelengths)
	}
	for i, v := range c.Data {
		if !(v >= 0 && v <= 255) {
			t.Fatalf("voxel %d = %v is outside [0, 255]", i, v)
		}
	}
	const band = 17
	f, err := os.Open(filepath.Join(outer, scene, fmt.Sprintf("%s_%02d.png", scene, band+1)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range c.Band(band) {
		if ref, gray := referenceLevel(img, i%512, i/512); v != ref || !gray {
			t.Fatalf("band %d pixel %d: got %v, At-based reference %v (gray %v)", band, i, v, ref, gray)
		}
	}
	return c
}

func TestReadCAVEBalloons(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	c := checkCAVE(t, "balloons_ms")
	// 16-bit data: every value is a whole multiple of 255/65535.
	maxV := 0.0
	for i, v := range c.Data {
		if q := v * 65535 / 255; math.Abs(q-math.Round(q)) > 1e-6 {
			t.Fatalf("voxel %d = %v is not on the 16-bit grid", i, v)
		}
		maxV = max(maxV, v)
	}
	if maxV < 100 {
		t.Errorf("brightest voxel %v: the scene reads as nearly black", maxV)
	}
	// The inner folder is the same stack.
	inner, _, err := Read(testenv.Path(t, "cave", "balloons_ms", "balloons_ms"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inner.Data, c.Data) {
		t.Error("the inner folder reads differently from the outer one")
	}
}

func TestReadCAVEWatercolors(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	c := checkCAVE(t, "watercolors_ms")
	// 8-bit RGBA bands: whole values, and not all zero.
	nonzero := 0
	for i, v := range c.Data {
		if v != math.Round(v) {
			t.Fatalf("voxel %d = %v is not a whole 8-bit level", i, v)
		}
		if v > 0 {
			nonzero++
		}
	}
	if nonzero < len(c.Data)/2 {
		t.Errorf("only %d of %d voxels are non-zero", nonzero, len(c.Data))
	}
}

func BenchmarkReadPNGStack(b *testing.B) {
	dir := testenv.Path(b, "cave", "balloons_ms")
	for b.Loop() {
		if _, _, err := Read(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReadPNGStackHighlyCompressible checks that the bound on how much a
// PNG can declare for its size does not reject a valid constant band, the
// most compressible input there is.
func TestReadPNGStackHighlyCompressible(t *testing.T) {
	const w, h = 2048, 1024
	img := image.NewGray16(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d×%d 16-bit zero band: %d bytes, %.0f-fold compression", w, h, buf.Len(), float64(h*(2*w+1))/float64(buf.Len()))
	dir := t.TempDir()
	writeFile(t, dir, "z_01.png", buf.Bytes())
	c, _, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Width != w || c.Height != h || slices.Max(c.Data) != 0 {
		t.Fatalf("got %s cube with maximum %v", c.Size(), slices.Max(c.Data))
	}
}
