package render

import (
	"image"
	"image/color"
	"math"
	"testing"

	"tdsc/internal/stages/noiselevel"
)

// count returns how many pixels of img inside r are exactly c.
func count(img *image.RGBA, r image.Rectangle, c color.RGBA) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if img.RGBAAt(x, y) == c {
				n++
			}
		}
	}
	return n
}

// TestNoiseLevelsLayout checks the size of the picture, one square per
// level in its colour, and the fitted line: its pixels lie where the
// frame maps the function, at every column of the data rectangle.
func TestNoiseLevelsLayout(t *testing.T) {
	fit := noiselevel.Band{Function: noiselevel.Function{A: 2, B: 50}, Fitted: true}
	for i := range 5 {
		m := 20 + 40*float64(i)
		fit.Levels = append(fit.Levels, noiselevel.Level{Mean: m, Variance: fit.Variance(m) + 60, Clipped: i == 4})
	}
	panels := []NoiseLevelPanel{
		{Name: "band 1", Fit: fit, Function: fit.Function},
		{Name: "band 2"}, {Name: "band 3"}, {Name: "band 4"}, {Name: "band 5"},
	}
	img := NoiseLevels([]string{"heading"}, panels)
	top := lineHeight + 8
	if want := image.Rect(0, 0, levelColumns*levelPlotWidth, top+2*levelPlotHeight); img.Bounds() != want {
		t.Fatalf("picture %v, want %v", img.Bounds(), want)
	}
	box := image.Rect(0, top, levelPlotWidth, top+levelPlotHeight)
	side := 2*levelMarker + 1
	if n := count(img, box, LevelColour); n != 4*side*side {
		t.Errorf("%d pixels of fitted levels, want 4 squares of %d", n, side*side)
	}
	if n := count(img, box, ClippedColour); n != side*side {
		t.Errorf("%d pixels of clipped levels, want one square of %d", n, side*side)
	}
	// The frame levelPlot drew in: the same call on a scratch picture.
	scratch := image.NewRGBA(img.Bounds())
	xHi := 180 + 0.03*180
	fr := drawFrame(scratch, box, "", "", 0, xHi, 0, math.Max(fit.Variance(xHi), 480))
	for px := fr.data.Min.X + 1; px < fr.data.Max.X-1; px++ {
		x := fr.x.lo + float64(px-fr.x.p0)/float64(fr.x.p1-fr.x.p0)*(fr.x.hi-fr.x.lo)
		want := fr.y.pixel(fit.Variance(x))
		found := false
		for dy := -2; dy <= 2; dy++ {
			found = found || img.RGBAAt(px, want+dy) == FitColour
		}
		if !found {
			t.Fatalf("no fit pixel near (%d, %d)", px, want)
		}
	}
	// A band without a fit has no levels and no line.
	other := image.Rect(levelPlotWidth, top, 2*levelPlotWidth, top+levelPlotHeight)
	if count(img, other, LevelColour)+count(img, other, FitColour) != 0 {
		t.Error("an unfitted band has levels or a line drawn")
	}
}
