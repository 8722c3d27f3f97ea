package gray

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// WhitenF0 is the cut-off f0 of the whitening filter, in cycles per pixel
// (0.8 of the Nyquist frequency 0.5). Olshausen and Field's filter uses
// f0 = 0.4·N cycles per image for N×N images, the same frequency.
const WhitenF0 = 0.4

// WhitenGain returns the zero-phase whitening filter at spatial frequency f
// (cycles per pixel, f ≥ 0): R(f) = f·exp(−(f/f0)⁴) with f0 = WhitenF0.
// The factor f undoes the roughly 1/f amplitude spectrum of natural images;
// the exp(−(f/f0)⁴) roll-off keeps the frequencies near Nyquist, where
// noise and aliasing dominate, from being amplified the most.
func WhitenGain(f float64) float64 {
	r := f / WhitenF0
	return f * math.Exp(-r*r*r*r)
}

// ErrFlat is returned by Whiten for an image whose whitened pixels are
// all zero (a constant image): it has no variance to normalise.
var ErrFlat = errors.New("the image is constant: whitening leaves nothing")

// Whiten returns the image whitened the way the sparse-coding literature
// prepares natural images (Olshausen & Field 1996/97; Lee, Battle, Raina,
// Ng 2006), so that dictionary learning sees edges rather than the large
// smooth gradients that dominate unwhitened patches:
//
//  1. the 2-D DFT of the whole image, X(u, v), u = 0..H−1 (rows),
//     v = 0..W−1 (columns), is multiplied by R(f) of WhitenGain, where
//     f = √(fy² + fx²) cycles per pixel with fy = ū/H, fx = v̄/W and ū, v̄
//     the signed frequency indices (u for u ≤ H/2, u−H above; likewise v):
//     a real, radially symmetric gain, so the filter has zero phase and the
//     result is real (its imaginary part, round-off only, is dropped);
//  2. the result, whose mean is zero because R(0) = 0, is divided by its
//     standard deviation over all pixels (population, 1/(H·W)): the
//     whitened image has zero mean and unit variance.
//
// The DFT treats the image as periodic, so pixels within a few of the
// border see the opposite border. The result does not depend on the
// intensity scale or offset of img. It returns ErrFlat if img is constant.
func Whiten(img *Image) (*Image, error) {
	h, w := img.Height, img.Width
	c := make([]complex128, h*w)
	for i, v := range img.Pix {
		c[i] = complex(v, 0)
	}
	rows, cols := fourier.NewCmplxFFT(w), fourier.NewCmplxFFT(h)
	col := make([]complex128, h)
	// transform applies the 1-D transform of every row, then of every
	// column: a separable 2-D DFT (forward) or unnormalised inverse.
	transform := func(forward bool) {
		for y := range h {
			r := c[y*w : (y+1)*w]
			if forward {
				rows.Coefficients(r, r)
			} else {
				rows.Sequence(r, r)
			}
		}
		for x := range w {
			for y := range h {
				col[y] = c[y*w+x]
			}
			if forward {
				cols.Coefficients(col, col)
			} else {
				cols.Sequence(col, col)
			}
			for y := range h {
				c[y*w+x] = col[y]
			}
		}
	}
	transform(true)
	for u := range h {
		fy := float64(signedFreq(u, h)) / float64(h)
		for v := range w {
			fx := float64(signedFreq(v, w)) / float64(w)
			c[u*w+v] *= complex(WhitenGain(math.Hypot(fy, fx)), 0)
		}
	}
	transform(false)

	// Sequence is unnormalised: the inverse 2-D DFT is 1/(H·W) of it.
	n := float64(h * w)
	out := &Image{Height: h, Width: w, Pix: make([]float64, h*w)}
	var sum, sq, peak float64
	for i, v := range c {
		out.Pix[i] = real(v) / n
		sum += out.Pix[i]
		peak = max(peak, math.Abs(img.Pix[i]))
	}
	mean := sum / n
	for i := range out.Pix {
		out.Pix[i] -= mean // removes round-off only: R(0) = 0
		sq += out.Pix[i] * out.Pix[i]
	}
	sd := math.Sqrt(sq / n)
	// A constant image filters to round-off, about 1e−16 of its level;
	// one 16-bit step in one pixel of a 512×512 image still leaves about
	// 1e−8 of full scale.
	if !(sd > 1e-11*peak) {
		return nil, ErrFlat
	}
	for i := range out.Pix {
		out.Pix[i] /= sd
	}
	return out, nil
}

// signedFreq returns the signed frequency index of DFT coefficient i of n:
// i for i ≤ n/2, i−n above (the Nyquist index n/2 of an even n counts as
// +n/2; the gain depends only on |f|, so the sign there does not matter).
func signedFreq(i, n int) int {
	if i <= n/2 {
		return i
	}
	return i - n
}
