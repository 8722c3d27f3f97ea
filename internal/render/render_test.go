package render

import (
	"errors"
	"image/png"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/dictfile"
)

func TestAtomGridNormalisesEachTile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const h, w, scale = 3, 4, 2
	tiles := make([][]float64, 5)
	for i := range tiles {
		tiles[i] = make([]float64, h*w)
		for j := range tiles[i] {
			tiles[i][j] = rng.NormFloat64() * float64(i+1) * 100
		}
	}
	tiles[4] = make([]float64, h*w) // constant tile
	img := AtomGrid(tiles, h, w, scale)
	// 5 tiles → 3 columns, 2 rows.
	if got, want := img.Bounds().Dx(), 3*(w*scale+scale)+scale; got != want {
		t.Fatalf("width %d, want %d", got, want)
	}
	if got, want := img.Bounds().Dy(), 2*(h*scale+scale)+scale; got != want {
		t.Fatalf("height %d, want %d", got, want)
	}
	for a, tile := range tiles {
		x0 := scale + (a%3)*(w*scale+scale)
		y0 := scale + (a/3)*(h*scale+scale)
		lo, hi := uint8(255), uint8(0)
		for y := 0; y < h*scale; y++ {
			for x := 0; x < w*scale; x++ {
				g := img.GrayAt(x0+x, y0+y).Y
				lo, hi = min(lo, g), max(hi, g)
			}
		}
		if a == 4 {
			if lo != 128 || hi != 128 {
				t.Errorf("constant tile drawn in [%d, %d], want mid gray", lo, hi)
			}
			continue
		}
		if lo != 0 || hi != 255 {
			t.Errorf("tile %d drawn in [%d, %d], want [0, 255]", a, lo, hi)
		}
		// The maximum of the tile is where white is.
		best := 0
		for j, v := range tile {
			if v > tile[best] {
				best = j
			}
		}
		if g := img.GrayAt(x0+(best%w)*scale, y0+(best/w)*scale).Y; g != 255 {
			t.Errorf("tile %d: its maximum is drawn as %d", a, g)
		}
	}
}

func TestSideBySideSharesOneMapping(t *testing.T) {
	const h, w = 10, 20
	ref := make([]float64, h*w)
	for i := range ref {
		ref[i] = float64(i) // 99.5th percentile = 198
	}
	half := make([]float64, h*w)
	for i := range half {
		half[i] = ref[i] / 2
	}
	img := SideBySide([][]float64{ref, half}, nil, h, w)
	if img.Bounds().Dx() != 2*w+4 || img.Bounds().Dy() != h {
		t.Fatalf("size %v", img.Bounds())
	}
	for _, i := range []int{0, 57, 150, 199} {
		y, x := i/w, i%w
		want := min(255, int(255*ref[i]/198+0.5))
		if g := int(img.GrayAt(x, y).Y); g != want {
			t.Errorf("reference pixel %d drawn as %d, want %d", i, g, want)
		}
		wantHalf := min(255, int(255*half[i]/198+0.5))
		if g := int(img.GrayAt(w+4+x, y).Y); g != wantHalf {
			t.Errorf("second panel pixel %d drawn as %d, want %d", i, g, wantHalf)
		}
	}
}

// TestSideBySideMissing: a missing (NaN) voxel is black and takes no
// part in the white point: a reference with many of them is stretched as
// its values are.
func TestSideBySideMissing(t *testing.T) {
	const h, w = 10, 20
	ref := make([]float64, h*w)
	for i := range ref {
		ref[i] = float64(i % 100) // 99.5th percentile 99 over the values
	}
	for i := range 50 {
		ref[2*i] = math.NaN()
	}
	img := SideBySide([][]float64{ref}, nil, h, w)
	if g := img.GrayAt(0, 0).Y; g != 0 {
		t.Errorf("a missing voxel drawn as %d", g)
	}
	if g := img.GrayAt(99%w, 99/w).Y; g != 255 {
		t.Errorf("the brightest value drawn as %d", g)
	}
}

func TestWritePNG(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.png")
	img := AtomGrid([][]float64{{1, 2, 3, 4}}, 2, 2, 1)
	if err := WritePNG(p, img, false); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatal(err)
	}
	if err := WritePNG(p, img, false); !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "a.png already exists") {
		t.Errorf("overwrite without force: %v", err)
	}
	if err := WritePNG(p, img, true); err != nil {
		t.Errorf("overwrite with force: %v", err)
	}
	if err := WritePNG(filepath.Join(dir, "missing", "b.png"), img, false); err == nil {
		t.Error("writing into a missing folder: no error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("leftover files: %v", entries)
	}
}

// TestCubeAtoms: each tile holds the atom's band slices side by side, pixel
// (y, t·w + x) being pixel (y, x) of band t.
func TestCubeAtoms(t *testing.T) {
	const h, w, q, r = 2, 3, 4, 5
	rng := rand.New(rand.NewPCG(3, 4))
	atoms := tproduct.NewTensor(h*w, r, q)
	for i := range atoms.Data {
		atoms.Data[i] = rng.NormFloat64()
	}
	m := &dictfile.Model{Patch: dictfile.PatchShape{Height: h, Width: w, Depth: q}, Atoms: atoms}
	tiles := make([][]float64, r)
	for j := range tiles {
		tiles[j] = make([]float64, h*w*q)
		for band := range q {
			for y := range h {
				for x := range w {
					tiles[j][y*w*q+band*w+x] = atoms.At(y*w+x, j, band)
				}
			}
		}
	}
	got, want := CubeAtoms(m), AtomGrid(tiles, h, w*q, 8)
	if !got.Bounds().Eq(want.Bounds()) || !slices.Equal(got.Pix, want.Pix) {
		t.Error("CubeAtoms differs from the grid of the atoms' band slices side by side")
	}
}

// TestSideBySideLabels: with labels the panels sit under a strip with
// each label written (in ink) above its panel, cut at the left to the
// panel's width, and drawn as without labels.
func TestSideBySideLabels(t *testing.T) {
	const h, w = 10, 60
	ref := make([]float64, h*w)
	for i := range ref {
		ref[i] = float64(i)
	}
	plain := SideBySide([][]float64{ref, ref}, nil, h, w)
	img := SideBySide([][]float64{ref, ref}, []string{"clean", "a/long/path/to/denoised.hdr"}, h, w)
	if img.Bounds().Dy() != h+lineHeight {
		t.Fatalf("size %v, want %d lines of panel under %d of labels", img.Bounds(), h, lineHeight)
	}
	for p := range 2 {
		inked := 0
		for y := range lineHeight {
			for x := p * (w + 4); x < p*(w+4)+w; x++ {
				if img.GrayAt(x, y).Y < 128 {
					inked++
				}
			}
		}
		if inked == 0 {
			t.Errorf("panel %d has no label", p)
		}
	}
	for y := range h {
		for x := range plain.Bounds().Dx() {
			if a, b := plain.GrayAt(x, y).Y, img.GrayAt(x, y+lineHeight).Y; a != b {
				t.Fatalf("pixel (%d, %d): %d with labels, %d without", x, y, b, a)
			}
		}
	}
	if got := fitText("a/long/path/to/denoised.hdr", 60); got != "...d.hdr" || textWidth(got) > 60 {
		t.Errorf("fitText = %q", got)
	}
}
