package gray

import (
	"bufio"
	"fmt"
	"image/png"
	"math/rand/v2"
	"os"
	"sort"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/dictfile"
	"tdsc/internal/patch"
)

// Model is how a d×d patch is coded: as a tensor (2DSC) or as a vector (SC).
type Model int

const (
	// TwoD codes a patch as a d×1×d tensor (rows on mode 1, columns on
	// mode 3) by the t-product: two-dimensional sparse coding.
	TwoD Model = iota
	// Vector codes a patch as a d²-vector (a d²×1×1 tensor): ordinary
	// sparse coding, the t-product with K = 1 being a matrix product.
	Vector
)

// ModelNames are the names of the Models, TwoD's first.
var ModelNames = []string{TwoD.String(), Vector.String()}

// ParseModel returns the Model named "2dsc" or "sc" (ModelNames).
func ParseModel(name string) (Model, error) {
	for _, m := range []Model{TwoD, Vector} {
		if name == m.String() {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown model %q: want 2dsc or sc", name)
}

// String returns "2dsc" or "sc".
func (m Model) String() string {
	if m == Vector {
		return "sc"
	}
	return "2dsc"
}

// Layout maps a D×D patch to a lateral slice of a tproduct.Tensor and back; see
// the package documentation. D must be at least 1.
type Layout struct {
	Model Model
	D     int
}

// Dims returns the tensor sizes M and K of a patch (and of an atom): D and
// D for TwoD, D² and 1 for Vector.
func (l Layout) Dims() (m, k int) {
	if l.Model == Vector {
		return l.D * l.D, 1
	}
	return l.D, l.D
}

// Shape returns the patch geometry recorded in a dictionary file, whose
// atoms are (Height·Width)×1×Depth: D×1×D for TwoD (a column of D pixels,
// with the D columns of the patch in place of bands) and D×D×1 for Vector.
func (l Layout) Shape() dictfile.PatchShape {
	if l.Model == Vector {
		return dictfile.PatchShape{Height: l.D, Width: l.D, Depth: 1}
	}
	return dictfile.PatchShape{Height: l.D, Width: 1, Depth: l.D}
}

// Pack writes the D×D row-major patch p into dst, a lateral slice (M·K
// values, Tensor.Lateral) of the layout. It panics if a length is wrong.
func (l Layout) Pack(dst, p []float64) {
	l.check(dst, p)
	if l.Model == Vector {
		copy(dst, p)
		return
	}
	// Element (i, 0, t) of a D×1×D slice is at t*D+i: row i, column t.
	d := l.D
	for y := range d {
		for x := range d {
			dst[x*d+y] = p[y*d+x]
		}
	}
}

// Unpack returns the lateral slice s (an atom or a patch) as a D×D
// row-major image, the inverse of Pack. It panics if s has the wrong
// length.
func (l Layout) Unpack(s []float64) []float64 {
	p := make([]float64, l.D*l.D)
	l.check(s, p)
	if l.Model == Vector {
		copy(p, s)
		return p
	}
	d := l.D
	for y := range d {
		for x := range d {
			p[y*d+x] = s[x*d+y]
		}
	}
	return p
}

func (l Layout) check(slice, p []float64) {
	if l.D < 1 || len(slice) != l.D*l.D || len(p) != l.D*l.D {
		panic(fmt.Sprintf("gray: %d and %d values for a %d×%d patch", len(slice), len(p), l.D, l.D))
	}
}

// SampleOptions sets Sample.
type SampleOptions struct {
	// Samples is the number of patches to draw (≥ 1).
	Samples int
	// Seed selects the patch positions: the same files, layout and seed
	// give the same tproduct.
	Seed uint64
	// Luminance converts colour images to luminance (see ReadPNG).
	Luminance bool
	// Whiten whitens every image (see Whiten) before its patches are cut,
	// so the patches are on the unit-variance scale of the whitened
	// images, not on [0, 1].
	Whiten bool
	// Progress, if not nil, is called after every image read with the
	// number of images read and the number of images holding samples.
	Progress func(done, total int)
}

// sampleStream is the second PCG seed word of Sample.
const sampleStream = 0x6772_6179_7061_7463

// Sample draws opt.Samples distinct patch positions uniformly among all
// D×D windows of all the images (every window position of every image
// equally likely, so a larger image gives more patches), removes the mean
// of every patch and returns them in the layout l: an M×Samples×K tensor
// whose patches are in the order of the files and, within a file, of their
// top-left corner (row-major). With opt.Whiten the patches are cut from
// the whitened images. Images are read one at a time, and only
// those that hold a sample; only their sizes are read first. It is an
// error, naming the file, if an image is smaller than D×D or cannot be
// read, and an error if the images have fewer windows than opt.Samples.
func Sample(files []string, l Layout, opt SampleOptions) (*tproduct.Tensor, error) {
	if l.D < 1 {
		return nil, fmt.Errorf("gray: patch size %d, want at least 1", l.D)
	}
	if opt.Samples < 1 {
		return nil, fmt.Errorf("gray: %d samples, want at least 1", opt.Samples)
	}
	// start[f] is the index of the first window of file f among all.
	start := make([]int, len(files)+1)
	widths := make([]int, len(files))
	for f, path := range files {
		h, w, err := pngSize(path)
		if err != nil {
			return nil, err
		}
		if h < l.D || w < l.D {
			return nil, fmt.Errorf("%s: the image is %d×%d pixels (width×height), smaller than the %d×%d patch", path, w, h, l.D, l.D)
		}
		widths[f] = w - l.D + 1
		start[f+1] = start[f] + (h-l.D+1)*widths[f]
	}
	total := start[len(files)]
	if opt.Samples > total {
		return nil, fmt.Errorf("the images hold %d windows of %d×%d pixels, fewer than the %d samples asked for", total, l.D, l.D, opt.Samples)
	}
	pos := patch.Choose(total, opt.Samples, rand.NewPCG(opt.Seed, sampleStream))

	m, k := l.Dims()
	x := tproduct.NewTensor(m, opt.Samples, k)
	patch := make([]float64, l.D*l.D)
	var holding []int
	for f := range files {
		if i := sort.SearchInts(pos, start[f]); i < len(pos) && pos[i] < start[f+1] {
			holding = append(holding, f)
		}
	}
	j := 0
	for done, f := range holding {
		img, err := ReadPNG(files[f], opt.Luminance)
		if err != nil {
			return nil, err
		}
		if opt.Whiten {
			if img, err = Whiten(img); err != nil {
				return nil, fmt.Errorf("%s: %w", files[f], err)
			}
		}
		for ; j < len(pos) && pos[j] < start[f+1]; j++ {
			w := pos[j] - start[f]
			y0, x0 := w/widths[f], w%widths[f]
			var mean float64
			for y := range l.D {
				row := img.Pix[(y0+y)*img.Width+x0:][:l.D]
				copy(patch[y*l.D:], row)
				for _, v := range row {
					mean += v
				}
			}
			mean /= float64(len(patch))
			for i := range patch {
				patch[i] -= mean
			}
			l.Pack(x.Lateral(j), patch)
		}
		if opt.Progress != nil {
			opt.Progress(done+1, len(holding))
		}
	}
	return x, nil
}

// pngSize returns the size of the PNG image at path from its header.
func pngSize(path string) (height, width int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(bufio.NewReader(f))
	if err != nil {
		return 0, 0, fmt.Errorf("%s: not a readable PNG: %v", path, err)
	}
	return cfg.Height, cfg.Width, nil
}
