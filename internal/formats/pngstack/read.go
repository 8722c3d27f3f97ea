// Package pngstack reads and writes cubes as Columbia-style band stacks:
// a folder of one grayscale PNG per band, named <scene>_NN.png (the CAVE
// multispectral database's layout), and reads single grayscale PNGs
// (ReadGrayPNG) for the commands that learn from images.
//
// Levels: 16-bit samples are scaled by 255/65535 to the working [0, 255]
// scale, 8-bit samples taken as they are, unless a scale is given
// (ReadOptions.Scale: working = sample × scale); written bands are 16-bit,
// clipped to [0, 255] and scaled by 65535/255, missing (NaN) voxels 0. A
// stack's values are image intensities: its units, for outputs made from
// it, are the [0, 255] scale (Storage.Scale 1). A stack has a fixed layout
// and carries no metadata: a stack of the 31 CAVE bands is given their
// wavelengths, 400 to 700 nm.
package pngstack

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
)

// name is the format's name in Storage.Format.
const name = "png"

// Format is the PNG band stack format.
var Format msi.Format = format{}

type format struct{}

func (format) Info() msi.Info {
	return msi.Info{Name: name, Label: "PNG band stack", Path: "a band-stack folder"}
}

// Recognize reports whether path ends in .png: not a stack but one band
// of one, which Open refuses with a hint, and which Write takes as the
// name of the folder to write. (Any folder is a stack; package formats
// decides that, and writes any path no format recognizes as a stack.)
func (format) Recognize(path string) bool { return strings.EqualFold(filepath.Ext(path), ".png") }

// Outputs returns the folder path.
func (format) Outputs(path string) []string { return []string{path} }

// Open reads the stack in the folder path (see Read), unless it needs
// more than opts.Budget, with opts.Scale, if given, as the factor from
// every band's samples (8- or 16-bit) to the working scale.
func (format) Open(path string, opts msi.ReadOptions) (*msi.Cube, error) {
	if err := msi.Exists(path); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() && Format.Recognize(path) {
		return nil, fmt.Errorf("%s: a single PNG is not a cube: give the folder of band PNGs (<scene>_NN.png)", path)
	}
	c, _, deep, err := read(path, opts.Budget)
	if err != nil {
		return nil, err
	}
	c.Stored = msi.Storage{Format: name, Scale: 1, Units: depthUnits(deep)}
	if opts.Scale != 0 {
		// The bands are on the working scale by their depth: a 16-bit
		// sample s is s·255/65535, an 8-bit one as it is.
		for b, d := range deep {
			f := opts.Scale
			if d {
				f *= 65535.0 / 255
			}
			for i := range c.Band(b) {
				c.Band(b)[i] *= f
			}
		}
		c.Stored.Scale, c.Stored.ScaleGiven, c.Stored.Units = opts.Scale, true, msi.GivenScale(opts.Scale)
	}
	return c, nil
}

// depthUnits says how bands of these depths (true: 16-bit) are scaled.
func depthUnits(deep []bool) string {
	n := 0
	for _, d := range deep {
		if d {
			n++
		}
	}
	switch n {
	case 0:
		return "8-bit samples ×1"
	case len(deep):
		return "16-bit samples ×255/65535"
	}
	return "8-bit samples ×1, 16-bit ones ×255/65535"
}

// Write writes c as a stack in the folder path, its files named after the
// folder (see writeStack).
func (format) Write(path string, c *msi.Cube, opts msi.WriteOptions) (msi.WriteInfo, error) {
	clipped, err := writeStack(path, c, "", opts)
	return msi.WriteInfo{Clipped: clipped}, err
}

// caveBands is the band count of a CAVE scene, whose bands 01..31 are centred
// on 400, 410, ..., 700 nm.
const caveBands = 31

// bandFile is one PNG of a band stack.
type bandFile struct {
	path   string
	name   string
	scene  string
	digits string // the NN of <scene>_NN.png as written
	number int
}

// Read reads a Columbia-style band stack: the PNGs named
// <scene>_NN.png in dir (NN one or more digits), ordered by NN, one band
// each. It returns the cube and the scene name (the common prefix before
// _NN, e.g. "balloons_ms").
//
// All band files must share one scene prefix, and their numbers must run
// without gaps or duplicates from 0 or 1 (x_1.png and x_01.png are the same
// band, a duplicate). Other
// entries are ignored: files of other names (such as CAVE's *_RGB.bmp and
// Thumbs.db) and hidden files (names starting with '.', such as the ._*
// copies macOS leaves in archives). When dir holds no band PNGs but exactly
// one subfolder that does (the CAVE archive nests balloons_ms/balloons_ms),
// that subfolder is read.
//
// Bands are 16-bit grayscale (scaled by 255/65535 to [0, 255]), 8-bit
// grayscale (taken as they are) or 8- or 16-bit RGB, RGBA, gray+alpha or
// paletted images whose red, green and blue are equal in every pixel (CAVE's
// watercolors scene); alpha is ignored. Grayscale of fewer than 8 bits is
// rejected. All bands must have the same size. When the stack has 31 bands
// numbered 1..31 (CAVE), Wavelengths is set to 400, 410, ..., 700 nm;
// otherwise it is nil.
//
// The bands are decoded in parallel by up to runtime.GOMAXPROCS(0)
// goroutines. Every error names the folder or file at fault.
func Read(dir string) (*msi.Cube, string, error) {
	c, scene, _, err := read(dir, 0)
	return c, scene, err
}

// read is Read refusing a stack that needs more than budget bytes
// (msi.CheckFits; 0: no limit), known from the first band's header. It
// also returns which bands have 16-bit samples.
func read(dir string, budget int64) (*msi.Cube, string, []bool, error) {
	files, err := findBands(dir)
	if err != nil {
		return nil, "", nil, err
	}
	c, deep, err := decodeBands(dir, files, budget)
	if err != nil {
		return nil, "", nil, err
	}
	if len(files) == caveBands && files[0].number == 1 {
		c.Wavelengths = make([]float64, caveBands)
		for b := range c.Wavelengths {
			c.Wavelengths[b] = float64(400 + 10*b)
		}
	}
	return c, files[0].scene, deep, nil
}

// parseBandName splits a file name of the form <scene>_NN.png (extension in
// any case) into scene and NN.
func parseBandName(name string) (scene, digits string, ok bool) {
	const ext = ".png"
	if len(name) <= len(ext) || !strings.EqualFold(name[len(name)-len(ext):], ext) {
		return "", "", false
	}
	stem := name[:len(name)-len(ext)]
	i := strings.LastIndexByte(stem, '_')
	if i <= 0 || i == len(stem)-1 {
		return "", "", false
	}
	for _, r := range stem[i+1:] {
		if r < '0' || r > '9' {
			return "", "", false
		}
	}
	return stem[:i], stem[i+1:], true
}

// listBands returns the band PNGs directly inside dir (unsorted, unchecked)
// and the names of its visible subfolders.
func listBands(dir string) (bands []bandFile, subdirs []string, empty bool, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, false, err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(path); err == nil && fi.IsDir() {
				isDir = true
			}
		}
		if isDir {
			subdirs = append(subdirs, name)
			continue
		}
		if scene, digits, ok := parseBandName(name); ok {
			bands = append(bands, bandFile{path: path, name: name, scene: scene, digits: digits})
		}
	}
	return bands, subdirs, len(entries) == 0, nil
}

// findBands lists and checks the band files of the stack at dir: one scene
// name, numbers consecutive from 0 or 1. The result is sorted by number.
func findBands(dir string) ([]bandFile, error) {
	if fi, err := os.Stat(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such folder", dir)
		}
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a folder (a band stack is a folder of <scene>_NN.png files)", dir)
	}
	bands, subdirs, empty, err := listBands(dir)
	if err != nil {
		return nil, err
	}
	if empty {
		return nil, fmt.Errorf("%s: empty folder, want band files named <scene>_NN.png", dir)
	}
	if len(bands) == 0 {
		var nested []string
		for _, sub := range subdirs {
			sb, _, _, err := listBands(filepath.Join(dir, sub))
			if err == nil && len(sb) > 0 {
				nested = append(nested, sub)
				bands = sb
			}
		}
		switch len(nested) {
		case 0:
			return nil, fmt.Errorf("%s: no band files named <scene>_NN.png", dir)
		case 1:
			dir = filepath.Join(dir, nested[0])
		default:
			return nil, fmt.Errorf("%s: no band files of its own and %d subfolders with band files (%s): give one of them",
				dir, len(nested), strings.Join(nested, ", "))
		}
	}
	for i := range bands {
		if bands[i].scene != bands[0].scene {
			return nil, fmt.Errorf("%s: band files of different scenes: %s and %s", dir, bands[0].name, bands[i].name)
		}
		n, err := strconv.Atoi(bands[i].digits)
		if err != nil || n > 1<<20 {
			return nil, fmt.Errorf("%s: band number %s is too large", bands[i].path, bands[i].digits)
		}
		bands[i].number = n
	}
	slices.SortFunc(bands, func(a, b bandFile) int {
		if a.number != b.number {
			return a.number - b.number
		}
		return strings.Compare(a.name, b.name)
	})
	want := min(bands[0].number, 1)
	for i, b := range bands {
		if i > 0 && b.number == bands[i-1].number {
			return nil, fmt.Errorf("%s: duplicate band %d: %s and %s", dir, b.number, bands[i-1].name, b.name)
		}
		if b.number != want {
			return nil, fmt.Errorf("%s: band %0*d missing (no %s_%0*d.png)", dir, len(b.digits), want, b.scene, len(b.digits), want)
		}
		want++
	}
	return bands, nil
}

// pngHeader is the part of a PNG's IHDR chunk that the reader checks
// before decoding.
type pngHeader struct {
	width, height int
	bitDepth      int
	colorType     int
}

// PNG colour types (PNG specification, table 11.1).
const (
	pngGray      = 0
	pngRGB       = 2
	pngGrayAlpha = 4
	pngRGBA      = 6
)

// maxDeflateRatio bounds how many bytes deflate can expand one compressed
// byte into (a 258-byte match coded in 2 bits), so a PNG that declares more
// pixel data than 1032 times its own size cannot be valid.
const maxDeflateRatio = 1032

// readPNGHeader parses the signature and IHDR chunk at the start of data and
// rejects what the reader does not support or what data cannot hold.
func readPNGHeader(data []byte) (pngHeader, error) {
	const signature = "\x89PNG\r\n\x1a\n"
	if len(data) < 8 || string(data[:8]) != signature {
		return pngHeader{}, errors.New("not a PNG file")
	}
	if len(data) < 8+8+13 || string(data[12:16]) != "IHDR" || binary.BigEndian.Uint32(data[8:12]) != 13 {
		return pngHeader{}, errors.New("truncated or corrupt PNG: no IHDR chunk")
	}
	w := binary.BigEndian.Uint32(data[16:20])
	h := binary.BigEndian.Uint32(data[20:24])
	hd := pngHeader{width: int(w), height: int(h), bitDepth: int(data[24]), colorType: int(data[25])}
	if w == 0 || h == 0 || w > 1<<31-1 || h > 1<<31-1 {
		return pngHeader{}, fmt.Errorf("corrupt PNG: bad size %d×%d", w, h)
	}
	if hd.colorType == pngGray && hd.bitDepth < 8 {
		return pngHeader{}, fmt.Errorf("unsupported bit depth: %d-bit grayscale (want 8 or 16 bits)", hd.bitDepth)
	}
	// Unknown colour types count as one channel here; the decoder rejects them.
	channels := 1.0
	switch hd.colorType {
	case pngRGB:
		channels = 3
	case pngGrayAlpha:
		channels = 2
	case pngRGBA:
		channels = 4
	}
	// At least one filter byte per row plus the pixel bits, interlaced or
	// not: a lower bound on the inflated size, so the test never rejects a
	// valid file.
	raw := float64(h) + float64(h)*float64(w)*channels*float64(hd.bitDepth)/8
	if raw > maxDeflateRatio*float64(len(data)) {
		return pngHeader{}, fmt.Errorf("truncated or corrupt PNG: %d bytes cannot hold the %d×%d image it declares", len(data), w, h)
	}
	return hd, nil
}

// stackLevels reads the bands of a stack on tdsc's [0, 255] scale; a
// colour band is an error.
var stackLevels = GrayOptions{White: 255}

// decodeBands decodes the band files into a new cube, up to GOMAXPROCS at a
// time. The first band is decoded before the cube is allocated, so a
// corrupt header cannot make the reader allocate for a size the file does
// not hold; its size is the one every other band must have. A stack in
// folder dir that needs more than budget bytes (msi.CheckFits; 0: no
// limit) is refused before any band is decoded.
func decodeBands(dir string, files []bandFile, budget int64) (*msi.Cube, []bool, error) {
	var tooLarge error
	img, err := decodePNG(files[0].path, func(hd pngHeader) error {
		tooLarge = msi.CheckFits(dir, hd.height, hd.width, len(files), 0, budget)
		return tooLarge
	})
	if tooLarge != nil {
		return nil, nil, tooLarge // about the stack, not the file
	}
	if err != nil {
		return nil, nil, err
	}
	size := img.Bounds().Size()
	c := msi.NewCube(size.Y, size.X, len(files))
	deep := make([]bool, len(files))
	deep[0] = sixteenBit(img)
	if err := grayValues(img, c.Band(0), stackLevels); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", files[0].path, err)
	}
	// Every failing band records its error, and the lowest-numbered one is
	// reported, so the message does not depend on which goroutine ran first.
	errs := make([]error, len(files))
	_ = parallel.For(context.Background(), len(files)-1, 0, func(_, i int) error {
		b := i + 1
		img, err := decodePNG(files[b].path, func(hd pngHeader) error {
			if hd.width != size.X || hd.height != size.Y {
				return fmt.Errorf("band is %d×%d pixels (width×height), but %s is %d×%d",
					hd.width, hd.height, files[0].name, size.X, size.Y)
			}
			return nil
		})
		if err == nil {
			deep[b] = sixteenBit(img)
			if err = grayValues(img, c.Band(b), stackLevels); err != nil {
				err = fmt.Errorf("%s: %v", files[b].path, err)
			}
		}
		errs[b] = err
		return err
	})
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return c, deep, nil
}

// sixteenBit reports whether img has 16-bit samples.
func sixteenBit(img image.Image) bool {
	switch img.(type) {
	case *image.Gray16, *image.NRGBA64, *image.RGBA64:
		return true
	}
	return false
}

// decodePNG reads and decodes the PNG file at path. check, if not nil,
// vets the header before the pixel data is decoded.
func decodePNG(path string, check func(pngHeader) error) (image.Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	hd, err := readPNGHeader(data)
	if err == nil && check != nil {
		err = check(hd)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot decode PNG: %v", path, err)
	}
	return img, nil
}

// ErrColour is wrapped by the error of reading a colour PNG, one whose R,
// G and B differ in some pixel, as a grayscale image without luminance
// conversion.
var ErrColour = errors.New("colour image, not grayscale")

// Luma weights of ITU-R BT.601, applied to the (gamma-encoded) R, G and B
// samples when a colour image is converted to luminance.
const (
	lumaR = 0.299
	lumaG = 0.587
	lumaB = 0.114
)

// GrayOptions say how ReadGrayPNG turns samples into gray levels.
type GrayOptions struct {
	// White is the level of the largest sample: 255 for tdsc's working
	// scale, 1 for [0, 1].
	White float64
	// Luminance converts a colour image to 0.299·R + 0.587·G + 0.114·B
	// (BT.601 luma of the stored samples) instead of refusing it.
	Luminance bool
}

// ReadGrayPNG reads the PNG file at path as one grayscale image: height ×
// width levels, row-major, on [0, opt.White]. Every sample is taken as 16
// bits (an 8-bit v as 257·v) and scaled by White/65535, so 8-bit v becomes
// exactly v at White = 255. Grayscale PNGs (8 or 16 bits, with or without
// alpha) are read as they are, and so are colour and paletted PNGs whose R,
// G and B are equal in every pixel; any other colour PNG is an error
// wrapping ErrColour that names the first coloured pixel, unless
// opt.Luminance is set. Alpha is ignored. The header is checked before the
// pixels are decoded (a file too small for the size it declares is
// refused). Errors name the file.
func ReadGrayPNG(path string, opt GrayOptions) (pix []float64, height, width int, err error) {
	img, err := decodePNG(path, nil)
	if err != nil {
		return nil, 0, 0, err
	}
	size := img.Bounds().Size()
	pix = make([]float64, size.X*size.Y)
	if err := grayValues(img, pix, opt); err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return pix, size.Y, size.X, nil
}

// grayValues sets dst (row-major) to the gray levels of img (see
// ReadGrayPNG), reading the pixel buffers directly.
func grayValues(img image.Image, dst []float64, opt GrayOptions) error {
	r := img.Bounds()
	w, h := r.Dx(), r.Dy()
	switch m := img.(type) {
	case *image.Gray:
		for y := range h {
			row := m.Pix[m.PixOffset(r.Min.X, r.Min.Y+y):][:w]
			out := dst[y*w : (y+1)*w]
			for x, v := range row {
				out[x] = float64(uint16(v)*257) * opt.White / 65535
			}
		}
	case *image.Gray16:
		for y := range h {
			row := m.Pix[m.PixOffset(r.Min.X, r.Min.Y+y):][:2*w]
			out := dst[y*w : (y+1)*w]
			for x := range out {
				out[x] = float64(uint16(row[2*x])<<8|uint16(row[2*x+1])) * opt.White / 65535
			}
		}
	case *image.NRGBA:
		return rgbValues(m.Pix, m.Stride, m.PixOffset(r.Min.X, r.Min.Y), w, h, 1, dst, opt)
	case *image.RGBA:
		return rgbValues(m.Pix, m.Stride, m.PixOffset(r.Min.X, r.Min.Y), w, h, 1, dst, opt)
	case *image.NRGBA64:
		return rgbValues(m.Pix, m.Stride, m.PixOffset(r.Min.X, r.Min.Y), w, h, 2, dst, opt)
	case *image.RGBA64:
		return rgbValues(m.Pix, m.Stride, m.PixOffset(r.Min.X, r.Min.Y), w, h, 2, dst, opt)
	case *image.Paletted:
		return palettedValues(m, dst, opt)
	default:
		return fmt.Errorf("unsupported colour model %T", img)
	}
	return nil
}

// level returns the gray level of a pixel of 16-bit samples r, g, b (see
// ReadGrayPNG). A colour pixel's error gives the samples on the scale
// [0, of] of the file (255 for 8-bit samples, 65535 for 16-bit ones).
func level(r, g, b uint16, x, y, of int, opt GrayOptions) (float64, error) {
	switch {
	case r == g && g == b:
		return float64(r) * opt.White / 65535, nil
	case opt.Luminance:
		return (lumaR*float64(r) + lumaG*float64(g) + lumaB*float64(b)) * opt.White / 65535, nil
	}
	in := func(v uint16) int { return int(v) * of / 65535 }
	return 0, fmt.Errorf("%w: pixel (x=%d, y=%d) has R=%d G=%d B=%d (of %d)", ErrColour, x, y, in(r), in(g), in(b), of)
}

// rgbValues reads an RGBA pixel buffer whose samples are sampleBytes wide
// (1 or 2, big-endian), starting at off, with the given row stride.
func rgbValues(pix []byte, stride, off, w, h, sampleBytes int, dst []float64, opt GrayOptions) error {
	px := 4 * sampleBytes
	sample := func(p []byte, c int) uint16 {
		if sampleBytes == 1 {
			return uint16(p[c]) * 257
		}
		return uint16(p[2*c])<<8 | uint16(p[2*c+1])
	}
	for y := range h {
		row := pix[off+y*stride:][:w*px]
		out := dst[y*w : (y+1)*w]
		for x := range out {
			p := row[x*px : (x+1)*px]
			v, err := level(sample(p, 0), sample(p, 1), sample(p, 2), x, y, 1<<(8*sampleBytes)-1, opt)
			if err != nil {
				return err
			}
			out[x] = v
		}
	}
	return nil
}

// palettedValues reads a paletted image through the levels of its palette.
func palettedValues(m *image.Paletted, dst []float64, opt GrayOptions) error {
	// 8-bit palette entries, un-premultiplied at 8 bits as the PNG stores
	// them (a 16-bit conversion rounds transparent entries differently).
	var rgb [256]color.NRGBA
	for i, c := range m.Palette[:min(len(m.Palette), 256)] {
		rgb[i] = color.NRGBAModel.Convert(c).(color.NRGBA)
	}
	r := m.Bounds()
	w, h := r.Dx(), r.Dy()
	for y := range h {
		row := m.Pix[m.PixOffset(r.Min.X, r.Min.Y+y):][:w]
		out := dst[y*w : (y+1)*w]
		for x, i := range row {
			if int(i) >= len(m.Palette) {
				return fmt.Errorf("pixel (x=%d, y=%d): palette index %d out of range (%d colours)", x, y, i, len(m.Palette))
			}
			c := rgb[i]
			v, err := level(uint16(c.R)*257, uint16(c.G)*257, uint16(c.B)*257, x, y, 255, opt)
			if err != nil {
				return err
			}
			out[x] = v
		}
	}
	return nil
}
