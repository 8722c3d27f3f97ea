// Package render draws pictures for people: dictionary atoms as a grid of
// small images (of any patches, or of a cube's patches band by band), one
// band of several cubes side by side (both 8-bit grayscale), and what a
// denoiser removed: one band noisy | denoised | removed with line plots of
// chosen pixels' spectra (colour). Writing is atomic (temporary file, then
// rename).
package render

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"slices"
	"sort"

	"tdsc/internal/atomicfile"
	"tdsc/internal/dictfile"
)

// AtomGrid draws n tiles, each an h×w row-major image, on a grid of
// ⌈√n⌉ columns, every pixel magnified scale times, with a one-pixel (times
// scale) light separator. Each tile is contrast-normalised on its own: its
// minimum maps to black and its maximum to white (a constant tile is mid
// gray), so the shape of every atom is visible whatever its norm.
// It panics if a tile is not h·w long or h, w or scale is less than 1.
func AtomGrid(tiles [][]float64, h, w, scale int) *image.Gray {
	if h < 1 || w < 1 || scale < 1 {
		panic("render: bad tile size or scale")
	}
	n := len(tiles)
	cols := int(math.Ceil(math.Sqrt(float64(n))))
	if cols == 0 {
		cols = 1
	}
	rows := (n + cols - 1) / cols
	gap := scale
	img := image.NewGray(image.Rect(0, 0, cols*(w*scale+gap)+gap, rows*(h*scale+gap)+gap))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	for a, tile := range tiles {
		if len(tile) != h*w {
			panic(fmt.Sprintf("render: tile %d has %d values, want %d", a, len(tile), h*w))
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range tile {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		x0 := gap + (a%cols)*(w*scale+gap)
		y0 := gap + (a/cols)*(h*scale+gap)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				g := uint8(128)
				if hi > lo {
					g = uint8(math.Round(255 * (tile[y*w+x] - lo) / (hi - lo)))
				}
				for dy := 0; dy < scale; dy++ {
					for dx := 0; dx < scale; dx++ {
						img.SetGray(x0+x*scale+dx, y0+y*scale+dy, color.Gray{Y: g})
					}
				}
			}
		}
	}
	return img
}

// CubeAtoms draws the atoms of a dictionary of image patches (p×p pixels
// × q bands) as an AtomGrid, magnified 8 times: each atom is one tile, its
// q band slices side by side.
func CubeAtoms(m *dictfile.Model) *image.Gray {
	h, w, q := m.Patch.Height, m.Patch.Width, m.Patch.Depth
	tiles := make([][]float64, m.Atoms.N)
	for j := range tiles {
		atom := m.Atoms.Lateral(j) // band t at [t*h*w, (t+1)*h*w), row-major
		tile := make([]float64, h*w*q)
		for t := range q {
			for y := range h {
				copy(tile[y*w*q+t*w:y*w*q+(t+1)*w], atom[t*h*w+y*w:t*h*w+(y+1)*w])
			}
		}
		tiles[j] = tile
	}
	return AtomGrid(tiles, h, w*q, 8)
}

// SideBySide draws the h×w row-major bands left to right with a 4-pixel
// white gap. All panels share one linear intensity mapping so they can be
// compared: 0 maps to black and the 99.5th percentile of the first band
// (the reference) to white, values beyond are clipped. The stretch makes
// dark bands (such as 420 nm in CAVE scenes) visible. With labels (one
// per band), each panel has its label written above it, cut at the left
// to the panel's width ("...oised30.hdr"); nil labels draw none.
// It panics if a band is not h·w long or labels are not one per band.
func SideBySide(bands [][]float64, labels []string, h, w int) *image.Gray {
	const gap = 4
	for i, b := range bands {
		if len(b) != h*w {
			panic(fmt.Sprintf("render: band %d has %d values, want %d", i, len(b), h*w))
		}
	}
	if labels != nil && len(labels) != len(bands) {
		panic(fmt.Sprintf("render: %d labels for %d bands", len(labels), len(bands)))
	}
	top := 0
	if labels != nil {
		top = lineHeight
	}
	white := 255.0
	if len(bands) > 0 {
		s := slices.DeleteFunc(slices.Clone(bands[0]), math.IsNaN) // missing voxels aside
		sort.Float64s(s)
		if len(s) > 0 {
			if p := s[int(0.995*float64(len(s)-1))]; p > 0 {
				white = p
			}
		}
	}
	n := len(bands)
	img := image.NewGray(image.Rect(0, 0, n*w+(n-1)*gap, top+h))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for i, b := range bands {
		x0 := i * (w + gap)
		if labels != nil {
			drawText(img, x0, (lineHeight-textHeight)/2, fitText(labels[i], w), ink)
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				v := math.Round(255 * b[y*w+x] / white)
				if math.IsNaN(v) { // a missing voxel: black
					v = 0
				}
				img.Pix[(top+y)*img.Stride+x0+x] = uint8(math.Max(0, math.Min(255, v)))
			}
		}
	}
	return img
}

// fitText returns s, or its end after "..." when s is wider than width
// pixels, so that the end of a path (the file's name) stays.
func fitText(s string, width int) string {
	if textWidth(s) <= width {
		return s
	}
	r := []rune(s)
	keep := min(max(0, width/charWidth-3), len(r))
	return "..." + string(r[len(r)-keep:])
}

// WritePNG writes img to path atomically (see package atomicfile). An
// existing file is replaced only when force is set; otherwise the error is
// an *atomicfile.ExistsError.
func WritePNG(path string, img image.Image, force bool) error {
	f, err := atomicfile.Create(path, force)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return atomicfile.Commit(f)
}
