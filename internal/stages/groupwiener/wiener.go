// Package groupwiener filters groups of similar patches by collaborative
// empirical Wiener shrinkage against a pilot estimate: the second stage of
// BM3D (Dabov, Foi, Katkovnik, Egiazarian, IEEE TIP 2007) and BM4D.
//
// A group holds n similar patches (n a power of two) of c channels × p×p
// pixels, element (j, b, y, x) at ((j*c + b)*p + y)*p + x. The transform T
// is separable and orthonormal: the orthonormal 2-D DCT-II of every p×p
// slice, then the orthonormal Haar transform across the n patches. With Ĝ =
// T·G the noisy group's coefficients and P̂ = T·P the pilot's,
//
//	W = P̂² / (P̂² + σ²)   per coefficient
//	X = Tᵀ(W ⊙ Ĝ)
//	ω = 1 / (σ² Σ W²)     the group's aggregation weight
//
// Because T is orthonormal, white noise of standard deviation σ stays white
// with the same σ in every coefficient. A spectral transform is left to the
// caller: applied to the whole cube once (an orthonormal per-pixel linear
// map, which commutes with the averaging of the groups, since a group's
// weight is the same for all its channels), it costs far less than once
// per group member.
//
// Why own code: the transforms are tiny and fixed (p = 6, n = 64), so a
// precomputed p×p DCT matrix applied to rows and columns and an in-place
// Haar butterfly beat a general FFT, and allocate nothing.
package groupwiener

import (
	"fmt"
	"math"
)

// DCTMatrix returns the orthonormal DCT-II matrix of size n, row-major:
// entry (k, t) = a_k cos(π(2t+1)k / 2n), a_0 = √(1/n), a_k = √(2/n).
func DCTMatrix(n int) []float64 {
	m := make([]float64, n*n)
	for k := range n {
		a := math.Sqrt(2 / float64(n))
		if k == 0 {
			a = math.Sqrt(1 / float64(n))
		}
		for t := range n {
			m[k*n+t] = a * math.Cos(math.Pi*float64((2*t+1)*k)/float64(2*n))
		}
	}
	return m
}

// Filter is the plan for groups of n patches of c channels × p×p pixels.
// It is immutable and safe for concurrent use.
type Filter struct {
	n, c, p int
	dct     []float64 // p×p orthonormal DCT-II D
	dctT    []float64 // its transpose, the inverse
	// even and odd are the left halves (3×3, row-major) of the even and
	// odd rows of D when p = 6 (dct2x6).
	even, odd [9]float64
}

// New returns the plan. It is an error if n is not a power of two or a
// size is not positive.
func New(n, p, channels int) (*Filter, error) {
	if n < 1 || n&(n-1) != 0 {
		return nil, fmt.Errorf("wiener: group size %d is not a power of two", n)
	}
	if p < 1 || channels < 1 {
		return nil, fmt.Errorf("wiener: patch %d×%d × %d channels is empty", p, p, channels)
	}
	d := DCTMatrix(p)
	dt := make([]float64, p*p)
	for k := range p {
		for t := range p {
			dt[t*p+k] = d[k*p+t]
		}
	}
	f := &Filter{n: n, c: channels, p: p, dct: d, dctT: dt}
	if p == 6 {
		for j := range 3 {
			for t := range 3 {
				f.even[j*3+t] = d[(2*j)*6+t]
				f.odd[j*3+t] = d[(2*j+1)*6+t]
			}
		}
	}
	return f, nil
}

// Len returns the length of a group: n·c·p².
func (f *Filter) Len() int { return f.n * f.c * f.p * f.p }

// Workspace is the scratch memory of one goroutine.
type Workspace struct {
	pilot []float64
	haar  []float64
	tmp   []float64
}

// NewWorkspace returns a workspace for Apply, Forward and Inverse.
func (f *Filter) NewWorkspace() *Workspace {
	return &Workspace{pilot: make([]float64, f.Len()), haar: make([]float64, f.Len()), tmp: make([]float64, f.p*f.p)}
}

// Apply writes the filtered noisy group into dst (which may be noisy) and
// returns the group's aggregation weight 1/(σ² ΣW²) (ΣW² = 0 counts as 1).
// It panics if a length is not Len or sigma is not positive.
func (f *Filter) Apply(dst, noisy, pilot []float64, sigma float64, ws *Workspace) (weight float64) {
	if len(dst) != f.Len() || len(noisy) != f.Len() || len(pilot) != f.Len() {
		panic(fmt.Sprintf("wiener: Apply: lengths %d, %d, %d for groups of %d", len(dst), len(noisy), len(pilot), f.Len()))
	}
	if !(sigma > 0) {
		panic(fmt.Sprintf("wiener: Apply: σ = %v is not positive", sigma))
	}
	copy(ws.pilot, pilot)
	f.Forward(ws.pilot, ws)
	if &dst[0] != &noisy[0] {
		copy(dst, noisy)
	}
	f.Forward(dst, ws)
	s2 := sigma * sigma
	sumW2 := 0.0
	for i, pv := range ws.pilot {
		p2 := pv * pv
		w := p2 / (p2 + s2)
		dst[i] *= w
		sumW2 += w * w
	}
	f.Inverse(dst, ws)
	if sumW2 == 0 {
		sumW2 = 1
	}
	return 1 / (s2 * sumW2)
}

// Forward transforms the group g in place: the 2-D DCT of every p×p slice,
// then Haar across the patches. It panics if len(g) is not Len.
func (f *Filter) Forward(g []float64, ws *Workspace) {
	if len(g) != f.Len() {
		panic(fmt.Sprintf("wiener: Forward: length %d for groups of %d", len(g), f.Len()))
	}
	pp := f.p * f.p
	for s := 0; s < len(g); s += pp {
		f.dct2(g[s:s+pp], ws.tmp, false)
	}
	f.haar(g, ws.haar, false)
}

// Inverse undoes Forward in place.
func (f *Filter) Inverse(g []float64, ws *Workspace) {
	if len(g) != f.Len() {
		panic(fmt.Sprintf("wiener: Inverse: length %d for groups of %d", len(g), f.Len()))
	}
	f.haar(g, ws.haar, true)
	pp := f.p * f.p
	for s := 0; s < len(g); s += pp {
		f.dct2(g[s:s+pp], ws.tmp, true)
	}
}

// dct2 replaces the p×p slice x by D·x·Dᵀ (or Dᵀ·x·D when inverse), with
// M = D or Dᵀ: tmp = M·x, then x = tmp·Mᵀ.
func (f *Filter) dct2(x, tmp []float64, inverse bool) {
	p := f.p
	m := f.dct
	if inverse {
		m = f.dctT
	}
	if p == 6 {
		if inverse {
			idct2x6((*[36]float64)(x), (*[36]float64)(tmp), &f.even, &f.odd)
		} else {
			dct2x6((*[36]float64)(x), (*[36]float64)(tmp), &f.even, &f.odd)
		}
		return
	}
	for k := range p {
		row := tmp[k*p : (k+1)*p]
		mk := m[k*p : (k+1)*p]
		clear(row)
		for t, mv := range mk {
			src := x[t*p : (t+1)*p]
			for i, v := range src {
				row[i] += mv * v
			}
		}
	}
	for r := range p {
		src := tmp[r*p : (r+1)*p]
		dst := x[r*p : (r+1)*p]
		for k := range p {
			mk := m[k*p : (k+1)*p]
			s := 0.0
			for t, v := range src {
				s += mk[t] * v
			}
			dst[k] = s
		}
	}
}

// dct2x6 is dct2 for the default 6×6 patches, by the even–odd split of
// the DCT-II: row k of D is symmetric about its middle for even k and
// antisymmetric for odd k, so with u_t = x_t + x_{5−t} and v_t = x_t −
// x_{5−t} (t < 3) the even outputs are E·u and the odd ones O·v, E and O
// the 3×3 halves of the even and odd rows: 18 multiplications per 1-D
// transform instead of 36. On arrays of constant size the compiler drops
// the bounds checks and keeps the partial sums in registers.
func dct2x6(x, tmp *[36]float64, e, o *[9]float64) {
	for i := range 6 { // every column of x into the column of tmp
		u0, u1, u2 := x[i]+x[30+i], x[6+i]+x[24+i], x[12+i]+x[18+i]
		v0, v1, v2 := x[i]-x[30+i], x[6+i]-x[24+i], x[12+i]-x[18+i]
		tmp[i] = e[0]*u0 + e[1]*u1 + e[2]*u2
		tmp[12+i] = e[3]*u0 + e[4]*u1 + e[5]*u2
		tmp[24+i] = e[6]*u0 + e[7]*u1 + e[8]*u2
		tmp[6+i] = o[0]*v0 + o[1]*v1 + o[2]*v2
		tmp[18+i] = o[3]*v0 + o[4]*v1 + o[5]*v2
		tmp[30+i] = o[6]*v0 + o[7]*v1 + o[8]*v2
	}
	for r := 0; r < 36; r += 6 { // every row of tmp into the row of x
		u0, u1, u2 := tmp[r]+tmp[r+5], tmp[r+1]+tmp[r+4], tmp[r+2]+tmp[r+3]
		v0, v1, v2 := tmp[r]-tmp[r+5], tmp[r+1]-tmp[r+4], tmp[r+2]-tmp[r+3]
		x[r] = e[0]*u0 + e[1]*u1 + e[2]*u2
		x[r+2] = e[3]*u0 + e[4]*u1 + e[5]*u2
		x[r+4] = e[6]*u0 + e[7]*u1 + e[8]*u2
		x[r+1] = o[0]*v0 + o[1]*v1 + o[2]*v2
		x[r+3] = o[3]*v0 + o[4]*v1 + o[5]*v2
		x[r+5] = o[6]*v0 + o[7]*v1 + o[8]*v2
	}
}

// idct2x6 undoes dct2x6: the inverse 1-D transform x = Dᵀ·X is, with
// a = Eᵀ·(X₀, X₂, X₄) and b = Oᵀ·(X₁, X₃, X₅), x_t = a_t + b_t and
// x_{5−t} = a_t − b_t for t < 3.
func idct2x6(x, tmp *[36]float64, e, o *[9]float64) {
	for i := range 6 {
		x0, x2, x4 := x[i], x[12+i], x[24+i]
		x1, x3, x5 := x[6+i], x[18+i], x[30+i]
		a0, a1, a2 := e[0]*x0+e[3]*x2+e[6]*x4, e[1]*x0+e[4]*x2+e[7]*x4, e[2]*x0+e[5]*x2+e[8]*x4
		b0, b1, b2 := o[0]*x1+o[3]*x3+o[6]*x5, o[1]*x1+o[4]*x3+o[7]*x5, o[2]*x1+o[5]*x3+o[8]*x5
		tmp[i], tmp[30+i] = a0+b0, a0-b0
		tmp[6+i], tmp[24+i] = a1+b1, a1-b1
		tmp[12+i], tmp[18+i] = a2+b2, a2-b2
	}
	for r := 0; r < 36; r += 6 {
		x0, x2, x4 := tmp[r], tmp[r+2], tmp[r+4]
		x1, x3, x5 := tmp[r+1], tmp[r+3], tmp[r+5]
		a0, a1, a2 := e[0]*x0+e[3]*x2+e[6]*x4, e[1]*x0+e[4]*x2+e[7]*x4, e[2]*x0+e[5]*x2+e[8]*x4
		b0, b1, b2 := o[0]*x1+o[3]*x3+o[6]*x5, o[1]*x1+o[4]*x3+o[7]*x5, o[2]*x1+o[5]*x3+o[8]*x5
		x[r], x[r+5] = a0+b0, a0-b0
		x[r+1], x[r+4] = a1+b1, a1-b1
		x[r+2], x[r+3] = a2+b2, a2-b2
	}
}

// haar applies the orthonormal Haar transform across the n patches (or its
// inverse) to every coefficient position at once, patch rows of m = c·p²
// values at a time. At each forward level the first h patches become h/2
// scaled pair sums followed by h/2 scaled pair differences; the inverse runs
// the levels backwards.
func (f *Filter) haar(g, buf []float64, inverse bool) {
	m := f.c * f.p * f.p
	const r = 1 / math.Sqrt2
	level := func(h int) {
		half := h / 2
		for i := range half {
			a, b := g[2*i*m:(2*i+1)*m], g[(2*i+1)*m:(2*i+2)*m]
			if !inverse {
				sum, diff := buf[i*m:(i+1)*m], buf[(half+i)*m:(half+i+1)*m]
				for e, av := range a {
					sum[e] = (av + b[e]) * r
					diff[e] = (av - b[e]) * r
				}
			} else {
				sum, diff := g[i*m:(i+1)*m], g[(half+i)*m:(half+i+1)*m]
				x, y := buf[2*i*m:(2*i+1)*m], buf[(2*i+1)*m:(2*i+2)*m]
				for e, sv := range sum {
					x[e] = (sv + diff[e]) * r
					y[e] = (sv - diff[e]) * r
				}
			}
		}
		copy(g[:h*m], buf[:h*m])
	}
	if !inverse {
		for h := f.n; h > 1; h /= 2 {
			level(h)
		}
		return
	}
	for h := 2; h <= f.n; h *= 2 {
		level(h)
	}
}
