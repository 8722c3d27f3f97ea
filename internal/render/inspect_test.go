package render

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"tdsc/internal/metrics/noref"
)

func TestLinearGray(t *testing.T) {
	m := Linear{Lo: 10, Hi: 20}
	for _, c := range []struct {
		v    float64
		want uint8
	}{{10, 0}, {20, 255}, {15, 128}, {12, 51}, {-5, 0}, {99, 255}, {math.NaN(), 0}, {math.Inf(1), 255}} {
		if got := m.Gray(c.v); got != c.want {
			t.Errorf("Gray(%v) = %d, want %d", c.v, got, c.want)
		}
	}
	if g := (Linear{Lo: 3, Hi: 3}).Gray(7); g != 128 {
		t.Errorf("a flat mapping draws %d, want mid gray", g)
	}
}

func TestImageRangeIgnoresExtremes(t *testing.T) {
	band := make([]float64, 1000)
	for i := range band {
		band[i] = float64(i % 100) // 0..99, ten times
	}
	band[0], band[1] = -1e6, 1e6 // two impulses: 0.2 % of the pixels
	band[2] = math.NaN()
	m := ImageRange(band)
	if m.Lo != 0 || m.Hi != 99 {
		t.Errorf("range [%v, %v], want [0, 99]: the extremes are clipped", m.Lo, m.Hi)
	}
	if m := ImageRange([]float64{5, 5, 5}); m.Lo != 4 || m.Hi != 6 || m.Gray(5) != 128 {
		t.Errorf("constant band: %+v, want 5 ± 1 drawn mid gray", m)
	}
}

func TestSymmetricRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	r := make([]float64, 20000)
	for i := range r {
		r[i] = 7 * rng.NormFloat64()
	}
	// Stripes and impulses on 10 % of the values do not widen the range
	// much: they are what it should show in full black and white.
	for i := 0; i < len(r); i += 10 {
		r[i] = 200
	}
	m := SymmetricRange(r)
	if m.Lo != -m.Hi || math.Abs(m.Hi-SymmetricSpread*7) > 0.15*SymmetricSpread*7 {
		t.Errorf("range [%v, %v], want about ±%v", m.Lo, m.Hi, SymmetricSpread*7)
	}
	if m.Gray(0) != 128 || m.Gray(200) != 255 || m.Gray(-200) != 0 {
		t.Errorf("0, +200, −200 drawn %d, %d, %d; want 128, 255, 0", m.Gray(0), m.Gray(200), m.Gray(-200))
	}
	// Mostly zero (only impulses removed): the largest |r|.
	sparse := make([]float64, 100)
	sparse[3], sparse[50] = -40, 25
	if m := SymmetricRange(sparse); m.Lo != -40 || m.Hi != 40 {
		t.Errorf("sparse residual: %+v, want ±40", m)
	}
	if m := SymmetricRange(make([]float64, 4)); m.Hi != 1 {
		t.Errorf("zero residual: %+v, want ±1", m)
	}
}

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		span float64
		n    int
		want float64
	}{{30, 5, 10}, {300, 4, 100}, {1, 5, 0.2}, {0.07, 3, 0.05}, {250, 5, 50}} {
		if got := niceStep(c.span, c.n); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("niceStep(%v, %d) = %v, want %v", c.span, c.n, got, c.want)
		}
	}
	got, dec := ticks(-0.3, 0.45, 0.2)
	want := []float64{-0.2, 0, 0.2, 0.4}
	if len(got) != len(want) || dec != 1 {
		t.Fatalf("ticks = %v (%d decimals), want %v (1)", got, dec, want)
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 || formatTick(got[i], dec) != []string{"-0.2", "0.0", "0.2", "0.4"}[i] {
			t.Errorf("tick %d: %v printed %q", i, got[i], formatTick(got[i], dec))
		}
	}
}

// colourAt reports whether the pixel (x, y) of img is c.
func colourAt(img *image.RGBA, x, y int, c color.RGBA) bool { return img.RGBAAt(x, y) == c }

// TestLinePlotPlacesSpectrum draws a spectrum with one peak and checks
// that the line passes through every point where the axes put it, that
// the peak is the topmost drawn pixel, at the peak band's share of the
// width, and that the axes span the data.
func TestLinePlotPlacesSpectrum(t *testing.T) {
	xs := make([]float64, 21)
	values := make([]float64, len(xs))
	for i := range xs {
		xs[i] = 400 + 10*float64(i) // 400..600 nm
		values[i] = 50
	}
	const peak = 15
	values[peak] = 180
	img := image.NewRGBA(image.Rect(0, 0, 400, 260))
	fill(img, img.Bounds(), paper)
	box := image.Rect(20, 10, 380, 250)
	f := linePlot(img, box, "test", xs, "wavelength (nm)", []Series{{Values: values, Color: DenoisedColour}})

	if f.x.pixel(400) != f.data.Min.X || f.x.pixel(600) != f.data.Max.X-1 {
		t.Errorf("400 and 600 nm at %d and %d, want the data rectangle's edges %d and %d", f.x.pixel(400), f.x.pixel(600), f.data.Min.X, f.data.Max.X-1)
	}
	if f.y.lo > 50 || f.y.hi < 180 || f.y.hi-f.y.lo > 2*(180-50) {
		t.Errorf("vertical range [%v, %v] does not fit the data [50, 180] snugly", f.y.lo, f.y.hi)
	}
	for i, v := range values {
		if x, y := f.x.pixel(xs[i]), f.y.pixel(v); !colourAt(img, x, y, DenoisedColour) {
			t.Errorf("band %d (%v nm, %v) is not drawn at (%d, %d)", i+1, xs[i], v, x, y)
		}
	}
	// Independently of the axes: the topmost line pixel is the peak, at
	// 15/20 of the width; the flat part is one row, lower down.
	top, topX := img.Bounds().Max.Y, -1
	rows := map[int]int{}
	for y := f.data.Min.Y; y < f.data.Max.Y; y++ {
		for x := f.data.Min.X; x < f.data.Max.X; x++ {
			if colourAt(img, x, y, DenoisedColour) {
				rows[y]++
				if y < top {
					top, topX = y, x
				}
			}
		}
	}
	wantX := f.data.Min.X + int(math.Round(float64(peak)/20*float64(f.data.Dx()-1)))
	if abs(topX-wantX) > 1 {
		t.Errorf("peak drawn at x = %d, want %d", topX, wantX)
	}
	wantTop := f.data.Max.Y - 1 - int(math.Round((180-f.y.lo)/(f.y.hi-f.y.lo)*float64(f.data.Dy()-1)))
	if top != wantTop {
		t.Errorf("peak drawn at y = %d, want %d", top, wantTop)
	}
	// Between points the line is straight: halfway up the rise to the peak
	// it is halfway between the two values.
	midX, midY := (f.x.pixel(xs[peak-1])+f.x.pixel(xs[peak]))/2, f.y.pixel((50+180)/2.0)
	onLine := false
	for y := midY - 2; y <= midY+2; y++ {
		onLine = onLine || colourAt(img, midX, y, DenoisedColour)
	}
	if !onLine {
		t.Errorf("no line near (%d, %d), halfway up the rise to the peak", midX, midY)
	}
	flat := f.y.pixel(50)
	if rows[flat] < f.data.Dx()/2 {
		t.Errorf("the flat part: %d pixels on its row %d, want most of the width", rows[flat], flat)
	}
}

// TestInspectLayout checks the band panels of a picture: the noisy and
// denoised bands drawn with the denoised band's mapping, the removed part
// around mid gray, magnified to at least minPanel pixels, and a plot per
// pixel with the reference line when there is one.
func TestInspectLayout(t *testing.T) {
	const h, w, bands = 20, 25, 6
	rng := rand.New(rand.NewPCG(2, 2))
	in := &Inspection{Height: h, Width: w, Band: "band 3", Noisy: make([]float64, h*w), Denoised: make([]float64, h*w), Removed: make([]float64, h*w)}
	for i := range in.Noisy {
		in.Denoised[i] = float64(i % 200)
		in.Removed[i] = 5 * rng.NormFloat64()
		in.Noisy[i] = in.Denoised[i] + in.Removed[i]
	}
	in.X = []float64{1, 2, 3, 4, 5, 6}
	in.XName = "band"
	spec := func(v float64) []float64 {
		s := make([]float64, bands)
		for i := range s {
			s[i] = v + float64(i)
		}
		return s
	}
	for _, p := range [][2]int{{5, 5}, {15, 20}} {
		in.Pixels = append(in.Pixels, PixelSpectra{Row: p[0], Column: p[1], Noisy: spec(10), Denoised: spec(20), Reference: spec(30)})
	}
	img := Inspect(in)
	const scale = (minPanel + w - 1) / w // 8
	top := margin + 2*lineHeight
	m, rm := ImageRange(in.Denoised), SymmetricRange(in.Removed)
	// A pixel far from the markers: (row 0, column 12).
	for i, c := range []struct {
		band []float64
		m    Linear
	}{{in.Noisy, m}, {in.Denoised, m}, {in.Removed, rm}} {
		x0 := margin + i*(w*scale+panelGap)
		for _, px := range [][2]int{{0, 12}, {19, 0}} {
			want := c.m.Gray(c.band[px[0]*w+px[1]])
			for _, d := range []int{0, scale - 1} {
				got := img.RGBAAt(x0+px[1]*scale+d, top+px[0]*scale+d)
				if got != (color.RGBA{R: want, G: want, B: want, A: 255}) {
					t.Errorf("panel %d, pixel %v: drawn %v, want gray %d", i, px, got, want)
				}
			}
		}
		// The marker of pixel 1 (row 5, column 5) is red around it.
		if got := img.RGBAAt(x0+5*scale+scale/2-markerSize, top+5*scale+scale/2); got != markerColour {
			t.Errorf("panel %d: no marker left of pixel 1, found %v", i, got)
		}
	}
	// Two plots side by side under the panels, each with all three lines.
	plotsTop := top + h*scale + 3*lineHeight
	for k := range in.Pixels {
		box := image.Rect(margin+k*(plotWidth+panelGap), plotsTop, margin+k*(plotWidth+panelGap)+plotWidth, plotsTop+plotHeight)
		found := map[color.RGBA]bool{}
		for y := box.Min.Y; y < box.Max.Y; y++ {
			for x := box.Min.X; x < box.Max.X; x++ {
				found[img.RGBAAt(x, y)] = true
			}
		}
		for _, c := range []color.RGBA{NoisyColour, DenoisedColour, ReferenceColour} {
			if !found[c] {
				t.Errorf("plot %d has no line of colour %v", k+1, c)
			}
		}
	}
	if got := img.Bounds().Dy(); got != plotsTop+plotHeight+margin {
		t.Errorf("height %d, want %d", got, plotsTop+plotHeight+margin)
	}
}

// TestInspectColumnSpectrum: the removed part's column-mean spectrum is
// the plot after the pixels', in its own colour, wrapping to a new row
// when the row is full; a spectrum whose lengths differ panics.
func TestInspectColumnSpectrum(t *testing.T) {
	const h, w = 20, 25
	in := &Inspection{Height: h, Width: w, Band: "band 1", Noisy: make([]float64, h*w), Denoised: make([]float64, h*w), Removed: make([]float64, h*w),
		X: []float64{1, 2}, XName: "band"}
	spectrum := &noref.ColumnSpectrum{Frequency: []float64{0, 0.25, 0.5}, Power: []float64{1, 100, 10}, Period: 4}
	plotsTop := margin + 2*lineHeight + h*((minPanel+w-1)/w) + 3*lineHeight
	for pixels := range 4 {
		in.Pixels = in.Pixels[:0]
		for range pixels {
			in.Pixels = append(in.Pixels, PixelSpectra{Noisy: []float64{1, 2}, Denoised: []float64{1, 2}})
		}
		in.RemovedColumns = spectrum
		img := Inspect(in)
		x0, y0 := margin+(pixels%3)*(plotWidth+panelGap), plotsTop+(pixels/3)*(plotHeight+panelGap)
		found := false
		for y := y0; y < y0+plotHeight; y++ {
			for x := x0; x < x0+plotWidth; x++ {
				found = found || img.RGBAAt(x, y) == ColumnSpectrumColour
			}
		}
		if !found {
			t.Errorf("%d pixels: no column spectrum in plot %d", pixels, pixels+1)
		}
		if got, want := img.Bounds().Dy(), y0+plotHeight+margin; got != want {
			t.Errorf("%d pixels: height %d, want %d", pixels, got, want)
		}
		in.RemovedColumns = nil
		if got := Inspect(in).Bounds().Dy(); pixels == 0 && got != plotsTop+margin {
			t.Errorf("no pixels, no spectrum: height %d, want %d", got, plotsTop+margin)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("a spectrum of 3 powers at 2 frequencies: no panic")
		}
	}()
	in.RemovedColumns = &noref.ColumnSpectrum{Frequency: []float64{0, 0.5}, Power: []float64{1, 2, 3}}
	Inspect(in)
}

func TestInspectPanicsOnBadSizes(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a band of the wrong length: no panic")
		}
	}()
	Inspect(&Inspection{Height: 2, Width: 2, Noisy: make([]float64, 4), Denoised: make([]float64, 4), Removed: make([]float64, 3)})
}

// TestDrawLine draws segments in every direction and checks that each is
// an 8-connected path between its ends, one pixel per step of its longer
// side.
func TestDrawLine(t *testing.T) {
	bounds := image.Rect(0, 0, 40, 40)
	for _, s := range [][4]int{{5, 5, 30, 12}, {30, 12, 5, 5}, {10, 35, 14, 2}, {20, 20, 20, 20}, {3, 30, 33, 30}, {7, 2, 7, 29}, {2, 2, 30, 30}, {30, 3, 4, 21}} {
		img := image.NewRGBA(bounds)
		drawLine(img, s[0], s[1], s[2], s[3], ink, bounds)
		var drawn []image.Point
		for y := range 40 {
			for x := range 40 {
				if img.RGBAAt(x, y) == ink {
					drawn = append(drawn, image.Pt(x, y))
				}
			}
		}
		if want := max(abs(s[2]-s[0]), abs(s[3]-s[1])) + 1; len(drawn) != want {
			t.Errorf("segment %v: %d pixels, want %d", s, len(drawn), want)
		}
		for _, end := range []image.Point{{s[0], s[1]}, {s[2], s[3]}} {
			if img.RGBAAt(end.X, end.Y) != ink {
				t.Errorf("segment %v: end %v not drawn", s, end)
			}
		}
		for _, p := range drawn {
			neighbours := 0
			for _, q := range drawn {
				if q != p && abs(q.X-p.X) <= 1 && abs(q.Y-p.Y) <= 1 {
					neighbours++
				}
			}
			if len(drawn) > 1 && neighbours == 0 {
				t.Errorf("segment %v: pixel %v is not connected", s, p)
			}
		}
	}
	// Clipping: only the part inside is drawn.
	img := image.NewRGBA(bounds)
	drawLine(img, -10, 5, 50, 5, ink, image.Rect(10, 0, 20, 40))
	for x := range 40 {
		if inside := x >= 10 && x < 20; (img.RGBAAt(x, 5) == ink) != inside {
			t.Errorf("clipped line at x = %d: drawn %v, want %v", x, !inside, inside)
		}
	}
}

// TestInspectNoData: a missing (NaN) voxel is drawn in NoDataColour in
// every panel, not as a gray level (black reads as −3σ in the removed
// panel), and the caption says so; without missing voxels it says nothing.
func TestInspectNoData(t *testing.T) {
	const h, w = 20, 25
	in := &Inspection{Height: h, Width: w, Band: "band 1", Noisy: make([]float64, h*w), Denoised: make([]float64, h*w), Removed: make([]float64, h*w)}
	for i := range in.Noisy {
		in.Denoised[i] = float64(i % 200)
		in.Noisy[i] = in.Denoised[i] + float64(i%7-3)
		in.Removed[i] = in.Noisy[i] - in.Denoised[i]
	}
	clean := Inspect(in)
	in.Noisy[0], in.Denoised[0], in.Removed[0] = math.NaN(), math.NaN(), math.NaN()
	img := Inspect(in)
	const scale = (minPanel + w - 1) / w
	top := margin + 2*lineHeight
	for i := range 3 {
		if got := img.RGBAAt(margin+i*(w*scale+panelGap), top); got != NoDataColour {
			t.Errorf("panel %d: a missing voxel drawn %v", i, got)
		}
	}
	// The caption line is longer by the note: more ink at its end.
	inkAt := func(img *image.RGBA) (n int) {
		y0 := top + h*scale + 4
		for y := y0; y < y0+textHeight; y++ {
			for x := range img.Bounds().Dx() {
				if img.RGBAAt(x, y) == ink {
					n++
				}
			}
		}
		return n
	}
	if inkAt(img) <= inkAt(clean) {
		t.Error("the caption does not say how missing voxels are drawn")
	}
}
