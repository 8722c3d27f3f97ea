package tsc

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

// DFT is a plan for the real DFT of length-k tubes, built once and reused
// (like gonum's fourier.NewFFT).
//
// Convention: the forward transform is unnormalised,
// X̂_ℓ = Σ_t x_t e^{−2πiℓt/k}, and the inverse is scaled by 1/k, so
// Inverse(Forward(x)) = x. Only ℓ = 0..⌊k/2⌋ are computed.
type DFT struct {
	k        int
	cos, sin []float64 // cos/sin(2π·(ℓt mod k)/k) at [ℓ*k+t]
}

// NewDFT returns a plan for tubes of length k. It panics if k < 1.
func NewDFT(k int) *DFT {
	if k < 1 {
		panic("tsc: DFT length must be positive")
	}
	s := Stored(k)
	p := &DFT{k: k, cos: make([]float64, s*k), sin: make([]float64, s*k)}
	for l := 0; l < s; l++ {
		for t := 0; t < k; t++ {
			a := 2 * math.Pi * float64(l*t%k) / float64(k)
			p.cos[l*k+t], p.sin[l*k+t] = math.Cos(a), math.Sin(a)
		}
	}
	return p
}

// Len returns the tube length of the plan.
func (p *DFT) Len() int { return p.k }

// Tube transforms one real tube x (len k) into dst (len ⌊k/2⌋+1).
// It panics if the lengths do not match.
func (p *DFT) Tube(dst []complex128, x []float64) {
	k := p.k
	if len(x) != k || len(dst) != Stored(k) {
		panic("tsc: DFT tube length mismatch")
	}
	for l := range dst {
		c, s := p.cos[l*k:(l+1)*k], p.sin[l*k:(l+1)*k]
		var re, im float64
		for t, v := range x {
			re += v * c[t]
			im -= v * s[t]
		}
		dst[l] = complex(re, im)
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
	inv := 1 / float64(k)
	for t := range dst {
		var v float64
		for l, z := range src {
			// Re(z·e^{+iθ}) = Re z·cos θ − Im z·sin θ.
			v += Weight(l, k) * (real(z)*p.cos[l*k+t] - imag(z)*p.sin[l*k+t])
		}
		dst[t] = v * inv
	}
}

// Forward sets dst to the DFT along mode 3 of src. It panics if the sizes
// differ or the plan's length is not src.K.
func (p *DFT) Forward(dst *FTensor, src *Tensor) {
	if dst.M != src.M || dst.N != src.N || dst.K != src.K || src.K != p.k {
		panic("tsc: DFT size mismatch")
	}
	m, n, k := src.M, src.N, src.K
	s := Stored(k)
	for j := 0; j < n; j++ {
		col := src.Lateral(j)
		for i := 0; i < m; i++ {
			for l := 0; l < s; l++ {
				c, sn := p.cos[l*k:(l+1)*k], p.sin[l*k:(l+1)*k]
				var re, im float64
				for t := 0; t < k; t++ {
					v := col[t*m+i]
					re += v * c[t]
					im -= v * sn[t]
				}
				dst.Data[(l*m+i)*n+j] = complex(re, im)
			}
		}
	}
}

// Inverse sets dst to the inverse DFT along mode 3 of src (scaled by 1/k).
// It panics if the sizes differ or the plan's length is not src.K.
func (p *DFT) Inverse(dst *Tensor, src *FTensor) {
	if dst.M != src.M || dst.N != src.N || dst.K != src.K || src.K != p.k {
		panic("tsc: DFT size mismatch")
	}
	m, n, k := src.M, src.N, src.K
	s := Stored(k)
	inv := 1 / float64(k)
	for j := 0; j < n; j++ {
		col := dst.Lateral(j)
		for i := 0; i < m; i++ {
			for t := 0; t < k; t++ {
				var v float64
				for l := 0; l < s; l++ {
					z := src.Data[(l*m+i)*n+j]
					v += Weight(l, k) * (real(z)*p.cos[l*k+t] - imag(z)*p.sin[l*k+t])
				}
				col[t*m+i] = v * inv
			}
		}
	}
}
