package cmd

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"tdsc/internal/formats"
	"tdsc/internal/formats/gdal"
	"tdsc/internal/msi"
	"tdsc/internal/testenv"
)

// TestMain lets the test binary act as the real tdsc command inside the
// scripts of testdata/script: `exec tdsc ...` runs Main in a child process,
// with real stdout, stderr and exit codes.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tdsc": func() { os.Exit(Main()) },
	})
}

// TestScripts runs the command-line scripts in testdata/script. Inside a
// script, $DATA is the shared data folder, $CROP the small balloons crop
// committed under testdata/ and $ARRAYS the .npy and .mat fixtures beside
// it. Scripts that need the shared data start with
// `[!data] skip`; under CI the data must be there (testenv.DataDir).
// Scripts of the GDAL build (build tag gdal) start with `[!gdal] skip`.
// Commands make the binary inputs that a text archive cannot hold:
// pngband (see cmdPNGBand), unhex (see cmdUnhex), storecube (see
// cmdStoreCube), cropcube (cmdCropCube), detectorstripes
// (cmdDetectorStripes), sparse (cmdSparse), nodatacube (cmdNoDataCube),
// maskcube (cmdMaskCube), setmissing (cmdSetMissing), fieldscube
// (cmdFieldsCube), truncate (cmdTruncate) and repeatbands
// (cmdRepeatBands); three check outputs:
// samemissing (cmdSameMissing), agree (cmdAgree) and pngpixel
// (cmdPNGPixel).
func TestScripts(t *testing.T) {
	data := os.Getenv("TDSC_DATA")
	if data != "" || os.Getenv("CI") == "true" {
		data = testenv.DataDir(t)
	}
	crop, err := filepath.Abs(filepath.Join("..", "testdata", "balloons_crop128"))
	if err != nil {
		t.Fatal(err)
	}
	arrays, err := filepath.Abs(filepath.Join("..", "testdata", "arrays"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("DATA", data)
			env.Setenv("CROP", crop)
			env.Setenv("ARRAYS", arrays)
			return nil
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"pngband":         cmdPNGBand,
			"unhex":           cmdUnhex,
			"storecube":       cmdStoreCube,
			"cropcube":        cmdCropCube,
			"detectorstripes": cmdDetectorStripes,
			"sparse":          cmdSparse,
			"nodatacube":      cmdNoDataCube,
			"maskcube":        cmdMaskCube,
			"samemissing":     cmdSameMissing,
			"setmissing":      cmdSetMissing,
			"fieldscube":      cmdFieldsCube,
			"agree":           cmdAgree,
			"pngpixel":        cmdPNGPixel,
			"truncate":        cmdTruncate,
			"repeatbands":     cmdRepeatBands,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "data":
				return data != "", nil
			case "gdal":
				return gdal.Available, nil
			}
			return false, nil
		},
	})
}

// cmdPNGBand writes one band PNG: `pngband FILE KIND WIDTH HEIGHT`. KIND is
// gray16 or gray8 (valid bands of varied values), gray1 (a 1-bit grayscale
// PNG, a depth the reader does not support), colour (opaque 8-bit RGBA
// whose pixel (x=1, y=0) has G ≠ R) or truncated (a valid 16-bit band of
// random values cut to half its length, so its pixel data ends early).
func cmdPNGBand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: pngband FILE gray16|gray8|gray1|colour|truncated WIDTH HEIGHT")
	}
	w, errW := strconv.Atoi(args[2])
	h, errH := strconv.Atoi(args[3])
	if errW != nil || errH != nil || w < 2 || h < 1 {
		ts.Fatalf("pngband: bad size %s×%s", args[2], args[3])
	}
	rect := image.Rect(0, 0, w, h)
	var img image.Image
	data := []byte(nil)
	switch args[1] {
	case "gray16":
		g := image.NewGray16(rect)
		for i := range len(g.Pix) / 2 {
			binary.BigEndian.PutUint16(g.Pix[2*i:], uint16(i*997))
		}
		img = g
	case "gray8":
		g := image.NewGray(rect)
		for i := range g.Pix {
			g.Pix[i] = uint8(i * 7)
		}
		img = g
	case "colour":
		c := image.NewNRGBA(rect)
		for i := range c.Pix {
			c.Pix[i] = 200
		}
		c.Pix[4+1] = 9 // G of pixel (x=1, y=0)
		img = c
	case "truncated":
		g := image.NewGray16(rect)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range g.Pix {
			g.Pix[i] = uint8(rng.Uint32())
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, g); err != nil {
			ts.Fatalf("pngband: %v", err)
		}
		data = buf.Bytes()[:buf.Len()/2]
	case "gray1":
		data = gray1PNG(w, h)
	default:
		ts.Fatalf("pngband: unknown kind %q", args[1])
	}
	if img != nil {
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			ts.Fatalf("pngband: %v", err)
		}
		data = buf.Bytes()
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
}

// gray1PNG returns a valid 1-bit grayscale PNG of w×h pixels, all black:
// image/png never writes that depth, so the chunks are built here.
func gray1PNG(w, h int) []byte {
	var raw bytes.Buffer
	zw := zlib.NewWriter(&raw)
	row := make([]byte, 1+(w+7)/8) // filter type 0, then the packed bits
	for range h {
		zw.Write(row)
	}
	zw.Close()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, body []byte) {
		binary.Write(&out, binary.BigEndian, uint32(len(body)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(body)
		out.WriteString(typ)
		out.Write(body)
		binary.Write(&out, binary.BigEndian, crc.Sum32())
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 1, 0 // bit depth 1, colour type 0 (grayscale)
	chunk("IHDR", ihdr)
	chunk("IDAT", raw.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// cmdUnhex decodes the hexadecimal text of a file (white space ignored)
// into another: `unhex SRC DST`. Scripts use it for binary ENVI data.
func cmdUnhex(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: unhex SRC DST")
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(ts.ReadFile(args[0])), ""))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}

// cmdStoreCube stores a cube in other units: `storecube SRC DST SCALE
// [AXES [DTYPE]]` reads SRC and writes it to DST as values divided by
// SCALE (a given scale: see msi.WriteOptions.ScaleGiven), of element type
// DTYPE (default float32) with its dimensions in the order AXES (default
// HWB), so that `storecube $CROP c.npy 255` makes the crop a reflectance
// array in [0, 1], which no tdsc command writes from a band stack.
func cmdStoreCube(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 5 {
		ts.Fatalf("usage: storecube SRC DST SCALE [AXES [DTYPE]]")
	}
	scale, err := strconv.ParseFloat(args[2], 64)
	ts.Check(err)
	c, err := formats.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	opts := msi.WriteOptions{Scale: scale, ScaleGiven: true}
	if len(args) >= 4 {
		opts.Axes = args[3]
	}
	if len(args) == 5 {
		opts.DType = args[4]
	}
	_, err = formats.Write(ts.MkAbs(args[1]), c, opts)
	ts.Check(err)
}

// scriptInts reads a script command's arguments as whole numbers of at
// least lo, failing the script with the command's name and the first bad
// argument.
func scriptInts(ts *testscript.TestScript, command string, args []string, lo int) []int {
	n := make([]int, len(args))
	for i, a := range args {
		v, err := strconv.Atoi(a)
		if err != nil || v < lo {
			ts.Fatalf("%s: bad number %q (want a whole number ≥ %d)", command, a, lo)
		}
		n[i] = v
	}
	return n
}

// cmdTruncate writes the first N bytes of a file: `truncate SRC DST N`,
// a file cut short as by an interrupted copy.
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: truncate SRC DST N")
	}
	n := scriptInts(ts, "truncate", args[2:], 0)[0]
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	if n < 0 || n > len(data) {
		ts.Fatalf("truncate: %d bytes of a %d-byte file", n, len(data))
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), data[:n], 0o644))
}

// cmdRepeatBands writes a cube of many bands: `repeatbands SRC DST N`
// writes every band of SRC N times in a row (a cube of N·B bands whose
// signal spans SRC's spectral subspace, as a finer resampling does).
func cmdRepeatBands(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: repeatbands SRC DST N")
	}
	n := scriptInts(ts, "repeatbands", args[2:], 1)[0]
	c, err := formats.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	out := msi.NewCube(c.Height, c.Width, n*c.Bands)
	for b := range out.Bands {
		copy(out.Band(b), c.Band(b/n))
	}
	_, err = formats.Write(ts.MkAbs(args[1]), out, msi.WriteOptions{})
	ts.Check(err)
}

// cmdCropCube writes a window of a cube's lines and samples, every band:
// `cropcube SRC DST Y0 X0 HEIGHT WIDTH`. Scripts whose runs cost in
// proportion to the voxels (2dsc codes every patch) use a narrow window of
// the crop, which keeps the crop's lines, and so its strips, as they are.
func cmdCropCube(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 6 {
		ts.Fatalf("usage: cropcube SRC DST Y0 X0 HEIGHT WIDTH")
	}
	n := scriptInts(ts, "cropcube", args[2:], 0)
	c, err := formats.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	if n[0]+n[2] > c.Height || n[1]+n[3] > c.Width || n[2] < 1 || n[3] < 1 {
		ts.Fatalf("cropcube: window %d×%d at (%d, %d) is not inside the %s cube", n[2], n[3], n[0], n[1], c.Size())
	}
	_, err = formats.Write(ts.MkAbs(args[1]), c.Crop(n[0], n[1], 0, n[2], n[3], c.Bands), msi.WriteOptions{})
	ts.Check(err)
}

// cmdDetectorStripes adds a push-broom sensor's periodic striping to a
// cube: `detectorstripes SRC DST PERIOD AMPLITUDE` writes SRC with every
// column x offset by o[x mod PERIOD] in every band, the offsets of the
// PERIOD detectors drawn uniformly from ±AMPLITUDE (seeded), as a float32
// ENVI cube (or DST's format).
func cmdDetectorStripes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: detectorstripes SRC DST PERIOD AMPLITUDE")
	}
	period := scriptInts(ts, "detectorstripes", args[2:3], 1)[0]
	amplitude, err := strconv.ParseFloat(args[3], 64)
	ts.Check(err)
	c, err := formats.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	rng := rand.New(rand.NewPCG(29, 5))
	offsets := make([]float64, period)
	for i := range offsets {
		offsets[i] = amplitude * (2*rng.Float64() - 1)
	}
	for b := range c.Bands {
		band := c.Band(b)
		for i := range band {
			band[i] += offsets[(i%c.Width)%period]
		}
	}
	_, err = formats.Write(ts.MkAbs(args[1]), c, msi.WriteOptions{})
	ts.Check(err)
}

// cmdNoDataCube writes an int16 ENVI cube with no-data voxels:
// `nodatacube FILE.hdr HEIGHT WIDTH BANDS`, a smooth scene of reflectance
// × 10000 (2000 to about 5000) with seeded Gaussian noise of σ 600, its
// voxels in lines H/3 .. 2H/3 and columns 0 .. W/4 (every band) set to
// the header's data ignore value, -9999: what a sensor's edge of swath or
// a masked cloud looks like.
func cmdNoDataCube(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: nodatacube FILE.hdr HEIGHT WIDTH BANDS")
	}
	dims := scriptInts(ts, "nodatacube", args[1:], 1)
	h, w, bands := dims[0], dims[1], dims[2]
	rng := rand.New(rand.NewPCG(22, 4))
	data := make([]byte, 0, 2*h*w*bands)
	for b := range bands {
		for y := range h {
			for x := range w {
				v := 2000 + 1500*float64(y+x)/float64(h+w) + 300*float64(b)/float64(bands) + 600*rng.NormFloat64()
				if y >= h/3 && y < 2*h/3 && x < w/4 {
					v = -9999
				}
				data = binary.LittleEndian.AppendUint16(data, uint16(int16(math.Round(v))))
			}
		}
	}
	hdr := ts.MkAbs(args[0])
	stem := strings.TrimSuffix(hdr, filepath.Ext(hdr))
	ts.Check(os.WriteFile(stem+".img", data, 0o644))
	ts.Check(os.WriteFile(hdr, fmt.Appendf(nil, "ENVI\nsamples = %d\nlines = %d\nbands = %d\nheader offset = 0\nfile type = ENVI Standard\n"+
		"data type = 2\ninterleave = bsq\nbyte order = 0\ndata ignore value = -9999\nreflectance scale factor = 10000\n", w, h, bands), 0o644))
}

// cmdMaskCube writes a mask: `maskcube FILE HEIGHT WIDTH Y0 Y1 X0 X1
// [outside]`, a one-band cube (in FILE's format) that is 1 in lines Y0 ..
// Y1−1 and columns X0 .. X1−1 and 0 elsewhere, or with "outside" the
// other way round.
func cmdMaskCube(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 7 && (len(args) != 8 || args[7] != "outside") {
		ts.Fatalf("usage: maskcube FILE HEIGHT WIDTH Y0 Y1 X0 X1 [outside]")
	}
	n := scriptInts(ts, "maskcube", args[1:7], 0)
	inside, outside := 1.0, 0.0
	if len(args) == 8 {
		inside, outside = 0, 1
	}
	c := msi.NewCube(n[0], n[1], 1)
	for y := range n[0] {
		for x := range n[1] {
			v := outside
			if y >= n[2] && y < n[3] && x >= n[4] && x < n[5] {
				v = inside
			}
			c.Set(y, x, 0, v)
		}
	}
	_, err := formats.Write(ts.MkAbs(args[0]), c, msi.WriteOptions{})
	ts.Check(err)
}

// cmdSetMissing writes a copy of a cube with a box of voxels missing:
// `setmissing SRC DST Y0 Y1 X0 X1 B0 B1` sets lines Y0 .. Y1−1, columns
// X0 .. X1−1 of bands B0 .. B1−1 (0-based) to NaN and writes DST (a float
// format) in SRC's units, as a denoiser that lost part of its output would.
func cmdSetMissing(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 8 {
		ts.Fatalf("usage: setmissing SRC DST Y0 Y1 X0 X1 B0 B1")
	}
	n := scriptInts(ts, "setmissing", args[2:], 0)
	c, err := formats.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	for b := n[4]; b < n[5]; b++ {
		for y := n[0]; y < n[1]; y++ {
			for x := n[2]; x < n[3]; x++ {
				c.Set(y, x, b, math.NaN())
			}
		}
	}
	_, err = formats.Write(ts.MkAbs(args[1]), c, msi.WriteOptions{}.Like(c.Stored, false))
	ts.Check(err)
}

// cmdFieldsCube writes a piecewise-constant cube without noise, as the
// Indian Pines phantom is: `fieldscube FILE HEIGHT WIDTH BANDS FIELDS
// [BACKGROUND]`, FIELDS seeded rectangles, each of one value per band
// (whole quarters from 10 to 250, exact in float32), painted over a
// constant background (default 100; FIELDS 0: a constant cube).
func cmdFieldsCube(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 && len(args) != 6 {
		ts.Fatalf("usage: fieldscube FILE HEIGHT WIDTH BANDS FIELDS [BACKGROUND]")
	}
	background := 100.0
	if len(args) == 6 {
		var err error
		background, err = strconv.ParseFloat(args[5], 64)
		ts.Check(err)
	}
	var n [4]int
	for i, a := range args[1:5] {
		v, err := strconv.Atoi(a)
		ts.Check(err)
		n[i] = v
	}
	h, w, bands, fields := n[0], n[1], n[2], n[3]
	rng := rand.New(rand.NewPCG(31, 6))
	c := msi.NewCube(h, w, bands)
	for i := range c.Data {
		c.Data[i] = background
	}
	for range fields {
		y0, x0 := rng.IntN(h), rng.IntN(w)
		y1, x1 := y0+1+rng.IntN(h-y0), x0+1+rng.IntN(w-x0)
		for b := range bands {
			v := 10 + float64(rng.IntN(960))/4
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					c.Set(y, x, b, v)
				}
			}
		}
	}
	_, err := formats.Write(ts.MkAbs(args[0]), c, msi.WriteOptions{})
	ts.Check(err)
}

// cmdSameMissing checks that two cubes of the same size have their
// missing voxels (no data: NaN as read, which a voxel holding the data
// ignore value is, exactly) in the same places, and at least one:
// `samemissing A B`.
func cmdSameMissing(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: samemissing A B")
	}
	a, err := formats.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	b, err := formats.Open(ts.MkAbs(args[1]))
	ts.Check(err)
	if !a.SameSize(b) || a.Missing() == 0 {
		ts.Fatalf("%s is %s with %d missing voxels, %s is %s", args[0], a.Size(), a.Missing(), args[1], b.Size())
	}
	for i, v := range a.Data {
		if math.IsNaN(v) != math.IsNaN(b.Data[i]) {
			ts.Fatalf("voxel %d: %v in %s, %v in %s", i, v, args[0], b.Data[i], args[1])
		}
	}
	ts.Logf("%d missing voxels in the same places", a.Missing())
}

// cmdAgree checks that the mean PSNRs of a file of eval --csv output agree
// within a tolerance in dB: `agree TOLERANCE FILE`.
func cmdAgree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: agree TOLERANCE FILE")
	}
	tol, err := strconv.ParseFloat(args[0], 64)
	ts.Check(err)
	rows, err := csv.NewReader(strings.NewReader(ts.ReadFile(args[1]))).ReadAll()
	ts.Check(err)
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for _, r := range rows[1:] {
		if r[1] != "mean" {
			continue
		}
		v, err := strconv.ParseFloat(r[2], 64)
		ts.Check(err)
		lo, hi = min(lo, v), max(hi, v)
		n++
	}
	if n < 2 || hi-lo > tol {
		ts.Fatalf("%d mean PSNRs from %v to %v dB: want at least 2 within %v dB", n, lo, hi, tol)
	}
	ts.Logf("%d mean PSNRs within %.2g dB (%v to %v)", n, hi-lo, lo, hi)
}

// cmdSparse makes a sparse file: `sparse FILE BYTES` creates FILE of BYTES
// bytes, all zero, without writing them (a cube larger than memory costs
// no disk).
func cmdSparse(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sparse FILE BYTES")
	}
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(f.Truncate(n))
	ts.Check(f.Close())
}

// cmdPNGPixel checks a picture: `pngpixel FILE WIDTH HEIGHT [X Y R,G,B]`
// fails unless FILE is a PNG of WIDTH×HEIGHT pixels (a number, or * for
// any) whose pixel (X, Y) has the colour R,G,B (8 bits each).
func cmdPNGPixel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 && len(args) != 6 {
		ts.Fatalf("usage: pngpixel FILE WIDTH HEIGHT [X Y R,G,B]")
	}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	img, err := png.Decode(f)
	ts.Check(err)
	b := img.Bounds()
	for i, want := range args[1:3] {
		if got := strconv.Itoa([]int{b.Dx(), b.Dy()}[i]); want != "*" && got != want {
			ts.Fatalf("%s is %d×%d pixels, want %s×%s", args[0], b.Dx(), b.Dy(), args[1], args[2])
		}
	}
	if len(args) == 6 {
		x, errX := strconv.Atoi(args[3])
		y, errY := strconv.Atoi(args[4])
		ts.Check(errors.Join(errX, errY))
		r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
		if got := fmt.Sprintf("%d,%d,%d", r>>8, g>>8, bl>>8); got != args[5] {
			ts.Fatalf("%s: pixel (%d, %d) is %s, want %s", args[0], x, y, got, args[5])
		}
	}
}
