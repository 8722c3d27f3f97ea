// Package vst stabilises the variance of signal-dependent noise, so that a
// denoiser made for one σ can remove it.
//
// A photon-counting sensor's noise has, in every band, the variance
// σ²(x) = a·x + b of the clean value x (the working [0, 255] scale; a the
// gain, b the read-noise variance): y = a·Poisson(x/a) + N(0, b). The
// generalised Anscombe transform (Starck, Murtagh and Bijaoui 1998)
//
//	f(y) = (2/a)·√(a·y + (3/8)·a² + b)    for a > 0,
//	f(y) = y/√b                           for a = 0,
//
// makes that noise nearly Gaussian of variance 1 whatever x, once the
// count x/a is more than a few (f's argument below 0 is taken as 0).
// Denoising f(y) gives an estimate D of E[f(y)], not of f(x); because f is
// concave, the algebraic inverse f⁻¹(D) is biased low, most where counts
// are low. The inverse here is the closed-form approximation of the exact
// unbiased inverse of Mäkitalo and Foi ("Optimal inversion of the
// generalized Anscombe transformation for Poisson-Gaussian noise", IEEE
// TIP 22(1), 2013): with the noise normalised to a = 1 (σ = √b/a),
//
//	I(D) = D²/4 + (1/4)·√(3/2)·D⁻¹ − (11/8)·D⁻² + (5/8)·√(3/2)·D⁻³ − 1/8 − σ²,
//
// clipped at 0, and x = a·I(D). The polynomial part of I is 0 at
// D = 2√(3/8), the transform of a zero count, and negative just below it;
// below it I is taken as 0 (the polynomial turns up again below D ≈ 0.7,
// where no unbiased inverse is defined). For a = 0 the transform is
// linear and its inverse, D·√b, unbiased.
//
// Forward and Inverse transform one band; Transform is the whole cube's
// plan, each band with its own a and b, scaled so the stabilised cube sits
// on the input's range with one noise σ for every band.
package vst

import (
	"fmt"
	"math"

	"tdsc/internal/msi"
)

// sqrt32 is √(3/2), a coefficient of the closed-form inverse.
var sqrt32 = math.Sqrt(1.5)

// zeroCount is 2√(3/8), the transform of a zero count without read
// noise, below which Inverse gives 0.
var zeroCount = 2 * math.Sqrt(3.0/8)

// checkLevel panics unless a and b are finite, at least 0 and not both 0.
func checkLevel(a, b float64) {
	if !(a >= 0) || !(b >= 0) || math.IsInf(a, 1) || math.IsInf(b, 1) || a == 0 && b == 0 {
		panic(fmt.Sprintf("vst: bad noise level a = %g, b = %g (want a, b ≥ 0 finite, not both 0)", a, b))
	}
}

// Forward sets dst[i] to the generalised Anscombe transform f(src[i]) of
// noise of variance a·x + b (see the package comment); NaN stays NaN. dst
// may be src. It panics if the lengths differ, or unless a, b ≥ 0 are
// finite and not both 0.
func Forward(dst, src []float64, a, b float64) {
	checkLevel(a, b)
	if len(dst) != len(src) {
		panic(fmt.Sprintf("vst: destination of %d values, source of %d", len(dst), len(src)))
	}
	if a == 0 {
		inv := 1 / math.Sqrt(b)
		for i, y := range src {
			dst[i] = y * inv
		}
		return
	}
	c := 3.0/8*a*a + b
	for i, y := range src {
		dst[i] = 2 / a * math.Sqrt(max(a*y+c, 0))
	}
}

// Inverse sets dst[i] to the closed-form approximation of the exact
// unbiased inverse of Forward at src[i] (see the package comment): the
// clean value x whose transformed noisy value has the mean src[i]. NaN
// stays NaN. dst may be src. It panics as Forward does.
func Inverse(dst, src []float64, a, b float64) {
	checkLevel(a, b)
	if len(dst) != len(src) {
		panic(fmt.Sprintf("vst: destination of %d values, source of %d", len(dst), len(src)))
	}
	if a == 0 {
		sd := math.Sqrt(b)
		for i, d := range src {
			dst[i] = d * sd
		}
		return
	}
	sigma2 := b / (a * a) // the read-noise variance in counts
	for i, d := range src {
		switch {
		case math.IsNaN(d):
			dst[i] = d
		case d < zeroCount:
			dst[i] = 0
		default:
			r := 1 / d
			v := d*d/4 + r*(sqrt32/4+r*(-11.0/8+r*(5.0/8*sqrt32))) - 1.0/8 - sigma2
			dst[i] = a * max(v, 0)
		}
	}
}

// GaussianRatio is the ratio b/a above which Transform takes a band's
// noise as Gaussian (a = 0): its Poisson part a·x is below 10⁻⁹ of the
// read noise b for x up to 1, and the transform with such an a would lose
// digits (about (b/a)·2⁻⁵² on the working scale) to no purpose.
const GaussianRatio = 1e9

// Transform is the variance-stabilising transform of a cube: band b is
//
//	z = Scale·f_b(y) + Offset[b],
//
// f_b the generalised Anscombe transform with (A[b], B[b]), so that z's
// noise is nearly Gaussian with one standard deviation, Scale, in every
// band. Scale is the σ of i.i.d. noise of the cube's mean noise power,
// √(mean over bands of A[b]·m_b + B[b]) with m_b the noisy band's mean,
// and Offset[b] puts m_b where it was (Scale·f_b(m_b) + Offset[b] = m_b):
// near the mean the stabilised cube is the noisy one, and its noise the
// i.i.d. noise of the same power, so a denoiser's defaults, which depend
// on σ and on the [0, 255] range, see what they would see on that noise.
type Transform struct {
	// A and B are the bands' noise levels σ²(x) = A[b]·x + B[b] (A[b] is
	// 0 for a band taken as Gaussian, see GaussianRatio).
	A, B []float64
	// Scale is the standard deviation of the stabilised noise.
	Scale float64
	// Offset[b] is added to band b's Scale·f_b(y).
	Offset []float64
}

// New returns the transform of the cube noisy with the bands' noise levels
// a[b]·x + b[b] (see Transform). Missing voxels (NaN) are left out of the
// bands' means. It panics if a or b has not one element per band, or
// unless every a[b], b[b] ≥ 0 are finite and not both 0.
func New(noisy *msi.Cube, a, b []float64) *Transform {
	return FromMeans(Means(noisy), a, b)
}

// Means returns the mean of every band of c over its voxels that are not
// NaN (0 for a band without one): the means New takes.
func Means(c *msi.Cube) []float64 {
	means := make([]float64, c.Bands)
	for band := range means {
		means[band] = bandMean(c.Band(band))
	}
	return means
}

// FromMeans returns the transform of a cube whose bands' means are means
// (New's, for a cube read in parts), with the bands' noise levels
// a[b]·x + b[b]. It panics if a or b has not one element per mean, or
// unless every a[b], b[b] ≥ 0 are finite and not both 0.
func FromMeans(means, a, b []float64) *Transform {
	bands := len(means)
	if len(a) != bands || len(b) != bands {
		panic(fmt.Sprintf("vst: %d and %d noise levels for %d bands", len(a), len(b), bands))
	}
	t := &Transform{A: make([]float64, bands), B: append([]float64(nil), b...), Offset: make([]float64, bands)}
	var power float64
	for band := range bands {
		checkLevel(a[band], b[band])
		if a[band]*GaussianRatio > b[band] {
			t.A[band] = a[band]
		}
		power += t.A[band]*max(means[band], 0) + t.B[band]
	}
	t.Scale = math.Sqrt(power / float64(bands))
	if t.Scale == 0 {
		// Only Poisson noise (b = 0) on a cube without signal: any scale
		// will do.
		t.Scale = 1
	}
	for band, m := range means {
		fm := []float64{m}
		Forward(fm, fm, t.A[band], t.B[band])
		t.Offset[band] = m - t.Scale*fm[0]
	}
	return t
}

// bandMean returns the mean of the values of band that are not NaN (0 if
// none is).
func bandMean(band []float64) float64 {
	var sum float64
	var n int
	for _, v := range band {
		if !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Forward sets dst to the stabilised src and returns dst; a nil dst is
// allocated (with src's wavelengths), and dst may be src. NaN stays NaN.
// It panics if dst and src differ in size or src has not len(t.A) bands.
func (t *Transform) Forward(dst, src *msi.Cube) *msi.Cube {
	dst = t.like(dst, src)
	for band := range src.Bands {
		out := dst.Band(band)
		Forward(out, src.Band(band), t.A[band], t.B[band])
		for i, v := range out {
			out[i] = t.Scale*v + t.Offset[band]
		}
	}
	return dst
}

// Inverse sets dst to the unbiased inverse (Inverse) of the stabilised
// and denoised src and returns dst; a nil dst is allocated, and dst may
// be src. NaN stays NaN. It panics as Forward does.
func (t *Transform) Inverse(dst, src *msi.Cube) *msi.Cube {
	dst = t.like(dst, src)
	for band := range src.Bands {
		in, out := src.Band(band), dst.Band(band)
		for i, v := range in {
			out[i] = (v - t.Offset[band]) / t.Scale
		}
		Inverse(out, out, t.A[band], t.B[band])
	}
	return dst
}

// like returns dst, or a new cube of src's size (with its wavelengths)
// when dst is nil, after checking the sizes.
func (t *Transform) like(dst, src *msi.Cube) *msi.Cube {
	if src.Bands != len(t.A) {
		panic(fmt.Sprintf("vst: a transform of %d bands applied to %s", len(t.A), src.Size()))
	}
	if dst == nil {
		dst = msi.NewCube(src.Height, src.Width, src.Bands)
		dst.Wavelengths = append([]float64(nil), src.Wavelengths...)
		return dst
	}
	if !dst.SameSize(src) {
		panic(fmt.Sprintf("vst: destination is %s, source is %s", dst.Size(), src.Size()))
	}
	return dst
}
