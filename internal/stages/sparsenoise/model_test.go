package sparsenoise

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/tile/tiletest"
)

// fit is Fit of c in windows of n lines.
func fit(t *testing.T, c *msi.Cube, n int) *Report {
	t.Helper()
	m, err := Fit(context.Background(), tiletest.Lines{Cube: c}, n, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The merged histogram's median is the median of the values it counted,
// however they are split between histograms, within a small fraction of
// the sample median's own standard error (about 1.2/√n of it for the
// absolute values of normal noise): 0.25/√n.
func TestLogHistogramMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{101, 1000, 12345, 100000} {
		for _, scale := range []float64{1e-4, 1, 300} {
			v := make([]float64, n)
			for i := range v {
				v[i] = scale * math.Abs(rng.NormFloat64())
			}
			a, b := newLogHistogram(), newLogHistogram()
			cut := rng.IntN(n + 1)
			a.add(v[:cut])
			b.add(v[cut:])
			a.merge(b)
			got, want := a.median(), Median(slices.Clone(v))
			if math.Abs(got-want) > 0.25/math.Sqrt(float64(n))*want {
				t.Errorf("%d values of scale %g: median %.6g, want %.6g", n, scale, got, want)
			}
		}
	}
	// One value: within its bin.
	h := newLogHistogram()
	if h.median() != 0 {
		t.Error("an empty histogram's median is not 0")
	}
	h.add([]float64{3})
	if got := h.median(); math.Abs(got-3) > (math.Exp2(1.0/logHistogramBins)-1)*3 {
		t.Errorf("the median of 3 alone is %g", got)
	}
}

// On the QRNN3D cases of the balloons crop, the model fitted in windows of
// 16, 40 and all 128 lines agrees with Detect on the whole cube: σ within
// 2 % (0.5 % in one window: the histogram's error alone), the same dead
// columns, the same striped bands, nearly the same striped columns (a
// twentieth of them may differ: columns at the threshold, judged with the
// model's σ; the windows' medians alone, before residualHistograms, left
// 6–8 of 45–68 different and a striped band of σ 70 out), and their offsets
// within 3 standard errors of a column's offset.
func TestFitAgreesWithDetect(t *testing.T) {
	clean := openCrop(t)
	cases := []noise.Case{noise.CaseStripe, noise.CaseDeadline, noise.CaseMixture}
	if testing.Short() {
		cases = cases[2:]
	}
	for _, c := range cases {
		noisy, _ := caseTruth(t, clean, c, 1)
		whole := Detect(noisy)
		for _, lines := range []int{16, 40, noisy.Height} {
			m := fit(t, noisy, lines)
			tol := 0.02
			if lines == noisy.Height {
				tol = 5e-3
			}
			for b, s := range m.Sigma {
				if math.Abs(s-whole.Sigma[b]) > tol*whole.Sigma[b] {
					t.Errorf("%s, windows of %d lines, band %d: σ %.3f, whole cube %.3f", c.Name(), lines, b, s, whole.Sigma[b])
				}
			}
			for b := range m.Bands {
				if !slices.Equal(m.DeadColumns[b], whole.DeadColumns[b]) {
					t.Errorf("%s, windows of %d lines, band %d: dead columns %v, whole cube %v", c.Name(), lines, b, m.DeadColumns[b], whole.DeadColumns[b])
				}
			}
			if got, want := m.StripedBands(), whole.StripedBands(); !slices.Equal(got, want) {
				t.Errorf("%s, windows of %d lines: striped bands %v, whole cube %v", c.Name(), lines, got, want)
			}
			same, differ := 0, 0
			for _, b := range m.StripedBands() {
				if whole.StripeOffsets[b] == nil {
					continue
				}
				se := 1.2533 * 1.13 * m.Sigma[b] / math.Sqrt(float64(noisy.Height))
				for x, u := range m.StripeOffsets[b] {
					v := whole.StripeOffsets[b][x]
					switch {
					case (u != 0) != (v != 0):
						differ++
					case u != 0:
						same++
						if math.Abs(u-v) > 3*se {
							t.Errorf("%s, windows of %d lines, band %d column %d: offset %.2f, whole cube %.2f (se %.2f)", c.Name(), lines, b, x, u, v, se)
						}
					}
				}
			}
			if differ > max(2, same/20) {
				t.Errorf("%s, windows of %d lines: %d striped columns differ from the whole cube's, %d agree", c.Name(), lines, differ, same)
			}
			if m.Missing != 0 || m.Mask != nil {
				t.Errorf("%s: a model with %d missing voxels, mask %v", c.Name(), m.Missing, m.Mask != nil)
			}
		}
	}
}

// stripedScene is a flat scene of 256 lines × 64 samples × 6 bands with
// Gaussian noise of σ 10 and stripes of offset in columns 10, 30 and 50
// of band 2.
func stripedScene(offset float64) *msi.Cube {
	c := msi.NewCube(256, 64, 6)
	for i := range c.Data {
		c.Data[i] = 100
	}
	noisy := noise.Add(nil, c, 10, 5)
	band := noisy.Band(2)
	for y := range noisy.Height {
		for _, x := range []int{10, 30, 50} {
			band[y*noisy.Width+x] += offset
		}
	}
	return noisy
}

// A stripe too weak to stand out in any window of 16 lines (4.5 standard
// errors of a 16-line column are 16 at σ 10; the stripe is 8) is found
// over all of them, as on the whole cube, with its offset within 3
// standard errors of a 256-line column (0.89).
func TestFitFindsWeakStripes(t *testing.T) {
	noisy := stripedScene(8)
	for y0 := 0; y0 < noisy.Height; y0 += 16 {
		if r := Detect(noisy.Crop(y0, 0, 0, 16, noisy.Width, noisy.Bands)); len(r.StripedBands()) != 0 {
			t.Fatalf("lines %d–%d alone: stripes found in bands %v", y0, y0+15, r.StripedBands())
		}
	}
	whole, m := Detect(noisy), fit(t, noisy, 16)
	for name, r := range map[string]*Report{"whole cube": whole, "model": m} {
		if !slices.Equal(r.StripedBands(), []int{2}) {
			t.Fatalf("%s: striped bands %v, want [2]", name, r.StripedBands())
		}
		for x, u := range r.StripeOffsets[2] {
			want := 0.0
			if x == 10 || x == 30 || x == 50 {
				want = 8
			}
			if math.Abs(u-want) > 3*0.89 {
				t.Errorf("%s, column %d: offset %.2f, want %g", name, x, u, want)
			}
		}
	}
}

// A thin vertical feature of the scene along an eighth of a column (a
// window of its lines) moves the median of the column's residuals by a
// fifth of σ, below the threshold, and the mean of its windows' medians
// by an eighth of its contrast, far above: the model, which takes their
// weighted median, leaves such columns unstriped as Detect does, and
// still finds the stripes that run down whole columns.
func TestFitIgnoresPartialColumns(t *testing.T) {
	noisy := stripedScene(12)
	band := noisy.Band(2)
	for y := range noisy.Height / 8 {
		for _, x := range []int{20, 40} {
			band[y*noisy.Width+x] += 80
		}
	}
	whole, m := Detect(noisy), fit(t, noisy, 32)
	for name, r := range map[string]*Report{"whole cube": whole, "model": m} {
		if !slices.Equal(r.StripedBands(), []int{2}) {
			t.Fatalf("%s: striped bands %v, want [2]", name, r.StripedBands())
		}
		for x, u := range r.StripeOffsets[2] {
			striped := x == 10 || x == 30 || x == 50
			if (u != 0) != striped {
				t.Errorf("%s, column %d: offset %.2f, striped %v", name, x, u, striped)
			}
		}
	}
}

// columnMedians' offset is the weighted median of its windows' medians:
// the median of every window's median repeated as many times as its
// count, the mean of the two middle ones for an even total, as Median
// takes it.
func TestColumnMediansOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 500 {
		var m columnMedians
		var expanded []float64
		for range 1 + rng.IntN(maxColumnMedians) {
			w := windowMedian{float32(rng.NormFloat64() * 10), int32(1 + rng.IntN(4))}
			if trial%3 == 0 {
				w.median = float32(rng.IntN(3)) // ties
			}
			m.add(w)
			for range w.count {
				expanded = append(expanded, float64(w.median))
			}
		}
		got := m.offset()
		if want := Median(expanded); got.offset != want || got.count != len(expanded) {
			t.Fatalf("trial %d: offset %v of %d, want %v of %d", trial, got.offset, got.count, want, len(expanded))
		}
	}
	if got := (columnMedians{}).offset(); !math.IsNaN(got.offset) || got.count != 0 {
		t.Errorf("no windows: %v", got)
	}
}

// Past maxColumnMedians windows, the merged medians keep their counts'
// sum, at most maxColumnMedians of them, and a weighted median within the
// middle fifth of the windows' medians by weight (the lightest neighbours
// merged, it moves by about 2/maxColumnMedians of the weight at most).
func TestColumnMediansMerged(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, windows := range []int{maxColumnMedians + 1, 100, 1000, 10000} {
		var m columnMedians
		var expanded []float64
		for range windows {
			w := windowMedian{float32(rng.ExpFloat64()), int32(1 + rng.IntN(8))} // skewed: a mean is not a median
			m.add(w)
			for range w.count {
				expanded = append(expanded, float64(w.median))
			}
			if len(m) > maxColumnMedians {
				t.Fatalf("%d windows: %d medians kept", windows, len(m))
			}
		}
		got := m.offset()
		slices.Sort(expanded)
		n := len(expanded)
		if lo, hi := expanded[n*2/5], expanded[n*3/5]; got.count != n || got.offset < lo || got.offset > hi {
			t.Errorf("%d windows: offset %.4f of %d, want within [%.4f, %.4f] of %d", windows, got.offset, got.count, lo, hi, n)
		}
	}
}

// DetectWith on the windows of a cube finds the impulses, dead lines and
// missing voxels that Detect finds on the whole cube, and Fit counts them.
func TestDetectWithFindsLocalNoise(t *testing.T) {
	noisy, _ := caseTruth(t, openCrop(t), noise.CaseMixture, 2)
	band := noisy.Band(4)
	for x := range noisy.Width {
		band[70*noisy.Width+x] = 0 // a dead line
	}
	for i := range 300 {
		noisy.Data[5*noisy.Height*noisy.Width+i] = math.NaN()
	}
	whole := Detect(noisy)
	m := fit(t, noisy, 32)
	if m.Missing != whole.Missing || m.Missing != 300 {
		t.Errorf("missing voxels %d, whole cube %d, want 300", m.Missing, whole.Missing)
	}
	for b := range m.Bands {
		if !slices.Equal(m.DeadLines[b], whole.DeadLines[b]) {
			t.Errorf("band %d: dead lines %v, whole cube %v", b, m.DeadLines[b], whole.DeadLines[b])
		}
		if d := m.Impulses[b] - whole.Impulses[b]; d*d > whole.Impulses[b]/100+4 {
			t.Errorf("band %d: %d impulses, whole cube %d", b, m.Impulses[b], whole.Impulses[b])
		}
	}
	if !slices.Equal(m.DeadLines[4], []int{70}) {
		t.Errorf("band 4: dead lines %v, want [70]", m.DeadLines[4])
	}
	local := DetectWith(noisy, m)
	agree, total := 0, 0
	for i, v := range local.Mask {
		if v != 0 || whole.Mask[i] != 0 {
			total++
			if v == whole.Mask[i] {
				agree++
			}
		}
	}
	if float64(agree) < 0.99*float64(total) {
		t.Errorf("the masks agree on %d of %d marked voxels", agree, total)
	}
}

// Fit stops at a cancelled context and panics for windows of one line.
func TestFitErrors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(ctx, tiletest.Lines{Cube: msi.NewCube(8, 8, 2)}, 4, nil, nil); err == nil {
		t.Error("a cancelled fit returned no error")
	}
	defer func() {
		if recover() == nil {
			t.Error("windows of one line did not panic")
		}
	}()
	Fit(context.Background(), tiletest.Lines{Cube: msi.NewCube(8, 8, 2)}, 1, nil, nil)
}

// recordingLines records the windows read.
type recordingLines struct {
	tiletest.Lines
	reads *[][2]int
}

func (r recordingLines) ReadLines(y0, n int) (*msi.Cube, error) {
	*r.reads = append(*r.reads, [2]int{y0, n})
	return r.Lines.ReadLines(y0, n)
}

// Fit reads every line once a pass, in windows of the lines asked for but
// the last, which takes up a remainder of one line (it has no vertical
// detail), and says the lines read after every window; the second pass
// gives every window, in order, with what was found in it.
func TestFitWindows(t *testing.T) {
	c := noise.Add(nil, msi.NewCube(33, 12, 2), 5, 1)
	var reads [][2]int
	var said [][2]int
	var given []int
	_, err := Fit(context.Background(), recordingLines{tiletest.Lines{Cube: c}, &reads}, 16, func(lines, pass int) {
		said = append(said, [2]int{lines, pass})
	}, func(w *msi.Cube, found *Report) {
		given = append(given, w.Height)
		if len(found.Mask) != len(w.Data) {
			t.Errorf("a window of %s given with a mask of %d voxels", w.Size(), len(found.Mask))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{0, 16}, {16, 17}, {0, 16}, {16, 17}}; !slices.Equal(reads, want) {
		t.Errorf("windows read %v, want %v", reads, want)
	}
	if want := [][2]int{{16, 1}, {33, 1}, {16, 2}, {33, 2}}; !slices.Equal(said, want) {
		t.Errorf("progress %v, want %v", said, want)
	}
	if want := []int{16, 17}; !slices.Equal(given, want) {
		t.Errorf("windows of %v lines given, want %v", given, want)
	}
}

// TestFitCubeWide: FitCubeWide's σ, stripe offsets and dead columns are
// Fit's and it counts nothing local; with stripes or without, it reads
// the cube twice (the second pass decides the stripes).
func TestFitCubeWide(t *testing.T) {
	clean := openCrop(t)
	for _, c := range []noise.Case{noise.CaseMixture, noise.CaseNonIID} {
		noisy, _ := caseTruth(t, clean, c, 1)
		want := fit(t, noisy, 40)
		var reads [][2]int
		got, err := FitCubeWide(context.Background(), recordingLines{tiletest.Lines{Cube: noisy}, &reads}, 40, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Sigma, want.Sigma) || !slices.EqualFunc(got.StripeOffsets, want.StripeOffsets, slices.Equal) ||
			!slices.EqualFunc(got.DeadColumns, want.DeadColumns, slices.Equal) {
			t.Errorf("%s: σ, stripes or dead columns differ from Fit's", c.Name())
		}
		if got.Missing != 0 || slices.ContainsFunc(got.Impulses, func(n int) bool { return n != 0 }) ||
			slices.ContainsFunc(got.DeadLines, func(l []int) bool { return len(l) != 0 }) {
			t.Errorf("%s: local noise counted: %d missing, impulses %v, dead lines %v", c.Name(), got.Missing, got.Impulses, got.DeadLines)
		}
		if striped := len(want.StripedBands()) > 0; striped != (c == noise.CaseMixture) {
			t.Fatalf("%s: stripes found %v: the case does not test the pass it asks for", c.Name(), striped)
		}
		windows := 2 * ((noisy.Height + 39) / 40)
		if len(reads) != windows {
			t.Errorf("%s: %d windows read, want %d (%d striped bands)", c.Name(), len(reads), windows, len(want.StripedBands()))
		}
	}
}

// TestResidualHistograms: the medians that Fit's second pass reads off
// its histograms are within a quarter of a standard error of the medians
// of all of every column's residuals (columnResiduals on the whole band;
// 0.21 at worst), on a band of 400 lines with a texture that drifts down
// the columns, stripes, windows of 16 lines, a column far out along most
// of one window (40σ: the span of its windows' medians is wide, its bins
// are not, residualReach) and one with a few residuals in a window. The
// first pass's weighted median of the windows' medians is up to 3.1
// standard errors off.
func TestResidualHistograms(t *testing.T) {
	const height, width, lines, sigma = 400, 48, 16, 10.0
	rng := rand.New(rand.NewPCG(3, 4))
	c := msi.NewCube(height, width, 1)
	band := c.Band(0)
	for y := range height {
		for x := range width {
			band[y*width+x] = 100 + 30*math.Sin(float64(x)/3+float64(y)/40) + sigma*rng.NormFloat64()
			if x%7 == 3 {
				band[y*width+x] += 4 // stripes
			}
			if x == 20 && y >= 32 && y < 48 && y%5 != 0 {
				band[y*width+x] += 40 * sigma // a window mostly far out
			}
		}
	}
	mask := make([]uint8, height*width)
	for y := 32; y < 48; y++ {
		if y%5 != 0 {
			mask[y*width+21] = Dead // a window of column 21 with few residuals
		}
	}
	total := newWindowStats(width, 1)
	for y0 := 0; y0 < height; y0 += lines {
		w := c.Crop(y0, 0, 0, lines, width, 1)
		s := newWindowStats(width, 1)
		s.addColumns(0, columnResiduals(w.Band(0), mask[y0*width:(y0+lines)*width], lines, width, nil))
		total.merge(s)
	}
	first := total.profiles()
	h := newResidualHistograms(total, first, []float64{sigma})
	for y0 := 0; y0 < height; y0 += lines {
		w := c.Crop(y0, 0, 0, lines, width, 1)
		h.add(0, w.Band(0), mask[y0*width:(y0+lines)*width], lines)
	}
	got := h.profiles(first)[0]
	want := columnResiduals(band, mask, height, width, nil)
	worstFirst := 0.0
	for x := range width {
		se := 1.2533 * 1.13 * sigma / math.Sqrt(float64(want[x].count))
		if got[x].count != want[x].count || math.Abs(got[x].offset-want[x].offset) > 0.25*se {
			t.Errorf("column %d: median %.4f of %d residuals, all of them %.4f of %d (se %.3f)", x, got[x].offset, got[x].count, want[x].offset, want[x].count, se)
		}
		worstFirst = max(worstFirst, math.Abs(first[0][x].offset-want[x].offset)/se)
	}
	if worstFirst < 1 {
		t.Errorf("the windows' medians alone are within %.2f standard errors: the test does not need the histograms", worstFirst)
	}
}
