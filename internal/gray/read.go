// Package gray reads grayscale images and cuts d×d patches out of them for
// dictionary learning on large image patches (tdsc atoms, the paper's
// Fig. 5), in the tensor layout of package tsc.
//
// # Intensity scale
//
// Pixels are on the [0, 1] scale: 8-bit samples are divided by 255, 16-bit
// samples by 65535. (The rest of tdsc works on [0, 255]; the ℓ1 weight
// β = 0.1 of the paper's Fig. 5 belongs to [0, 1].)
//
// # Patch layouts
//
// A d×d patch P (row y, column x) becomes one lateral slice of a tsc.Tensor
// in one of two ways (see Layout):
//
//   - TwoD (2DSC): a d×1×d tensor with element (i, 0, t) = P(row i,
//     column t): rows on mode 1, columns on mode 3. The t-product with a
//     coefficient tube then combines circular shifts of an atom along the
//     columns.
//   - Vector (ordinary sparse coding): a d²×1×1 tensor, the row-major
//     vector P(0,0), P(0,1), …, P(d−1,d−1).
package gray

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Image is a grayscale image on the [0, 1] scale; pixel (x, y) is
// Pix[y*Width+x].
type Image struct {
	Height, Width int
	Pix           []float64
}

// Luma weights of ITU-R BT.601, applied to the (gamma-encoded) R, G and B
// samples when a colour image is converted to luminance.
const (
	lumaR = 0.299
	lumaG = 0.587
	lumaB = 0.114
)

// ErrColour is wrapped by the error of reading a colour image without
// luminance conversion.
var ErrColour = errors.New("colour image, not grayscale")

// maxInflate bounds how many bytes deflate can expand one compressed byte
// into, so that a PNG whose header declares more pixels than its size can
// hold is rejected before the decoder allocates for them.
const maxInflate = 1032

// ReadPNG reads the PNG file at path as a grayscale image on [0, 1].
// Grayscale PNGs (8 or 16 bits, with or without alpha) are read as they
// are, and so are colour PNGs whose R, G and B are equal in every pixel.
// Any other colour PNG is an error (wrapping ErrColour) naming the first
// coloured pixel, unless
// luminance is set: then every pixel becomes 0.299·R + 0.587·G + 0.114·B
// (BT.601 luma of the stored samples). Alpha is ignored. Errors name the
// file.
func ReadPNG(path string, luminance bool) (*Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable PNG: %v", path, err)
	}
	// At least one bit per pixel must come out of the compressed data.
	if float64(cfg.Width)*float64(cfg.Height)/8 > maxInflate*float64(len(data)) {
		return nil, fmt.Errorf("%s: truncated or corrupt PNG: %d bytes cannot hold the %d×%d pixels it declares",
			path, len(data), cfg.Width, cfg.Height)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot decode PNG: %v", path, err)
	}
	g, err := fromImage(img, luminance)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

// fromImage converts a decoded image to an Image (see ReadPNG).
func fromImage(img image.Image, luminance bool) (*Image, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	g := &Image{Height: h, Width: w, Pix: make([]float64, w*h)}
	switch m := img.(type) {
	case *image.Gray:
		for y := range h {
			for x, v := range m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:w] {
				g.Pix[y*w+x] = float64(v) / 255
			}
		}
		return g, nil
	case *image.Gray16:
		for y := range h {
			row := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):][:2*w]
			for x := range w {
				g.Pix[y*w+x] = float64(uint16(row[2*x])<<8|uint16(row[2*x+1])) / 65535
			}
		}
		return g, nil
	}
	for y := range h {
		for x := range w {
			c := color.NRGBA64Model.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA64)
			switch {
			case c.R == c.G && c.G == c.B:
				g.Pix[y*w+x] = float64(c.R) / 65535
			case luminance:
				g.Pix[y*w+x] = (lumaR*float64(c.R) + lumaG*float64(c.G) + lumaB*float64(c.B)) / 65535
			default:
				return nil, fmt.Errorf("%w: pixel (x=%d, y=%d) has R=%d G=%d B=%d (of 65535)",
					ErrColour, x, y, c.R, c.G, c.B)
			}
		}
	}
	return g, nil
}

// Files expands the inputs into the PNG files they name, in order. An input
// is a PNG file (its name ending in .png in any case) or a folder: a folder
// stands for the PNG files directly inside it, sorted by name (hidden files
// and files of other types, such as CAVE's *_RGB.bmp, are skipped), so the
// folder of a band stack stands for its bands. A folder without PNG files
// and with exactly one subfolder that has some (the CAVE archive nests
// balloons_ms/balloons_ms) stands for that subfolder. Errors name the input
// at fault.
func Files(inputs []string) ([]string, error) {
	if len(inputs) == 0 {
		return nil, errors.New("no input images")
	}
	var files []string
	for _, in := range inputs {
		fi, err := os.Stat(in)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%s: no such file or folder", in)
			}
			return nil, err
		}
		if !fi.IsDir() {
			if !isPNG(in) {
				return nil, fmt.Errorf("%s: not a PNG file (want .png images or folders of them)", in)
			}
			files = append(files, in)
			continue
		}
		pngs, subdirs, err := listPNGs(in)
		if err != nil {
			return nil, err
		}
		if len(pngs) == 0 {
			var nested []string
			for _, sub := range subdirs {
				if p, _, err := listPNGs(sub); err == nil && len(p) > 0 {
					nested, pngs = append(nested, sub), p
				}
			}
			if len(nested) != 1 {
				return nil, fmt.Errorf("%s: no PNG files in the folder (nor in exactly one subfolder)", in)
			}
		}
		files = append(files, pngs...)
	}
	return files, nil
}

func isPNG(name string) bool { return strings.EqualFold(filepath.Ext(name), ".png") }

// listPNGs returns the paths of the visible PNG files directly inside dir,
// sorted, and of its visible subfolders.
func listPNGs(dir string) (pngs, subdirs []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path) // follows symbolic links
		switch {
		case err != nil:
			continue
		case fi.IsDir():
			subdirs = append(subdirs, path)
		case fi.Mode().IsRegular() && isPNG(name):
			pngs = append(pngs, path)
		}
	}
	slices.Sort(pngs)
	return pngs, subdirs, nil
}
