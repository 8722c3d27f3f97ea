package metrics

import (
	"fmt"
	"math"
)

// Parameters of the SSIM (Wang et al. 2004, as in scikit-image's
// structural_similarity with gaussian_weights=True).
const (
	ssimSigma  = 1.5
	ssimRadius = 5 // int(3.5·σ + 0.5): scipy truncates the Gaussian at 3.5σ
	ssimWindow = 2*ssimRadius + 1
	ssimK1     = 0.01
	ssimK2     = 0.03
)

// SSIM returns the structural similarity of the height×width row-major band
// x against the reference band ref (Wang, Bovik, Sheikh, Simoncelli 2004):
//
//	SSIM(p) = (2μ_r μ_x + C1)(2σ_rx + C2) / ((μ_r² + μ_x² + C1)(σ_r² + σ_x² + C2))
//
// with C1 = (0.01·255)², C2 = (0.03·255)², and the local means, variances and
// covariance taken with an 11×11 Gaussian window of σ = 1.5 (the sampled
// Gaussian exp(-t²/(2σ²)), t = -5..5, normalised to sum 1, applied separably)
// as population statistics (no n/(n-1) correction). The result is the mean of
// SSIM(p) over the valid interior: the pixels whose whole window lies inside
// the image, i.e. all but a 5-pixel border, and holds no missing (NaN)
// voxel of either band (NaN when there is none). This equals scikit-image's
// structural_similarity(gaussian_weights=True, sigma=1.5,
// use_sample_covariance=False, data_range=255).
//
// It returns an error if the lengths do not match height×width or if the
// image is smaller than the 11×11 window.
func SSIM(ref, x []float64, height, width int) (float64, error) {
	if height < ssimWindow || width < ssimWindow {
		return 0, fmt.Errorf("metrics: SSIM of a %d×%d image: smaller than the %d×%d window",
			height, width, ssimWindow, ssimWindow)
	}
	if len(ref) != height*width || len(x) != height*width {
		return 0, fmt.Errorf("metrics: SSIM of a %d×%d image given bands of %d and %d values",
			height, width, len(ref), len(x))
	}
	return newSSIMWorkspace(width).ssim(ref, x, height, width), nil
}

// gaussianWindow returns the 11 taps of scipy's gaussian_filter kernel for
// σ = 1.5, truncate = 3.5: exp(-t²/(2σ²)) for t = -5..5 divided by their sum.
// The taps are symmetric bit for bit, which the filters rely on.
func gaussianWindow() [ssimWindow]float64 {
	var w [ssimWindow]float64
	sum := 0.0
	for i := range w {
		t := float64(i - ssimRadius)
		w[i] = math.Exp(-0.5 / (ssimSigma * ssimSigma) * t * t)
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// ssimMoments are the five locally filtered images the SSIM needs: r, x, r²,
// x² and r·x.
const ssimMoments = 5

// ssimWorkspace holds the window and the buffers of the SSIM of bands of a
// given width, so that one workspace serves many bands without allocating.
//
// The filter runs row by row: every image row is filtered horizontally (at
// the interior columns only) into a ring of the last 11 filtered rows, and as
// soon as the ring is full the vertical pass produces one interior output
// row, whose SSIM values are summed at once. Only 11 rows of 5 moments are
// ever held.
type ssimWorkspace struct {
	w     [ssimWindow]float64
	width int
	// ring[k][s] is moment k of the horizontally filtered image row held in
	// slot s: image row y lives in slot y mod 11.
	ring [ssimMoments][ssimWindow][]float64
	// out[k] is moment k of the current output row after the vertical pass.
	out [ssimMoments][]float64
}

func newSSIMWorkspace(width int) *ssimWorkspace {
	inner := width - 2*ssimRadius
	ws := &ssimWorkspace{w: gaussianWindow(), width: width}
	buf := make([]float64, (ssimMoments*ssimWindow+ssimMoments)*inner)
	next := func() []float64 {
		s := buf[:inner:inner]
		buf = buf[inner:]
		return s
	}
	for k := range ws.ring {
		for s := range ws.ring[k] {
			ws.ring[k][s] = next()
		}
		ws.out[k] = next()
	}
	return ws
}

// ssim returns the mean SSIM of one band; the caller has checked the sizes.
func (ws *ssimWorkspace) ssim(ref, x []float64, height, width int) float64 {
	if width != ws.width {
		panic(fmt.Sprintf("metrics: SSIM workspace for width %d used on width %d", ws.width, width))
	}
	const (
		c1 = (ssimK1 * Peak) * (ssimK1 * Peak)
		c2 = (ssimK2 * Peak) * (ssimK2 * Peak)
	)
	inner := width - 2*ssimRadius
	total, count := 0.0, 0
	for y := range height {
		ws.filterRow(ref[y*width:(y+1)*width], x[y*width:(y+1)*width], y%ssimWindow)
		if y < ssimWindow-1 {
			continue
		}
		// The ring now holds image rows y-10..y: filter vertically to get
		// output row y-5.
		ws.filterColumns(y + 1)
		mr, mx, mrr, mxx, mrx := ws.out[0], ws.out[1][:inner], ws.out[2][:inner], ws.out[3][:inner], ws.out[4][:inner]
		rowSum := 0.0
		for j, ur := range mr {
			ux := mx[j]
			vr := mrr[j] - ur*ur
			vx := mxx[j] - ux*ux
			vrx := mrx[j] - ur*ux
			// A window that holds a missing (NaN) voxel of either band
			// has a NaN SSIM: it is left out.
			if v := ((2*ur*ux + c1) * (2*vrx + c2)) / ((ur*ur + ux*ux + c1) * (vr + vx + c2)); !math.IsNaN(v) {
				rowSum += v
				count++
			}
		}
		total += rowSum
	}
	return total / float64(count)
}

// filterRow filters image row r of the reference and row x of the input
// horizontally and stores the five moments at the interior columns in ring
// slot s. The window is folded around its centre: w[t] = w[10-t].
func (ws *ssimWorkspace) filterRow(r, x []float64, s int) {
	w := &ws.w
	mr, mx, mrr, mxx, mrx := ws.ring[0][s], ws.ring[1][s], ws.ring[2][s], ws.ring[3][s], ws.ring[4][s]
	mx, mrr, mxx, mrx = mx[:len(mr)], mrr[:len(mr)], mxx[:len(mr)], mrx[:len(mr)]
	for j := range mr {
		rw := r[j : j+ssimWindow]
		xw := x[j : j+ssimWindow]
		a, b := rw[ssimRadius], xw[ssimRadius]
		wc := w[ssimRadius]
		sr, sx, srr, sxx, srx := wc*a, wc*b, wc*a*a, wc*b*b, wc*a*b
		for t := range ssimRadius {
			a0, a1 := rw[t], rw[ssimWindow-1-t]
			b0, b1 := xw[t], xw[ssimWindow-1-t]
			wt := w[t]
			sr += wt * (a0 + a1)
			sx += wt * (b0 + b1)
			srr += wt * (a0*a0 + a1*a1)
			sxx += wt * (b0*b0 + b1*b1)
			srx += wt * (a0*b0 + a1*b1)
		}
		mr[j], mx[j], mrr[j], mxx[j], mrx[j] = sr, sx, srr, sxx, srx
	}
}

// filterColumns filters the ring vertically into ws.out; end is one past the
// newest image row in the ring, so the oldest one sits in slot end mod 11.
// Each output value is formed in one pass over the 11 rows (written out for
// the radius of 5), folded around the centre row like the horizontal pass.
func (ws *ssimWorkspace) filterColumns(end int) {
	w := &ws.w
	var rows [ssimWindow][]float64
	for k := range ws.out {
		out := ws.out[k]
		for t := range rows {
			rows[t] = ws.ring[k][(end+t)%ssimWindow]
		}
		// Slicing every row to len(out) here lets the compiler drop the
		// bounds checks in the loop.
		n := len(out)
		r0, r1, r2, r3, r4, r5 := rows[0][:n], rows[1][:n], rows[2][:n], rows[3][:n], rows[4][:n], rows[5][:n]
		r6, r7, r8, r9, r10 := rows[6][:n], rows[7][:n], rows[8][:n], rows[9][:n], rows[10][:n]
		for j := range out {
			out[j] = w[5]*r5[j] +
				w[0]*(r0[j]+r10[j]) + w[1]*(r1[j]+r9[j]) + w[2]*(r2[j]+r8[j]) +
				w[3]*(r3[j]+r7[j]) + w[4]*(r4[j]+r6[j])
		}
	}
}
