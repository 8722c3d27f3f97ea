package noiselevel

import (
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/stages/sparsenoise"
)

// streamed gives the lines of noisy to a Stream keeping at most limit
// windows, in windows of the given numbers of lines (cycled), with the
// lines' part of mask, and returns it.
func streamed(noisy *msi.Cube, mask []uint8, limit int, lines ...int) *Stream {
	s := newStream(noisy.Height, noisy.Width, noisy.Bands, limit)
	for y0, k := 0, 0; y0 < noisy.Height; k++ {
		n := min(lines[k%len(lines)], noisy.Height-y0)
		c := noisy.Crop(y0, 0, 0, n, noisy.Width, noisy.Bands)
		var m []uint8
		if mask != nil {
			m = sparsenoise.CropMask(mask, noisy, y0, n)
		}
		s.Add(c, m)
		y0 += n
	}
	return s
}

// bandMeans returns the mean of every band of c over its voxels with data
// and not marked in mask, as brute force.
func bandMeans(c *msi.Cube, mask []uint8) []float64 {
	means := make([]float64, c.Bands)
	n := c.Height * c.Width
	for b := range c.Bands {
		count := 0
		for i, v := range c.Band(b) {
			if !math.IsNaN(v) && mask[b*n+i] == 0 {
				means[b] += v
				count++
			}
		}
		means[b] /= float64(count)
	}
	return means
}

// TestStreamEqualsEstimate: a random Poisson-Gaussian cube with missing
// voxels and marked impulses, whose height is no multiple of the windows'
// side, given to a Stream in windows of lines of sizes that are not
// either (so rows of 4×4 windows straddle them): with every window kept,
// the report is Estimate's on the whole cube bit for bit, and the band
// means are those of the voxels with data and not marked.
func TestStreamEqualsEstimate(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 3030))
	const h, w, bands = 103, 90, 5
	fns := []Function{{A: 2, B: 16}, {A: 1, B: 30}, {A: 3, B: 4}, {A: 2.5, B: 10}, {A: 0.5, B: 50}}
	noisy := poissonGaussian(rng, scene(rng, h, w, bands, 5, 240), fns)
	mask := make([]uint8, len(noisy.Data))
	for i := range noisy.Data {
		switch r := rng.Float64(); {
		case r < 0.01:
			noisy.Data[i] = math.NaN()
		case r < 0.03:
			noisy.Data[i], mask[i] = 255, 1
		}
	}
	whole := Estimate(noisy, Options{Mask: mask})
	for _, lines := range [][]int{{h}, {16}, {7, 5, 13}, {1, 2, 3}} {
		s := streamed(noisy, mask, StreamWindows, lines...)
		if s.Stride() != 1 {
			t.Fatalf("stride %d on a small cube", s.Stride())
		}
		if got := s.Report(); !reflect.DeepEqual(got, whole) {
			t.Errorf("windows of %v lines: the streamed report differs from Estimate's:\n%s\nwant\n%s", lines, got.Summary(), whole.Summary())
		}
		if got, want := s.Means(), bandMeans(noisy, mask); !reflect.DeepEqual(got, want) {
			t.Errorf("windows of %v lines: means %v, want %v", lines, got, want)
		}
	}
}

// TestStreamSubsample: a cube with more windows than the Stream keeps is
// fitted from every s-th window. The fit is a subsample's: its a and b
// are within three of their standard errors (the streamed fit's, the
// larger; a parameter held at 0 by its constraint has none, and takes the
// other fit's) of the whole cube's in every band, and the decision is the
// same, on Poisson-Gaussian and on Gaussian noise.
func TestStreamSubsample(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 3131))
	const h, w, bands = 192, 160, 4
	clean := scene(rng, h, w, bands, 5, 240)
	for _, fn := range []Function{{A: 2, B: 16}, {B: 100}} {
		noisy := poissonGaussian(rng, clean, slices.Repeat([]Function{fn}, bands))
		whole := Estimate(noisy, Options{})
		all := (h / window) * (w / window) * (2*bands - 2)
		s := streamed(noisy, nil, all/3, 24)
		if s.Stride() != 3 {
			t.Fatalf("stride %d, want 3", s.Stride())
		}
		got := s.Report()
		for b, band := range got.Bands {
			want := whole.Bands[b]
			seA, seB := max(band.SEA, want.SEA), max(band.SEB, want.SEB)
			if math.Abs(band.A-want.A) > 3*seA || math.Abs(band.B-want.B) > 3*seB {
				t.Errorf("%+v band %d: a = %.3f, b = %.2f streamed, %.3f and %.2f whole (standard errors %.3f, %.2f)",
					fn, b, band.A, band.B, want.A, want.B, seA, seB)
			}
			if band.Windows >= want.Windows*2/3 {
				t.Errorf("%+v band %d: %d windows kept of %d: not a subsample", fn, b, band.Windows, want.Windows)
			}
		}
		if got.SignalDependent != whole.SignalDependent || got.SignalDependent != (fn.A > 0) {
			t.Errorf("%+v: signal-dependent %v streamed, %v whole", fn, got.SignalDependent, whole.SignalDependent)
		}
	}
}

// TestSubsampleEveryColumn: the windows a stride keeps (kept, through
// windows) are every stride-th of every column of windows and of every
// row, within one, however many windows a row holds, and keptWindows
// counts them as brute force does. Each window's mean is its column (or
// row) of windows, so the means kept say which were. Every stride-th in
// raster order keeps only some columns when a row's count is a multiple
// of the stride.
func TestSubsampleEveryColumn(t *testing.T) {
	for _, c := range []struct{ rows, cols, firstRow, stride int }{
		{12, 16, 0, 2}, {12, 16, 5, 2}, {11, 18, 3, 3}, {9, 20, 1, 4}, {7, 10, 2, 3}, {5, 3, 1, 7},
	} {
		h, w := c.rows*window, c.cols*window
		byCol, byRow := make([]float64, h*w), make([]float64, h*w)
		for y := range h {
			for x := range w {
				byCol[y*w+x], byRow[y*w+x] = float64(x/window), float64(y/window)
			}
		}
		left := make([]bool, h*w)
		perCol, perRow := make([]int, c.cols), make([]int, c.rows)
		for _, win := range windows(nil, byCol, nil, left, h, w, c.firstRow, c.stride) {
			perCol[int(win.mean)]++
		}
		for _, win := range windows(nil, byRow, nil, left, h, w, c.firstRow, c.stride) {
			perRow[int(win.mean)]++
		}
		want := 0
		for r := range c.rows {
			for col := range c.cols {
				if (c.firstRow+r+col)%c.stride == 0 {
					want++
				}
			}
		}
		if got := keptWindows(c.rows, c.cols, c.firstRow, c.stride); got != want {
			t.Errorf("%+v: keptWindows %d, brute force %d", c, got, want)
		}
		within := func(counts []int, of int) bool {
			lo, hi := of/c.stride, (of+c.stride-1)/c.stride
			for _, n := range counts {
				if n < lo || n > hi {
					return false
				}
			}
			return true
		}
		if !within(perCol, c.rows) {
			t.Errorf("%+v: windows kept per column %v, want one in every %d of %d", c, perCol, c.stride, c.rows)
		}
		if !within(perRow, c.cols) {
			t.Errorf("%+v: windows kept per row %v, want one in every %d of %d", c, perRow, c.stride, c.cols)
		}
	}
}

// TestStreamClipped: clipping at the top of the range, where the noise is
// largest (the cube of TestEstimateClippedTop), is found in every window
// of lines as in the whole band: the stuck voxels left out and the
// clipping level kept from the windows, the streamed report is Estimate's
// bit for bit (without the clipping level, the levels next to it would be
// fitted and a would move).
func TestStreamClipped(t *testing.T) {
	const bands = 4
	noisy := clippedRamp(rand.New(rand.NewPCG(32, 3232)), 128, 256, bands)
	s := streamed(noisy, nil, StreamWindows, 32)
	for b := range bands {
		if len(s.clips[b]) != 1 || s.clips[b][0] != 150 {
			t.Errorf("band %d: clipping levels %v, want [150]", b, s.clips[b])
		}
	}
	if got, want := s.Report(), Estimate(noisy, Options{}); !reflect.DeepEqual(got, want) {
		t.Errorf("the streamed report differs from Estimate's:\n%s\nwant\n%s", got.Summary(), want.Summary())
	}
}

// TestStreamDeterministic: the streamed report is the same on one core
// and on several (bands are measured and fitted in parallel, each on its
// own).
func TestStreamDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 3333))
	noisy := poissonGaussian(rng, scene(rng, 90, 70, 7, 0, 255), slices.Repeat([]Function{{A: 1.5, B: 9}}, 7))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one := streamed(noisy, nil, StreamWindows, 11).Report()
	runtime.GOMAXPROCS(4)
	if many := streamed(noisy, nil, StreamWindows, 11).Report(); !reflect.DeepEqual(one, many) {
		t.Error("the streamed report on 4 cores differs from that on 1")
	}
}
