package tproduct

import "math"

// rfft is the fast real DFT of even length k = 2h used by DFT.ForwardRows
// and DFT.InverseRows: a tube x of length k is packed into the complex
// sequence z_j = x_{2j} + i·x_{2j+1} of length h, whose complex DFT Z is
// computed by a mixed-radix (4, 2, 3, 5) decimation-in-time FFT, and the
// half spectrum of x follows from
//
//	X̂_ℓ = E_ℓ + e^{−2πiℓ/k} O_ℓ,  E_ℓ = (Z_ℓ + conj Z_{h−ℓ})/2,  O_ℓ = (Z_ℓ − conj Z_{h−ℓ})/(2i),
//
// which costs O(k log k) instead of the k² of the DFT matrix. The inverse
// runs the same steps backwards. Conventions are those of DFT: forward
// unnormalised, inverse scaled by 1/k, spectra in split order.
//
// Like the matrix path, every loop runs across the rows tubes of a block at
// once (the tubes are the columns of a k×rows matrix with a row stride), so
// the inner loops are long, unit-stride and free of bounds checks, and the
// transform works in place in dst without scratch space: a plan is
// read-only after construction and safe for concurrent use. The order of the
// floating-point operations is fixed by the plan, so results are
// deterministic.
type rfft struct {
	k, h int
	// perm[P] is the index j of the element z_j that the decimation in time
	// expects at position P before the first stage (a mixed-radix digit
	// reversal); pos is its inverse.
	perm, pos []int
	stages    []fftStage
	// fre[u], fim[u] are the split components holding Re Z_u and Im Z_u
	// during the forward transform: 2u−1 and 2u, and 0 and k−1 for u = 0.
	// Z_u then already sits where X̂_u (and X̂_0, X̂_h) belong, so the
	// final untangling step works in place. The inverse keeps Re z_j and
	// Im z_j in ire[j] = 2j and iim[j] = 2j+1, where the time-domain tube
	// wants them.
	fre, fim, ire, iim []int
	// cs[ℓ] = cos(2πℓ/k), sn[ℓ] = sin(2πℓ/k) for ℓ ≤ h/2.
	cs, sn []float64
}

// fftStage is one pass of the decimation in time: radix p, butterflies over
// blocks of length p·m combining p transforms of length m. tw holds, for
// u = 1..m−1 and r = 1..p−1, cos and sin of 2πru/(p·m) at
// tw[2((u−1)(p−1)+r−1)].
type fftStage struct {
	p, m int
	tw   []float64
}

// fftRadices are the butterflies rfft has, in the order they are split off:
// radix 4 first, as it needs no multiplications beyond its twiddles and
// so costs less than two radix-2 stages.
var fftRadices = []int{4, 2, 3, 5}

// fftFactors splits h into the radices of fftRadices, outermost stage first,
// and reports whether it could (h has no prime factor above 5).
func fftFactors(h int) ([]int, bool) {
	var f []int
	for _, p := range fftRadices {
		for h%p == 0 {
			f = append(f, p)
			h /= p
		}
	}
	return f, h == 1
}

// newRFFT returns the plan for length k, or nil when k is odd or k/2 has a
// prime factor above 5.
func newRFFT(k int) *rfft {
	if k < 2 || k%2 != 0 {
		return nil
	}
	h := k / 2
	factors, ok := fftFactors(h)
	if !ok {
		return nil
	}
	f := &rfft{k: k, h: h, perm: make([]int, h), pos: make([]int, h),
		fre: make([]int, h), fim: make([]int, h), ire: make([]int, h), iim: make([]int, h)}
	// Digit reversal: the outermost radix p splits z into the p
	// subsequences z_{pj+r}, stored one after another, each ordered
	// recursively by the remaining radices.
	n := 1
	for i := len(factors) - 1; i >= 0; i-- {
		p := factors[i]
		for r := p - 1; r >= 0; r-- {
			for q := range n {
				f.perm[r*n+q] = p*f.perm[q] + r
			}
		}
		n *= p
	}
	for P, j := range f.perm {
		f.pos[j] = P
	}
	// Stages run innermost first.
	m := 1
	for i := len(factors) - 1; i >= 0; i-- {
		p := factors[i]
		st := fftStage{p: p, m: m, tw: make([]float64, 0, 2*(m-1)*(p-1))}
		for u := 1; u < m; u++ {
			for r := 1; r < p; r++ {
				a := 2 * math.Pi * float64(r*u) / float64(p*m)
				st.tw = append(st.tw, math.Cos(a), math.Sin(a))
			}
		}
		f.stages = append(f.stages, st)
		m *= p
	}
	f.fre[0], f.fim[0] = 0, k-1
	for u := 1; u < h; u++ {
		f.fre[u], f.fim[u] = 2*u-1, 2*u
	}
	for u := range h {
		f.ire[u], f.iim[u] = 2*u, 2*u+1
	}
	for l := 0; 2*l <= h; l++ {
		a := 2 * math.Pi * float64(l) / float64(k)
		f.cs = append(f.cs, math.Cos(a))
		f.sn = append(f.sn, math.Sin(a))
	}
	return f
}

// forward is DFT.ForwardRows for the plan's length.
func (f *rfft) forward(dst []float64, dstride int, src []float64, sstride, rows int) {
	h := f.h
	// Load z in digit-reversed order.
	for P, j := range f.perm {
		copy(dst[f.fre[P]*dstride:f.fre[P]*dstride+rows], src[2*j*sstride:2*j*sstride+rows])
		copy(dst[f.fim[P]*dstride:f.fim[P]*dstride+rows], src[(2*j+1)*sstride:(2*j+1)*sstride+rows])
	}
	f.passes(dst, dstride, rows, f.fre, f.fim, -1)
	// Untangle Z into the half spectrum of x, in place.
	x0, xh := vec(dst, 0, dstride, rows), vec(dst, f.k-1, dstride, rows)
	xh = xh[:len(x0)]
	for q, a := range x0 {
		b := xh[q]
		x0[q], xh[q] = a+b, a-b
	}
	for l := 1; 2*l < h; l++ {
		zr, zi := vec(dst, 2*l-1, dstride, rows), vec(dst, 2*l, dstride, rows)
		yr, yi := vec(dst, 2*(h-l)-1, dstride, rows), vec(dst, 2*(h-l), dstride, rows)
		zi, yr, yi = zi[:len(zr)], yr[:len(zr)], yi[:len(zr)]
		c, s := f.cs[l], f.sn[l]
		for q := range zr {
			er, ei := 0.5*(zr[q]+yr[q]), 0.5*(zi[q]-yi[q])
			or, oi := 0.5*(zi[q]+yi[q]), 0.5*(yr[q]-zr[q])
			tr, ti := c*or+s*oi, c*oi-s*or
			zr[q], zi[q] = er+tr, ei+ti
			yr[q], yi[q] = er-tr, ti-ei
		}
	}
	if h%2 == 0 {
		// X̂_{h/2} = conj Z_{h/2}.
		zi := vec(dst, h, dstride, rows)
		for q, v := range zi {
			zi[q] = -v
		}
	}
}

// inverse is DFT.InverseRows for the plan's length.
func (f *rfft) inverse(dst []float64, dstride int, src []float64, sstride, rows int) {
	h, k := f.h, f.k
	// Tangle the half spectrum into Z/h, stored in digit-reversed order. The factor 1/k is the 1/2 of
	// E and O times the 1/h of the inverse complex DFT.
	sc := 1 / float64(k)
	{
		x0, xh := vec(src, 0, sstride, rows), vec(src, k-1, sstride, rows)
		P := f.pos[0]
		zr, zi := vec(dst, f.ire[P], dstride, rows), vec(dst, f.iim[P], dstride, rows)
		xh, zr, zi = xh[:len(x0)], zr[:len(x0)], zi[:len(x0)]
		for q, a := range x0 {
			b := xh[q]
			zr[q], zi[q] = sc*(a+b), sc*(a-b)
		}
	}
	for l := 1; 2*l < h; l++ {
		xr, xi := vec(src, 2*l-1, sstride, rows), vec(src, 2*l, sstride, rows)
		yr, yi := vec(src, 2*(h-l)-1, sstride, rows), vec(src, 2*(h-l), sstride, rows)
		P, R := f.pos[l], f.pos[h-l]
		zr, zi := vec(dst, f.ire[P], dstride, rows), vec(dst, f.iim[P], dstride, rows)
		wr, wi := vec(dst, f.ire[R], dstride, rows), vec(dst, f.iim[R], dstride, rows)
		n := len(xr)
		xi, yr, yi, zr, zi, wr, wi = xi[:n], yr[:n], yi[:n], zr[:n], zi[:n], wr[:n], wi[:n]
		c, s := f.cs[l], f.sn[l]
		for q := range xr {
			er, ei := sc*(xr[q]+yr[q]), sc*(xi[q]-yi[q])
			tr, ti := sc*(xr[q]-yr[q]), sc*(xi[q]+yi[q])
			or, oi := c*tr-s*ti, c*ti+s*tr
			zr[q], zi[q] = er-oi, ei+or
			wr[q], wi[q] = er+oi, or-ei
		}
	}
	if h%2 == 0 {
		l := h / 2
		xr, xi := vec(src, 2*l-1, sstride, rows), vec(src, 2*l, sstride, rows)
		P := f.pos[l]
		zr, zi := vec(dst, f.ire[P], dstride, rows), vec(dst, f.iim[P], dstride, rows)
		xi, zr, zi = xi[:len(xr)], zr[:len(xr)], zi[:len(xr)]
		for q := range xr {
			zr[q], zi[q] = 2*sc*xr[q], -2*sc*xi[q]
		}
	}
	f.passes(dst, dstride, rows, f.ire, f.iim, 1)
}

// vec returns the rows values of component c of a block with stride.
func vec(a []float64, c, stride, rows int) []float64 {
	return a[c*stride : c*stride+rows : c*stride+rows]
}

// passes runs the stages of the complex FFT in place: Re and Im of position
// P are the components re[P] and im[P]. The input is in digit-reversed
// order, the output in natural order. sgn is the sign of the exponent: −1
// forward, +1 for the (unnormalised) inverse.
func (f *rfft) passes(a []float64, stride, rows int, re, im []int, sgn float64) {
	var vr, vi [5][]float64
	for _, st := range f.stages {
		p, m := st.p, st.m
		for b := 0; b < f.h; b += p * m {
			for u := range m {
				for r := range p {
					P := b + r*m + u
					vr[r], vi[r] = vec(a, re[P], stride, rows), vec(a, im[P], stride, rows)
				}
				if u > 0 {
					tw := st.tw[2*(u-1)*(p-1) : 2*u*(p-1)]
					for r := 1; r < p; r++ {
						rotate(vr[r], vi[r], tw[2*r-2], sgn*tw[2*r-1])
					}
				}
				switch p {
				case 2:
					bfly2(vr[0], vi[0], vr[1], vi[1])
				case 3:
					bfly3(vr[0], vi[0], vr[1], vi[1], vr[2], vi[2], sgn)
				case 4:
					bfly4(vr[0], vi[0], vr[1], vi[1], vr[2], vi[2], vr[3], vi[3], sgn)
				case 5:
					bfly5(vr[0], vi[0], vr[1], vi[1], vr[2], vi[2], vr[3], vi[3], vr[4], vi[4], sgn)
				}
			}
		}
	}
}

// rotate multiplies the complex vector (re, im) by c + i·s.
func rotate(re, im []float64, c, s float64) {
	im = im[:len(re)]
	for q, x := range re {
		y := im[q]
		re[q], im[q] = c*x-s*y, c*y+s*x
	}
}

// bfly2 is the in-place 2-point DFT of the complex vectors a0, a1.
func bfly2(r0, i0, r1, i1 []float64) {
	i0, r1, i1 = i0[:len(r0)], r1[:len(r0)], i1[:len(r0)]
	for q, x := range r0 {
		y, u, v := i0[q], r1[q], i1[q]
		r0[q], i0[q] = x+u, y+v
		r1[q], i1[q] = x-u, y-v
	}
}

// Constants of the 3- and 5-point butterflies.
var (
	bf5c1 = math.Cos(2 * math.Pi / 5)
	bf5c2 = math.Cos(4 * math.Pi / 5)
	bf5s1 = math.Sin(2 * math.Pi / 5)
	bf5s2 = math.Sin(4 * math.Pi / 5)
)

// bfly3 is the in-place 3-point DFT with exponent sign sgn.
func bfly3(r0, i0, r1, i1, r2, i2 []float64, sgn float64) {
	n := len(r0)
	i0, r1, i1, r2, i2 = i0[:n], r1[:n], i1[:n], r2[:n], i2[:n]
	c := sgn * sqrt3h
	for q, x0 := range r0 {
		y0 := i0[q]
		sr, si := r1[q]+r2[q], i1[q]+i2[q]
		dr, di := c*(r1[q]-r2[q]), c*(i1[q]-i2[q])
		mr, mi := x0-0.5*sr, y0-0.5*si
		r0[q], i0[q] = x0+sr, y0+si
		r1[q], i1[q] = mr-di, mi+dr
		r2[q], i2[q] = mr+di, mi-dr
	}
}

// bfly4 is the in-place 4-point DFT with exponent sign sgn.
func bfly4(r0, i0, r1, i1, r2, i2, r3, i3 []float64, sgn float64) {
	n := len(r0)
	i0, r1, i1, r2, i2, r3, i3 = i0[:n], r1[:n], i1[:n], r2[:n], i2[:n], r3[:n], i3[:n]
	for q, x0 := range r0 {
		ar, ai := x0+r2[q], i0[q]+i2[q]
		br, bi := x0-r2[q], i0[q]-i2[q]
		cr, ci := r1[q]+r3[q], i1[q]+i3[q]
		dr, di := sgn*(r1[q]-r3[q]), sgn*(i1[q]-i3[q])
		r0[q], i0[q] = ar+cr, ai+ci
		r2[q], i2[q] = ar-cr, ai-ci
		r1[q], i1[q] = br-di, bi+dr
		r3[q], i3[q] = br+di, bi-dr
	}
}

// bfly5 is the in-place 5-point DFT with exponent sign sgn.
func bfly5(r0, i0, r1, i1, r2, i2, r3, i3, r4, i4 []float64, sgn float64) {
	n := len(r0)
	i0, r1, i1, r2, i2 = i0[:n], r1[:n], i1[:n], r2[:n], i2[:n]
	r3, i3, r4, i4 = r3[:n], i3[:n], r4[:n], i4[:n]
	c1, c2, s1, s2 := bf5c1, bf5c2, sgn*bf5s1, sgn*bf5s2
	for q, x0 := range r0 {
		y0 := i0[q]
		ar, ai := r1[q]+r4[q], i1[q]+i4[q]
		br, bi := r1[q]-r4[q], i1[q]-i4[q]
		cr, ci := r2[q]+r3[q], i2[q]+i3[q]
		dr, di := r2[q]-r3[q], i2[q]-i3[q]
		// X̂_1, X̂_4 = x0 + c1·a + c2·c ± i·(s1·b + s2·d);
		// X̂_2, X̂_3 = x0 + c2·a + c1·c ± i·(s2·b − s1·d).
		pr, pi := x0+c1*ar+c2*cr, y0+c1*ai+c2*ci
		ur, ui := s1*br+s2*dr, s1*bi+s2*di
		mr, mi := x0+c2*ar+c1*cr, y0+c2*ai+c1*ci
		vr, vi := s2*br-s1*dr, s2*bi-s1*di
		r0[q], i0[q] = x0+ar+cr, y0+ai+ci
		r1[q], i1[q] = pr-ui, pi+ur
		r4[q], i4[q] = pr+ui, pi-ur
		r2[q], i2[q] = mr-vi, mi+vr
		r3[q], i3[q] = mr+vi, mi-vr
	}
}
