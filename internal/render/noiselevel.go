package render

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"tdsc/internal/stages/noiselevel"
)

// The colours of a noise-level plot: the levels fitted (blue), the levels
// left out near a clipping level (gray) and the fitted function (orange).
var (
	LevelColour   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	ClippedColour = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	FitColour     = color.RGBA{R: 230, G: 110, B: 20, A: 255}
)

// The size of one band's plot of a noise-level picture, and the number of
// plots in a row.
const (
	levelPlotWidth, levelPlotHeight = 360, 240
	levelColumns                    = 4
	levelMarker                     = 2 // half the side of a level's square
)

// NoiseLevelPanel is one band of a noise-level picture: its name and its
// fit (noiselevel.Band), and the function the band is denoised with (the
// fit's own, or for a band that was not fitted the nearest fitted band's).
type NoiseLevelPanel struct {
	Name     string
	Fit      noiselevel.Band
	Function noiselevel.Function
}

// NoiseLevels draws a noise-level picture: the heading lines (ASCII) at
// the top, then one plot per panel, levelColumns to a row: the noise
// variance of every level of the band against its mean (squares; gray for
// a level left out near a clipping level) and the fitted function
// σ²(x) = a·x + b as a line, both axes from 0 so that b is where the line
// meets the vertical one. It panics without a panel.
func NoiseLevels(heading []string, panels []NoiseLevelPanel) *image.RGBA {
	if len(panels) == 0 {
		panic("render: a noise-level picture without a band")
	}
	columns := min(levelColumns, len(panels))
	rows := (len(panels) + columns - 1) / columns
	top := len(heading)*lineHeight + 8
	width := columns * levelPlotWidth
	for _, line := range heading {
		width = max(width, textWidth(line)+16)
	}
	img := image.NewRGBA(image.Rect(0, 0, width, top+rows*levelPlotHeight))
	fill(img, img.Bounds(), color.White)
	for i, line := range heading {
		drawText(img, 8, 4+i*lineHeight, line, color.RGBA{A: 255})
	}
	for i, p := range panels {
		x0, y0 := i%columns*levelPlotWidth, top+i/columns*levelPlotHeight
		levelPlot(img, image.Rect(x0, y0, x0+levelPlotWidth, y0+levelPlotHeight), p)
	}
	return img
}

// levelPlot draws one panel inside box.
func levelPlot(img *image.RGBA, box image.Rectangle, p NoiseLevelPanel) {
	f := p.Function
	title := fmt.Sprintf("%s: a %s, b %s", p.Name, short(f.A), short(f.B))
	if !p.Fit.Fitted {
		title = p.Name + ": too few smooth windows"
	}
	xLo, xHi, yHi := math.Inf(1), math.Inf(-1), 0.0
	for _, l := range p.Fit.Levels {
		xLo, xHi, yHi = math.Min(xLo, l.Mean), math.Max(xHi, l.Mean), math.Max(yHi, l.Variance)
	}
	if xLo > xHi {
		xLo, xHi = 0, 255
	}
	// From 0 (or the lowest level, if below), so that b shows where the
	// line meets the vertical axis, to a little beyond the highest level,
	// so that its square is whole.
	xLo, xHi = math.Min(xLo, 0), xHi+0.03*(xHi-math.Min(xLo, 0))
	yHi = math.Max(yHi, math.Max(f.Variance(xLo), f.Variance(xHi)))
	fr := drawFrame(img, box, title, "local mean", xLo, xHi, 0, yHi)
	if p.Fit.Fitted {
		// The vertical range holds the function at both ends (and it is
		// never negative), so the segment lies in the frame.
		drawLine(img, fr.x.pixel(xLo), fr.y.pixel(f.Variance(xLo)), fr.x.pixel(xHi), fr.y.pixel(f.Variance(xHi)), FitColour, fr.data)
	}
	for _, l := range p.Fit.Levels {
		c := LevelColour
		if l.Clipped {
			c = ClippedColour
		}
		cx, cy := fr.x.pixel(l.Mean), fr.y.pixel(l.Variance)
		fill(img, image.Rect(cx-levelMarker, cy-levelMarker, cx+levelMarker+1, cy+levelMarker+1).Intersect(fr.data), c)
	}
	drawAxes(img, box, fr)
	drawText(img, fr.data.Min.X+4, fr.data.Min.Y+2, "variance", color.RGBA{A: 255})
}
