package tsc

import "fmt"

// The t-product and its relatives work in the Fourier domain on "split
// blocks": the lateral slice j of a real rows×n×K tensor (a patch, an atom,
// a code) is transformed into its split spectrum (see DFT), rows·K reals
// holding, for every stored frequency ℓ, the real parts of the rows entries
// of the slice and then (for ℓ ≠ 0, K/2) their imaginary parts. Frequency ℓ
// thus occupies the columns splitOffset(ℓ, K, rows) of a row-major n×(rows·K)
// matrix whose row j is the split block of lateral slice j, and a complex
// matrix Z applied to frequency ℓ of every lateral slice at once is a real
// matrix product against the embedding of Z (embedTensor). Frequency 0 (and
// K/2 for even K) is real, so its product is a real product of a third of the
// size of a complex one.

// forwardBlocks sets the rows of dst (n×(M·K), row stride M·K) to the split
// spectra of the lateral slices of x.
func forwardBlocks(p *DFT, dst []float64, x *Tensor) {
	mk := x.M * x.K
	for j := range x.N {
		p.forwardRows(dst[j*mk:(j+1)*mk], x.M, x.Lateral(j), x.M, x.M)
	}
}

// inverseBlocks sets the lateral slices of x to the inverse transforms of
// the rows of src (n×(M·K), row stride M·K).
func inverseBlocks(p *DFT, x *Tensor, src []float64) {
	mk := x.M * x.K
	for j := range x.N {
		p.inverseRows(x.Lateral(j), x.M, src[j*mk:(j+1)*mk], x.M, x.M)
	}
}

// sliceMats holds one real matrix per stored frequency slice ℓ: the
// embedding of a complex out×in matrix Z_ℓ that maps the split form of a
// length-in vector (its frequency-ℓ part) to the split form of Z_ℓ times it.
// For the real slices it is Re Z_ℓ (out×in); for the others the 2out×2in
// matrix [[Re Z, −Im Z], [Im Z, Re Z]]. All are row-major, one after another.
type sliceMats struct {
	k, out, in int
	data       []float64
}

func newSliceMats(k, out, in int) sliceMats {
	size := 0
	for l := range Stored(k) {
		_, wo := splitOffset(l, k, out)
		_, wi := splitOffset(l, k, in)
		size += wo * wi
	}
	return sliceMats{k: k, out: out, in: in, data: make([]float64, size)}
}

// mat returns the matrix of slice l and its size.
func (s *sliceMats) mat(l int) (m []float64, wout, win int) {
	off := 0
	for i := range l {
		_, wo := splitOffset(i, s.k, s.out)
		_, wi := splitOffset(i, s.k, s.in)
		off += wo * wi
	}
	_, wout = splitOffset(l, s.k, s.out)
	_, win = splitOffset(l, s.k, s.in)
	return s.data[off : off+wout*win : off+wout*win], wout, win
}

// embedTensor sets s to the embeddings of the frequency slices of the
// rows×cols×K tensor whose lateral slices have the split spectra spec
// (cols blocks of rows·K): s.out = rows, s.in = cols. With conjTrans it
// embeds the conjugate transposes of the slices instead (s.out = cols,
// s.in = rows). Every entry is multiplied by scale.
func embedTensor(s *sliceMats, spec []float64, rows, cols int, conjTrans bool, scale float64) {
	k := s.k
	rk := rows * k
	for l := range Stored(k) {
		m, wout, win := s.mat(l)
		off, width := splitOffset(l, k, rows)
		complexSlice := width == 2*rows
		for q := range cols {
			blk := spec[q*rk+off : q*rk+off+width]
			for i := range rows {
				re := scale * blk[i]
				var im float64
				if complexSlice {
					im = scale * blk[rows+i]
				}
				// Z(i, q) = re + i·im, or (Zᴴ)(q, i) = re − i·im.
				o, c, zi := i, q, im
				if conjTrans {
					o, c, zi = q, i, -im
				}
				if !complexSlice {
					m[o*win+c] = re
					continue
				}
				no, ni := wout/2, win/2
				m[o*win+c] = re
				m[o*win+ni+c] = -zi
				m[(no+o)*win+c] = zi
				m[(no+o)*win+ni+c] = re
			}
		}
	}
}

// applySlices sets the rows of dst (n rows, stride s.out·K) to the split
// spectra of Z applied to the rows of src (n rows, stride s.in·K), slice by
// slice. dst and src must not overlap.
func applySlices(s *sliceMats, dst, src []float64, n int) {
	for l := range Stored(s.k) {
		m, wout, win := s.mat(l)
		offOut, _ := splitOffset(l, s.k, s.out)
		offIn, _ := splitOffset(l, s.k, s.in)
		gemmNT(n, wout, win, src[offIn:], s.in*s.k, m, win, dst[offOut:], s.out*s.k)
	}
}

// Product sets dst = a * b, the t-product: dst(:,j,:) = Σ_q a(:,q,:) ⊛ b(q,j,:)
// with ⊛ the circular convolution of tubes (docs/model.md §1:
// unfold(dst) = circ(a)·unfold(b)). It is computed in the Fourier domain as
// one matrix product per stored frequency slice, the real slices as real
// products. It allocates scratch space of the size of its operands; dst may
// alias a or b. It panics unless a is M×R×K, b is R×N×K and dst is M×N×K.
func Product(dst, a, b *Tensor) {
	if a.N != b.M || a.K != b.K || dst.M != a.M || dst.N != b.N || dst.K != a.K {
		panic(fmt.Sprintf("tsc: Product of %d×%d×%d and %d×%d×%d into %d×%d×%d",
			a.M, a.N, a.K, b.M, b.N, b.K, dst.M, dst.N, dst.K))
	}
	m, r, n, k := a.M, a.N, b.N, a.K
	p := NewDFT(k)
	aspec := make([]float64, m*k*r)
	forwardBlocks(p, aspec, a)
	mats := newSliceMats(k, m, r)
	embedTensor(&mats, aspec, m, r, false, 1)
	bspec := make([]float64, r*k*n)
	forwardBlocks(p, bspec, b)
	out := make([]float64, m*k*n)
	applySlices(&mats, out, bspec, n)
	inverseBlocks(p, dst, out)
}

// Transpose sets dst = a†, the tensor transpose of docs/model.md §1: for a M×R×K,
// dst is R×M×K with dst(:,:,0) = a(:,:,0)ᵀ and dst(:,:,t) = a(:,:,K−t)ᵀ
// (0-based t), so that the DFT of every slice of dst is the conjugate
// transpose of that of a. It panics if the sizes do not match or dst and a
// share storage.
func Transpose(dst, a *Tensor) {
	if dst.M != a.N || dst.N != a.M || dst.K != a.K {
		panic(fmt.Sprintf("tsc: Transpose of %d×%d×%d into %d×%d×%d", a.M, a.N, a.K, dst.M, dst.N, dst.K))
	}
	if len(a.Data) > 0 && len(dst.Data) > 0 && &a.Data[0] == &dst.Data[0] {
		panic("tsc: Transpose into its own argument")
	}
	m, r, k := a.M, a.N, a.K
	for j := range r {
		for t := range k {
			src := a.Data[(j*k+t)*m : (j*k+t+1)*m]
			tt := (k - t) % k
			for i, v := range src {
				dst.Data[(i*k+tt)*r+j] = v
			}
		}
	}
}

// Inner returns the Frobenius inner product Σ a(i,j,t)·b(i,j,t). By
// Parseval it equals FInner of the spectra; the time-domain sum is exact and
// cheaper. It panics if the sizes differ.
func Inner(a, b *Tensor) float64 {
	if a.M != b.M || a.N != b.N || a.K != b.K {
		panic(fmt.Sprintf("tsc: Inner of %d×%d×%d and %d×%d×%d", a.M, a.N, a.K, b.M, b.N, b.K))
	}
	y := b.Data[:len(a.Data)]
	var s0, s1 float64
	i := 0
	for ; i+2 <= len(a.Data); i += 2 {
		s0 += a.Data[i] * y[i]
		s1 += a.Data[i+1] * y[i+1]
	}
	if i < len(a.Data) {
		s0 += a.Data[i] * y[i]
	}
	return s0 + s1
}

// Norm2 returns the squared Frobenius norm Σ a(i,j,t)².
func Norm2(a *Tensor) float64 { return Inner(a, a) }
