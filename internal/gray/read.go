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
// A d×d patch P (row y, column x) becomes one lateral slice of a tproduct.Tensor
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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"tdsc/internal/formats/pngstack"
)

// Image is a grayscale image on the [0, 1] scale; pixel (x, y) is
// Pix[y*Width+x].
type Image struct {
	Height, Width int
	Pix           []float64
}

// ErrColour is wrapped by the error of reading a colour image without
// luminance conversion (pngstack.ErrColour).
var ErrColour = pngstack.ErrColour

// ReadPNG reads the PNG file at path as a grayscale image on [0, 1]
// (pngstack.ReadGrayPNG with White = 1). Grayscale PNGs (8 or 16 bits, with or
// without alpha) are read as they are, and so are colour PNGs whose R, G
// and B are equal in every pixel. Any other colour PNG is an error (wrapping
// ErrColour) naming the first coloured pixel, unless luminance is set: then
// every pixel becomes 0.299·R + 0.587·G + 0.114·B (BT.601 luma of the stored
// samples). Alpha is ignored. Errors name the file.
func ReadPNG(path string, luminance bool) (*Image, error) {
	pix, h, w, err := pngstack.ReadGrayPNG(path, pngstack.GrayOptions{White: 1, Luminance: luminance})
	if err != nil {
		return nil, err
	}
	return &Image{Height: h, Width: w, Pix: pix}, nil
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
