package render

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"slices"
	"strconv"

	"tdsc/internal/metrics/noref"
)

// Linear is an intensity mapping: Lo is black, Hi white, values between
// linear and values beyond clipped. A mapping with Hi ≤ Lo draws every
// value mid gray (128).
type Linear struct{ Lo, Hi float64 }

// Gray returns the gray level of v (NaN is black).
func (m Linear) Gray(v float64) uint8 {
	if !(m.Hi > m.Lo) {
		return 128
	}
	t := (v - m.Lo) / (m.Hi - m.Lo)
	switch {
	case !(t > 0):
		return 0
	case t >= 1:
		return 255
	}
	return uint8(math.Round(255 * t))
}

// percentile returns the value of rank ⌊q·(n−1)⌋ of sorted s.
func percentile(sorted []float64, q float64) float64 {
	return sorted[int(q*float64(len(sorted)-1))]
}

// finiteSorted returns the finite values of v, sorted.
func finiteSorted(v []float64) []float64 {
	s := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			s = append(s, x)
		}
	}
	slices.Sort(s)
	return s
}

// ImageRange is the mapping for a band shown as an image: its 0.5th
// percentile is black and its 99.5th white, so that a few extreme pixels
// (impulses, dead pixels) do not flatten the rest. A band without spread
// gets its value ± 1 (mid gray); one without finite values [0, 255].
func ImageRange(band []float64) Linear {
	s := finiteSorted(band)
	if len(s) == 0 {
		return Linear{0, 255}
	}
	m := Linear{percentile(s, 0.005), percentile(s, 0.995)}
	if !(m.Hi > m.Lo) {
		m = Linear{m.Lo - 1, m.Lo + 1}
	}
	return m
}

// SymmetricSpread is the number of robust standard deviations of a
// residual that its symmetric mapping spans either side of 0: Gaussian
// noise fills the range, and stripes and impulses, which stand out of
// the noise, show as full black or white.
const SymmetricSpread = 3

// SymmetricRange is the mapping for a signed residual r: 0 is mid gray,
// −a black and +a white, with a = SymmetricSpread robust standard
// deviations of r (1.4826 × the median of |r|, σ for zero-mean Gaussian
// noise, which sparse outliers do not inflate). When more than half of r
// is 0, a is the largest |r|; for an all-zero r, 1.
func SymmetricRange(r []float64) Linear {
	mag := make([]float64, 0, len(r))
	for _, v := range r {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			mag = append(mag, math.Abs(v))
		}
	}
	a := 0.0
	if len(mag) > 0 {
		slices.Sort(mag)
		a = SymmetricSpread * 1.4826 * mag[len(mag)/2]
		if a == 0 {
			a = mag[len(mag)-1]
		}
	}
	if a == 0 {
		a = 1
	}
	return Linear{-a, a}
}

// PixelSpectra are the spectra of one pixel (0-based Row and Column) in the
// noisy and denoised cubes and, when known (else nil), the reference.
type PixelSpectra struct {
	Row, Column                int
	Noisy, Denoised, Reference []float64
}

// Inspection is what Inspect draws: one band of a noisy cube, of its
// denoised version and of the part removed between them (Height×Width,
// row-major), and the spectra of chosen pixels over the positions X
// (wavelengths or band numbers, increasing, one per band), which XName
// names. Band says which band is shown. RemovedColumns, when not nil, is
// the power spectrum of the removed band's column means (by
// noref.ColumnMeanSpectrum).
type Inspection struct {
	Height, Width            int
	Band                     string
	Noisy, Denoised, Removed []float64
	Pixels                   []PixelSpectra
	X                        []float64
	XName                    string
	RemovedColumns           *noref.ColumnSpectrum
}

// Colours of the picture.
var (
	paper        = color.RGBA{R: 255, G: 255, B: 255, A: 255}
	ink          = color.RGBA{A: 255}
	markerColour = color.RGBA{R: 230, G: 20, B: 20, A: 255}
	// NoisyColour, DenoisedColour and ReferenceColour draw the spectra.
	NoisyColour     = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	DenoisedColour  = color.RGBA{R: 20, G: 80, B: 220, A: 255}
	ReferenceColour = color.RGBA{R: 240, G: 140, B: 0, A: 255}
	// NoDataColour draws a missing voxel (NaN) in the bands, which no gray
	// level of a mapping would tell from a value.
	NoDataColour = color.RGBA{R: 255, G: 0, B: 255, A: 255}
)

// Layout of the picture, in pixels.
const (
	margin = 10
	// minPanel is the least size of a band panel's longer side: smaller
	// bands are magnified by whole pixels to reach it.
	minPanel   = 200
	panelGap   = 10
	plotWidth  = 320
	plotHeight = 210
	markerSize = 4
	// minPlotColumns is the least number of spectrum plots in a row.
	minPlotColumns = 3
)

// Inspect draws in one picture, top to bottom: a title naming the band;
// the band of the noisy cube, of the denoised cube (one mapping for both,
// ImageRange of the denoised band) and of the removed part (SymmetricRange)
// side by side, magnified by whole pixels to at least minPanel pixels,
// with each chosen pixel marked and numbered; a line saying the mappings;
// and a grid of line plots, one per chosen pixel, of its noisy, denoised
// and reference spectra, under a legend, followed by the plot of the
// removed band's column-mean power spectrum in dB (10·log₁₀ of the power)
// when there is one. Rows and columns in labels count from 1. It panics
// if a band is not Height·Width long or a spectrum not len(X) long.
func Inspect(in *Inspection) *image.RGBA {
	h, w := in.Height, in.Width
	for _, b := range [][]float64{in.Noisy, in.Denoised, in.Removed} {
		if len(b) != h*w {
			panic(fmt.Sprintf("render: a band has %d values, want %d×%d", len(b), h, w))
		}
	}
	for _, p := range in.Pixels {
		for _, s := range [][]float64{p.Noisy, p.Denoised} {
			if len(s) != len(in.X) {
				panic(fmt.Sprintf("render: a spectrum has %d values, want %d", len(s), len(in.X)))
			}
		}
		if p.Reference != nil && len(p.Reference) != len(in.X) {
			panic(fmt.Sprintf("render: a reference spectrum has %d values, want %d", len(p.Reference), len(in.X)))
		}
	}
	if s := in.RemovedColumns; s != nil && (len(s.Power) != len(s.Frequency) || len(s.Power) < 3) {
		panic(fmt.Sprintf("render: a column spectrum of %d powers at %d frequencies, want at least 3 of each", len(s.Power), len(s.Frequency)))
	}
	scale := max(1, (minPanel+max(h, w)-1)/max(h, w))
	pw, ph := w*scale, h*scale
	intensity, removed := ImageRange(in.Denoised), SymmetricRange(in.Removed)
	caption := fmt.Sprintf("noisy, denoised: black %s, white %s;  removed: gray 0, black -%s, white +%s",
		short(intensity.Lo), short(intensity.Hi), short(removed.Hi), short(removed.Hi))
	if slices.ContainsFunc(in.Noisy, math.IsNaN) || slices.ContainsFunc(in.Denoised, math.IsNaN) || slices.ContainsFunc(in.Removed, math.IsNaN) {
		caption += ";  no data: magenta"
	}

	// As many plots side by side as the bands' width holds, and at least
	// three (or as many as there are) even when the bands are narrower.
	width := max(2*margin+3*pw+2*panelGap, 2*margin+textWidth(caption))
	plots := len(in.Pixels)
	if in.RemovedColumns != nil {
		plots++
	}
	cols := min(max(1, plots), max(minPlotColumns, (width-2*margin+panelGap)/(plotWidth+panelGap)))
	width = max(width, 2*margin+cols*(plotWidth+panelGap)-panelGap)
	rows := (plots + cols - 1) / cols
	panelsTop := margin + 2*lineHeight
	plotsTop := panelsTop + ph + lineHeight + 2*lineHeight
	height := plotsTop + margin
	if rows > 0 {
		height += rows*(plotHeight+panelGap) - panelGap
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	fill(img, img.Bounds(), paper)

	drawText(img, margin, margin, in.Band+": noisy | denoised | removed (noisy - denoised)", ink)
	panels := []struct {
		name string
		band []float64
		m    Linear
	}{{"noisy", in.Noisy, intensity}, {"denoised", in.Denoised, intensity}, {"removed", in.Removed, removed}}
	for i, p := range panels {
		x0 := margin + i*(pw+panelGap)
		drawText(img, x0, panelsTop-lineHeight, p.name, ink)
		for y := range ph {
			row := img.Pix[(panelsTop+y)*img.Stride:]
			for x := range pw {
				v := p.band[(y/scale)*w+x/scale]
				if math.IsNaN(v) {
					c := NoDataColour
					copy(row[4*(x0+x):], []uint8{c.R, c.G, c.B, c.A})
					continue
				}
				g := p.m.Gray(v)
				copy(row[4*(x0+x):], []uint8{g, g, g, 255})
			}
		}
		panel := image.Rect(x0, panelsTop, x0+pw, panelsTop+ph)
		for k, px := range in.Pixels {
			markPixel(img, panel, px.Column*scale+scale/2, px.Row*scale+scale/2, strconv.Itoa(k+1))
		}
	}
	drawText(img, margin, panelsTop+ph+4, caption, ink)

	if s := in.RemovedColumns; s != nil {
		k := len(in.Pixels)
		x0 := margin + (k%cols)*(plotWidth+panelGap)
		y0 := plotsTop + (k/cols)*(plotHeight+panelGap)
		columnSpectrumPlot(img, image.Rect(x0, y0, x0+plotWidth, y0+plotHeight), s)
	}
	if len(in.Pixels) == 0 {
		return img
	}
	legendTop := plotsTop - lineHeight - 4
	x := margin
	const legendTitle = "spectra (values on the working 0-255 scale):"
	drawText(img, x, legendTop, legendTitle, ink)
	x += textWidth(legendTitle + " ")
	legend := []Series{{Name: "noisy", Color: NoisyColour}, {Name: "denoised", Color: DenoisedColour}}
	if in.Pixels[0].Reference != nil {
		legend = append(legend, Series{Name: "reference", Color: ReferenceColour})
	}
	for _, s := range legend {
		fill(img, image.Rect(x, legendTop+textHeight/2-1, x+20, legendTop+textHeight/2+2), s.Color)
		drawText(img, x+24, legendTop, s.Name, ink)
		x += 24 + textWidth(s.Name+"   ")
	}
	for k, p := range in.Pixels {
		x0 := margin + (k%cols)*(plotWidth+panelGap)
		y0 := plotsTop + (k/cols)*(plotHeight+panelGap)
		linePlot(img, image.Rect(x0, y0, x0+plotWidth, y0+plotHeight),
			fmt.Sprintf("%d: row %d, column %d", k+1, p.Row+1, p.Column+1), in.X, in.XName, spectraSeries(p))
	}
	return img
}

// ColumnSpectrumColour draws the removed band's column-mean spectrum.
var ColumnSpectrumColour = color.RGBA{R: 120, G: 40, B: 160, A: 255}

// columnSpectrumPlot draws s in box: its power in dB over its frequencies
// but 0 (the column means' mean, which noref removes), the period in the
// title.
func columnSpectrumPlot(img *image.RGBA, box image.Rectangle, s *noref.ColumnSpectrum) {
	db := make([]float64, len(s.Power)-1)
	for k, p := range s.Power[1:] {
		db[k] = 10 * math.Log10(p)
	}
	title := "removed col. means (dB), no period"
	if !math.IsNaN(s.Period) {
		title = fmt.Sprintf("removed col. means (dB), period %s", short(s.Period))
	}
	linePlot(img, box, title, s.Frequency[1:], "cycles per column",
		[]Series{{Name: "column means", Values: db, Color: ColumnSpectrumColour}})
}

// spectraSeries are the lines of a pixel's plot, drawn in this order: the
// noisy spectrum under the others, the denoised one on top.
func spectraSeries(p PixelSpectra) []Series {
	s := []Series{{Name: "noisy", Values: p.Noisy, Color: NoisyColour}}
	if p.Reference != nil {
		s = append(s, Series{Name: "reference", Values: p.Reference, Color: ReferenceColour})
	}
	return append(s, Series{Name: "denoised", Values: p.Denoised, Color: DenoisedColour})
}

// markPixel draws a hollow square around (x, y) of panel, clipped to it,
// and the label beside it: right of it, or left near the panel's right
// edge.
func markPixel(img *image.RGBA, panel image.Rectangle, x, y int, label string) {
	x, y = x+panel.Min.X, y+panel.Min.Y
	s := markerSize
	drawLine(img, x-s, y-s, x+s, y-s, markerColour, panel)
	drawLine(img, x+s, y-s, x+s, y+s, markerColour, panel)
	drawLine(img, x+s, y+s, x-s, y+s, markerColour, panel)
	drawLine(img, x-s, y+s, x-s, y-s, markerColour, panel)
	lx := x + s + 2
	if lx+textWidth(label) > panel.Max.X {
		lx = x - s - 2 - textWidth(label)
	}
	drawText(img, lx, y-textHeight/2, label, markerColour)
}

// short prints v with 4 significant digits.
func short(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
