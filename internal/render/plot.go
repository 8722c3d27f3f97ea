package render

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Labels are drawn with basicfont's 7×13 bitmap face (the public domain X11
// misc-fixed font, in Go's own x/image module) rather than glyphs of our
// own: it is small, needs no font file and keeps every label legible. It
// holds printable ASCII only, so labels are written in ASCII ("+/-", not
// "±").
var face = basicfont.Face7x13

const (
	// textHeight is the height of a line of text, lineHeight that of a
	// line with its spacing.
	textHeight = 13
	lineHeight = 18
	// charWidth is the advance of every character of face.
	charWidth = 7
)

// textWidth is the width in pixels of s drawn in face.
func textWidth(s string) int { return charWidth * len(s) }

// drawText writes s on img in colour c with the top left corner of its
// first character's cell at (x, y).
func drawText(img draw.Image, x, y int, s string, c color.Color) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: face, Dot: fixed.P(x, y+face.Ascent)}
	d.DrawString(s)
}

// fill paints the rectangle r of img with c.
func fill(img draw.Image, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Src)
}

// drawLine draws the segment from (x0, y0) to (x1, y1) in c, one pixel
// wide, by Bresenham's algorithm, clipped to clip.
func drawLine(img draw.Image, x0, y0, x1, y1 int, c color.Color, clip image.Rectangle) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		if (image.Point{X: x0, Y: y0}).In(clip) {
			img.Set(x0, y0, c)
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// axis maps data values in [lo, hi] linearly to pixel positions in
// [p0, p1] (p1 < p0 for a vertical axis, whose values grow upwards).
type axis struct {
	lo, hi float64
	p0, p1 int
}

// pixel returns the position of v on the axis, rounded to a pixel.
func (a axis) pixel(v float64) int {
	return a.p0 + int(math.Round((v-a.lo)/(a.hi-a.lo)*float64(a.p1-a.p0)))
}

// niceStep returns the tick spacing for about at most n ticks over a span:
// 1, 2 or 5 times a power of ten.
func niceStep(span float64, n int) float64 {
	raw := span / float64(max(n, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// ticks returns the multiples of step in [lo, hi] (with a little slack for
// rounding) and the number of decimals that prints them exactly.
func ticks(lo, hi, step float64) ([]float64, int) {
	var out []float64
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+1e-9*step; k++ {
		out = append(out, k*step)
	}
	return out, max(0, -int(math.Floor(math.Log10(step)+1e-9)))
}

// formatTick prints a tick value with the given number of decimals ("0",
// never "-0").
func formatTick(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if f, _ := strconv.ParseFloat(s, 64); f == 0 {
		return strconv.FormatFloat(0, 'f', decimals, 64)
	}
	return s
}

// Series is one line of a plot: its values at the plot's x positions.
type Series struct {
	Name   string
	Values []float64
	Color  color.RGBA
}

// plotFrame is where a plot's data are drawn: the data rectangle and the
// two axes mapping data to it.
type plotFrame struct {
	data image.Rectangle
	x, y axis
}

// Plot margins around the data rectangle: room for the title above, the
// vertical axis's tick labels on the left, the horizontal axis's tick
// labels and name below.
const (
	plotTop    = lineHeight + 4
	plotLeft   = 8 * charWidth
	plotBottom = 2*lineHeight + 4
	plotRight  = 2 * charWidth
	tickLength = 4
)

// linePlot draws, inside box of img, a line plot of the series over the x
// positions xs (increasing), with the title above, labelled ticks on both
// axes and xName below the horizontal axis. The vertical range covers the
// finite values of every series, widened to whole tick steps; a flat range
// is widened by 1 either side. It returns the frame it drew in.
func linePlot(img draw.Image, box image.Rectangle, title string, xs []float64, xName string, series []Series) plotFrame {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, v := range s.Values {
			if !math.IsInf(v, 0) && !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if lo > hi {
		lo, hi = 0, 1
	}
	f := drawFrame(img, box, title, xName, xs[0], xs[len(xs)-1], lo, hi)
	for _, s := range series {
		prevX, prevY, have := 0, 0, false
		for i, v := range s.Values {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				have = false
				continue
			}
			px, py := f.x.pixel(xs[i]), f.y.pixel(v)
			if have {
				drawLine(img, prevX, prevY, px, py, s.Color, f.data)
			} else if (image.Point{X: px, Y: py}).In(f.data) {
				img.Set(px, py, s.Color)
			}
			prevX, prevY, have = px, py, true
		}
	}
	drawAxes(img, box, f)
	return f
}

// drawFrame draws, inside box of img, the frame of a plot of [xLo, xHi] ×
// [yLo, yHi]: the title above, horizontal grid lines with labelled ticks on
// the vertical axis, labelled ticks on the horizontal axis and xName below
// it. The vertical range is widened to whole tick steps, and a flat range
// on either axis by 1 either side. It returns the frame; the axes
// themselves are drawn by drawAxes, after the data.
func drawFrame(img draw.Image, box image.Rectangle, title, xName string, xLo, xHi, yLo, yHi float64) plotFrame {
	ink := color.RGBA{A: 255}
	grid := color.RGBA{R: 225, G: 225, B: 225, A: 255}
	data := image.Rect(box.Min.X+plotLeft, box.Min.Y+plotTop, box.Max.X-plotRight, box.Max.Y-plotBottom)
	if yHi == yLo {
		yLo, yHi = yLo-1, yHi+1
	}
	yStep := niceStep(yHi-yLo, max(2, data.Dy()/(2*lineHeight)))
	yLo, yHi = math.Floor(yLo/yStep)*yStep, math.Ceil(yHi/yStep)*yStep
	if xHi == xLo {
		xLo, xHi = xLo-1, xHi+1
	}
	f := plotFrame{
		data: data,
		x:    axis{lo: xLo, hi: xHi, p0: data.Min.X, p1: data.Max.X - 1},
		y:    axis{lo: yLo, hi: yHi, p0: data.Max.Y - 1, p1: data.Min.Y},
	}
	drawText(img, box.Min.X+plotLeft, box.Min.Y+2, title, ink)

	// Horizontal grid lines and the vertical axis's labels.
	yt, yDec := ticks(yLo, yHi, yStep)
	for _, v := range yt {
		p := f.y.pixel(v)
		drawLine(img, data.Min.X, p, data.Max.X-1, p, grid, data)
		drawLine(img, data.Min.X-tickLength, p, data.Min.X-1, p, ink, box)
		s := formatTick(v, yDec)
		drawText(img, data.Min.X-tickLength-2-textWidth(s), p-textHeight/2, s, ink)
	}
	// The horizontal axis: ticks at nice values, labels where they fit.
	xStep := niceStep(xHi-xLo, max(2, data.Dx()/(8*charWidth)))
	xt, xDec := ticks(xLo, xHi, xStep)
	for _, v := range xt {
		p := f.x.pixel(v)
		drawLine(img, p, data.Max.Y, p, data.Max.Y+tickLength-1, ink, box)
		s := formatTick(v, xDec)
		drawText(img, p-textWidth(s)/2, data.Max.Y+tickLength+1, s, ink)
	}
	drawText(img, data.Min.X+(data.Dx()-textWidth(xName))/2, data.Max.Y+tickLength+lineHeight, xName, ink)
	return f
}

// drawAxes draws the two axes of the frame f inside box, over the data.
func drawAxes(img draw.Image, box image.Rectangle, f plotFrame) {
	ink := color.RGBA{A: 255}
	drawLine(img, f.data.Min.X-1, f.data.Min.Y, f.data.Min.X-1, f.data.Max.Y, ink, box)
	drawLine(img, f.data.Min.X-1, f.data.Max.Y, f.data.Max.X-1, f.data.Max.Y, ink, box)
}
