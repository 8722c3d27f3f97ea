package tproduct

import (
	"fmt"
	"math"
)

// Stored returns the number of frequency slices stored for tubes of length
// k: ⌊k/2⌋+1. Real inputs have X̂_{k−ℓ} = conj(X̂_ℓ), so slices ℓ > ⌊k/2⌋
// are never stored.
func Stored(k int) int { return k/2 + 1 }

// Weight returns the multiplicity of stored frequency slice l for tubes of
// length k: 1 for l = 0 (and for l = k/2 when k is even), 2 otherwise. A sum
// over all k frequencies equals the weighted sum over the stored ones.
func Weight(l, k int) float64 {
	if l == 0 || 2*l == k {
		return 1
	}
	return 2
}

// FTensor is the Fourier-domain form of a real M×N×K tensor: the DFT along
// mode 3 of every tube, stored for frequencies ℓ = 0..⌊K/2⌋ only.
//
// Layout: frequency slice ℓ is an M×N complex row-major matrix at
// Data[ℓ*M*N : (ℓ+1)*M*N], so each slice is contiguous and can be handed to
// a GEMM as it is. Slice 0 (and slice K/2 for even K) is real.
type FTensor struct {
	M, N, K int
	Data    []complex128
}

// NewFTensor returns a zero Fourier-domain tensor for an M×N×K real tensor.
// It panics if a dimension is not positive.
func NewFTensor(m, n, k int) *FTensor {
	if m <= 0 || n <= 0 || k <= 0 {
		panic(fmt.Sprintf("tsc: bad tensor size %d×%d×%d", m, n, k))
	}
	return &FTensor{M: m, N: n, K: k, Data: make([]complex128, m*n*Stored(k))}
}

// Slice returns frequency slice l as an M×N row-major matrix aliasing f.Data.
func (f *FTensor) Slice(l int) []complex128 {
	n := f.M * f.N
	return f.Data[l*n : (l+1)*n : (l+1)*n]
}

// Real DFT constants for the hand-written short transforms.
var (
	cos2pi5 = math.Cos(2 * math.Pi / 5)
	cos4pi5 = math.Cos(4 * math.Pi / 5)
	sin2pi5 = math.Sin(2 * math.Pi / 5)
	sin4pi5 = math.Sin(4 * math.Pi / 5)
	sqrt3h  = math.Sqrt(3) / 2
)

// DFT is a plan for the real DFT of length-k tubes, built once and reused
// (like gonum's fourier.NewFFT). A plan holds no scratch space: it is safe
// for concurrent use.
//
// Convention: the forward transform is unnormalised,
// X̂_ℓ = Σ_t x_t e^{−2πiℓt/k}, and the inverse is scaled by 1/k, so that
// it undoes the forward transform. Only ℓ = 0..⌊k/2⌋ are computed.
//
// Internally the plan also works on the split ("half-complex") form of a
// spectrum: k reals ordered Re X̂_0, Re X̂_1, Im X̂_1, Re X̂_2, Im X̂_2, …,
// ending with Re X̂_{k/2} for even k (whose imaginary part, like that of X̂_0,
// is zero). Lengths 1 to 5 use hand-written transforms, even lengths from
// minFFT on whose half has no prime factor above 5 a real FFT (rfft), other
// lengths a real k×k DFT matrix.
//
// The plan is written here rather than taken from go-dsp, which tdsc uses
// for Welch spectra (package noref): go-dsp's fft.FFTReal transforms one
// tube per call, pads a length-5 tube to 16 for Bluestein's algorithm,
// allocates its result and scratch (57 allocations, 4.3 kB a tube) and
// starts goroutines for every transform. On blocks of 64 length-5 tubes it
// took 68–96 µs a tube against the plan's 11–16 ns, about 5000 times as
// long, on a loaded two-core machine, both in one run of
// `go test -run '^$' -bench GoDSPTubes -count 3 ./internal/algebra/tproduct`.
type DFT struct {
	k int
	// fwd and inv are the k×k row-major matrices mapping a tube to its split
	// spectrum and back (inverse scaled by 1/k and weighted by Weight).
	fwd, inv []float64
	// fast is the FFT plan, nil where the matrices are used.
	fast *rfft
}

// minFFT is the shortest tube length transformed by the FFT rather than by
// the DFT matrix. Measured on blocks of 32 and 64 tubes (BenchmarkDFTTubes),
// the FFT already beats the matrix at k = 6 (about 1.5–2×) and wins by
// 3–4× at k = 16 and 4–6× at k = 32; below 6 the hand-written transforms are
// faster than both. Lengths without a plan (odd k, or k/2 with a prime
// factor above 5, e.g. 14 or 17) keep the matrix.
const minFFT = 6

// NewDFT returns a plan for tubes of length k. It panics if k < 1.
func NewDFT(k int) *DFT {
	if k < 1 {
		panic("tsc: DFT length must be positive")
	}
	p := &DFT{k: k, fwd: make([]float64, k*k), inv: make([]float64, k*k)}
	for c := range k {
		l, im := splitComponent(c)
		for t := range k {
			a := 2 * math.Pi * float64(l*t%k) / float64(k)
			if im {
				p.fwd[c*k+t] = -math.Sin(a)
				p.inv[t*k+c] = -Weight(l, k) * math.Sin(a) / float64(k)
			} else {
				p.fwd[c*k+t] = math.Cos(a)
				p.inv[t*k+c] = Weight(l, k) * math.Cos(a) / float64(k)
			}
		}
	}
	if k >= minFFT {
		p.fast = newRFFT(k)
	}
	return p
}

// splitComponent returns the frequency ℓ of component c of a split spectrum
// and whether it is an imaginary part.
func splitComponent(c int) (l int, imag bool) {
	if c == 0 {
		return 0, false
	}
	return (c + 1) / 2, c%2 == 0
}

// SplitOffset returns where frequency slice l starts in a split spectrum of
// tubes of length k with rows tubes per component, and its width: rows for
// the real slices (ℓ = 0, and ℓ = k/2 for even k), 2·rows (real parts, then
// imaginary parts) for the others.
func SplitOffset(l, k, rows int) (off, width int) {
	if l == 0 {
		return 0, rows
	}
	if 2*l == k {
		return (k - 1) * rows, rows
	}
	return (2*l - 1) * rows, 2 * rows
}

// maxStackTube is the longest tube that InverseTube and Forward transform
// through a stack buffer; longer tubes use the DFT matrices directly.
const maxStackTube = 64

// splitToComplex converts a split spectrum of one tube into complex values.
func splitToComplex(dst []complex128, s []float64) {
	k := len(s)
	dst[0] = complex(s[0], 0)
	for l := 1; l < len(dst); l++ {
		if 2*l == k {
			dst[l] = complex(s[k-1], 0)
		} else {
			dst[l] = complex(s[2*l-1], s[2*l])
		}
	}
}

// complexToSplit converts the stored half-spectrum of one tube into split
// form, dropping the imaginary parts of the real slices.
func complexToSplit(s []float64, src []complex128) {
	k := len(s)
	s[0] = real(src[0])
	for l := 1; l < len(src); l++ {
		if 2*l == k {
			s[k-1] = real(src[l])
		} else {
			s[2*l-1], s[2*l] = real(src[l]), imag(src[l])
		}
	}
}

// InverseTube transforms the stored half-spectrum src (len ⌊k/2⌋+1) of a real
// tube back into dst (len k), scaling by 1/k. The imaginary parts of slice 0
// (and slice k/2 for even k) are ignored. It panics if the lengths do not match.
func (p *DFT) InverseTube(dst []float64, src []complex128) {
	k := p.k
	if len(dst) != k || len(src) != Stored(k) {
		panic("tsc: DFT tube length mismatch")
	}
	if k > maxStackTube {
		for t := range dst {
			row := p.inv[t*k : (t+1)*k]
			v := row[0] * real(src[0])
			for l := 1; l < len(src); l++ {
				if 2*l == k {
					v += row[k-1] * real(src[l])
				} else {
					v += row[2*l-1]*real(src[l]) + row[2*l]*imag(src[l])
				}
			}
			dst[t] = v
		}
		return
	}
	var s [maxStackTube]float64
	complexToSplit(s[:k], src)
	p.InverseRows(dst, 1, s[:k], 1, 1)
}

// Forward sets dst to the DFT along mode 3 of src. It panics if the sizes
// differ or the plan's length is not src.K.
func (p *DFT) Forward(dst *FTensor, src *Tensor) {
	if dst.M != src.M || dst.N != src.N || dst.K != src.K || src.K != p.k {
		panic("tsc: DFT size mismatch")
	}
	m, n, k := src.M, src.N, src.K
	if k > maxStackTube {
		p.forwardDirect(dst, src)
		return
	}
	var s [maxStackTube]float64
	var c [maxStackTube/2 + 1]complex128
	spec := c[:Stored(k)]
	for j := range n {
		col := src.Lateral(j)
		for i := range m {
			p.ForwardRows(s[:k], 1, col[i:], m, 1)
			splitToComplex(spec, s[:k])
			for l, z := range spec {
				dst.Data[(l*m+i)*n+j] = z
			}
		}
	}
}

// forwardDirect is Forward for tubes too long for the stack buffers.
func (p *DFT) forwardDirect(dst *FTensor, src *Tensor) {
	m, n, k := src.M, src.N, src.K
	comp := func(c int, col []float64, i int) float64 {
		row := p.fwd[c*k : (c+1)*k]
		var v float64
		for t, f := range row {
			v += f * col[t*m+i]
		}
		return v
	}
	for j := range n {
		col := src.Lateral(j)
		for i := range m {
			for l := range Stored(k) {
				var z complex128
				switch {
				case l == 0:
					z = complex(comp(0, col, i), 0)
				case 2*l == k:
					z = complex(comp(k-1, col, i), 0)
				default:
					z = complex(comp(2*l-1, col, i), comp(2*l, col, i))
				}
				dst.Data[(l*m+i)*n+j] = z
			}
		}
	}
}

// forwardRows transforms rows tubes at once into split spectra. Element t of
// tube q is src[t*sstride+q]; component c (split order) of the spectrum of
// tube q is written to dst[c*dstride+q]. dst and src must not overlap.
func (p *DFT) ForwardRows(dst []float64, dstride int, src []float64, sstride, rows int) {
	switch p.k {
	case 1:
		copy(dst[:rows], src[:rows])
	case 2:
		y0, y1 := src[:rows], src[sstride:sstride+rows]
		d0, d1 := dst[:rows], dst[dstride:dstride+rows]
		for q, a := range y0 {
			b := y1[q]
			d0[q], d1[q] = a+b, a-b
		}
	case 3:
		y0, y1, y2 := src[:rows], src[sstride:sstride+rows], src[2*sstride:2*sstride+rows]
		d0, d1, d2 := dst[:rows], dst[dstride:dstride+rows], dst[2*dstride:2*dstride+rows]
		for q, a := range y0 {
			s, d := y1[q]+y2[q], y1[q]-y2[q]
			d0[q] = a + s
			d1[q] = a - 0.5*s
			d2[q] = -sqrt3h * d
		}
	case 4:
		y0, y1 := src[:rows], src[sstride:sstride+rows]
		y2, y3 := src[2*sstride:2*sstride+rows], src[3*sstride:3*sstride+rows]
		d0, d1 := dst[:rows], dst[dstride:dstride+rows]
		d2, d3 := dst[2*dstride:2*dstride+rows], dst[3*dstride:3*dstride+rows]
		for q, a := range y0 {
			b, c, d := y1[q], y2[q], y3[q]
			ac, bd := a+c, b+d
			d0[q] = ac + bd
			d1[q] = a - c
			d2[q] = d - b
			d3[q] = ac - bd
		}
	case 5:
		y0, y1 := src[:rows], src[sstride:sstride+rows]
		y2, y3 := src[2*sstride:2*sstride+rows], src[3*sstride:3*sstride+rows]
		y4 := src[4*sstride : 4*sstride+rows]
		d0, d1 := dst[:rows], dst[dstride:dstride+rows]
		d2, d3 := dst[2*dstride:2*dstride+rows], dst[3*dstride:3*dstride+rows]
		d4 := dst[4*dstride : 4*dstride+rows]
		c1, c2, s1, s2 := cos2pi5, cos4pi5, sin2pi5, sin4pi5
		for q, x0 := range y0 {
			x1, x2, x3, x4 := y1[q], y2[q], y3[q], y4[q]
			a1, b1 := x1+x4, x1-x4
			a2, b2 := x2+x3, x2-x3
			d0[q] = x0 + a1 + a2
			d1[q] = x0 + c1*a1 + c2*a2
			d2[q] = -(s1*b1 + s2*b2)
			d3[q] = x0 + c2*a1 + c1*a2
			d4[q] = s1*b2 - s2*b1
		}
	default:
		if p.fast != nil {
			p.fast.forward(dst, dstride, src, sstride, rows)
			return
		}
		applyRows(dst, dstride, p.fwd, src, sstride, p.k, rows)
	}
}

// InverseRows transforms rows split spectra back into tubes (scaled by 1/k):
// component c of spectrum q is src[c*sstride+q]; element t of tube q is
// written to dst[t*dstride+q]. dst and src must not overlap.
func (p *DFT) InverseRows(dst []float64, dstride int, src []float64, sstride, rows int) {
	switch p.k {
	case 1:
		copy(dst[:rows], src[:rows])
	case 2:
		s0, s1 := src[:rows], src[sstride:sstride+rows]
		y0, y1 := dst[:rows], dst[dstride:dstride+rows]
		for q, a := range s0 {
			b := s1[q]
			y0[q], y1[q] = 0.5*(a+b), 0.5*(a-b)
		}
	case 3:
		s0, s1, s2 := src[:rows], src[sstride:sstride+rows], src[2*sstride:2*sstride+rows]
		y0, y1, y2 := dst[:rows], dst[dstride:dstride+rows], dst[2*dstride:2*dstride+rows]
		const third = 1.0 / 3
		for q, x0 := range s0 {
			re, im := s1[q], s2[q]
			y0[q] = third * (x0 + 2*re)
			u, v := x0-re, 2*sqrt3h*im
			y1[q] = third * (u - v)
			y2[q] = third * (u + v)
		}
	case 4:
		s0, s1 := src[:rows], src[sstride:sstride+rows]
		s2, s3 := src[2*sstride:2*sstride+rows], src[3*sstride:3*sstride+rows]
		y0, y1 := dst[:rows], dst[dstride:dstride+rows]
		y2, y3 := dst[2*dstride:2*dstride+rows], dst[3*dstride:3*dstride+rows]
		for q, x0 := range s0 {
			re, im, x2 := s1[q], s2[q], s3[q]
			e, o := x0+x2, x0-x2
			y0[q] = 0.25 * (e + 2*re)
			y1[q] = 0.25 * (o - 2*im)
			y2[q] = 0.25 * (e - 2*re)
			y3[q] = 0.25 * (o + 2*im)
		}
	case 5:
		z0, z1 := src[:rows], src[sstride:sstride+rows]
		z2, z3 := src[2*sstride:2*sstride+rows], src[3*sstride:3*sstride+rows]
		z4 := src[4*sstride : 4*sstride+rows]
		y0, y1 := dst[:rows], dst[dstride:dstride+rows]
		y2, y3 := dst[2*dstride:2*dstride+rows], dst[3*dstride:3*dstride+rows]
		y4 := dst[4*dstride : 4*dstride+rows]
		// y_t = (X̂_0 + 2 Re(X̂_1 e^{2πit/5}) + 2 Re(X̂_2 e^{4πit/5}))/5.
		const fifth = 0.2
		c1, c2 := 0.4*cos2pi5, 0.4*cos4pi5
		s1, s2 := 0.4*sin2pi5, 0.4*sin4pi5
		for q, x0 := range z0 {
			r1, i1, r2, i2 := z1[q], z2[q], z3[q], z4[q]
			x0 *= fifth
			p1, q1 := c1*r1+c2*r2, s1*i1+s2*i2
			p2, q2 := c2*r1+c1*r2, s2*i1-s1*i2
			y0[q] = x0 + 0.4*(r1+r2)
			y1[q] = x0 + p1 - q1
			y4[q] = x0 + p1 + q1
			y2[q] = x0 + p2 - q2
			y3[q] = x0 + p2 + q2
		}
	default:
		if p.fast != nil {
			p.fast.inverse(dst, dstride, src, sstride, rows)
			return
		}
		applyRows(dst, dstride, p.inv, src, sstride, p.k, rows)
	}
}

// applyRows sets dst[c*dstride+q] = Σ_t mat[c*k+t]·src[t*sstride+q] for
// c, t < k and q < rows: a k×k matrix applied to rows vectors at once, four
// of them per pass so each loaded coefficient is used four times.
func applyRows(dst []float64, dstride int, mat []float64, src []float64, sstride, k, rows int) {
	for c := range k {
		row := mat[c*k : (c+1)*k]
		out := dst[c*dstride : c*dstride+rows]
		q := 0
		for ; q+4 <= rows; q += 4 {
			var a0, a1, a2, a3 float64
			for t, f := range row {
				v := src[t*sstride+q : t*sstride+q+4 : t*sstride+q+4]
				a0 += f * v[0]
				a1 += f * v[1]
				a2 += f * v[2]
				a3 += f * v[3]
			}
			o := out[q : q+4 : q+4]
			o[0], o[1], o[2], o[3] = a0, a1, a2, a3
		}
		for ; q < rows; q++ {
			var a float64
			for t, f := range row {
				a += f * src[t*sstride+q]
			}
			out[q] = a
		}
	}
}
