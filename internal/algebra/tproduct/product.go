package tproduct

import "fmt"

// The t-product and its relatives work in the Fourier domain on "split
// blocks": the lateral slice j of a real rows×n×K tensor (a patch, an atom,
// a code) is transformed into its split spectrum (see DFT), rows·K reals
// holding, for every stored frequency ℓ, the real parts of the rows entries
// of the slice and then (for ℓ ≠ 0, K/2) their imaginary parts. Frequency ℓ
// thus occupies the columns SplitOffset(ℓ, K, rows) of a row-major n×(rows·K)
// matrix whose row j is the split block of lateral slice j, and a complex
// matrix Z applied to frequency ℓ of every lateral slice at once is a real
// matrix product against the embedding of Z (EmbedTensor). Frequency 0 (and
// K/2 for even K) is real, so its product is a real product of a third of the
// size of a complex one.

// ForwardBlocks sets the rows of dst (n×(M·K), row stride M·K) to the split
// spectra of the lateral slices of x.
func ForwardBlocks(p *DFT, dst []float64, x *Tensor) {
	mk := x.M * x.K
	for j := range x.N {
		p.ForwardRows(dst[j*mk:(j+1)*mk], x.M, x.Lateral(j), x.M, x.M)
	}
}

// InverseBlocks sets the lateral slices of x to the inverse transforms of
// the rows of src (n×(M·K), row stride M·K).
func InverseBlocks(p *DFT, x *Tensor, src []float64) {
	mk := x.M * x.K
	for j := range x.N {
		p.InverseRows(x.Lateral(j), x.M, src[j*mk:(j+1)*mk], x.M, x.M)
	}
}

// SliceMats holds one real matrix per stored frequency slice ℓ: the
// embedding of a complex out×in matrix Z_ℓ that maps the split form of a
// length-in vector (its frequency-ℓ part) to the split form of Z_ℓ times it.
// For the real slices it is Re Z_ℓ (out×in); for the others the 2out×2in
// matrix [[Re Z, −Im Z], [Im Z, Re Z]]. All are row-major, one after another.
type SliceMats struct {
	K       int // tube length of the tensors the matrices act on
	Out, In int // rows and columns of every complex matrix Z_ℓ
	// Data holds the embeddings of the stored slices ℓ = 0..⌊K/2⌋, one
	// after another (see Mat).
	Data []float64
}

// NewSliceMats returns zero embeddings for the stored slices of K/2+1
// complex out×in matrices.
func NewSliceMats(k, out, in int) SliceMats {
	size := 0
	for l := range Stored(k) {
		_, wo := SplitOffset(l, k, out)
		_, wi := SplitOffset(l, k, in)
		size += wo * wi
	}
	return SliceMats{K: k, Out: out, In: in, Data: make([]float64, size)}
}

// mat returns the matrix of slice l and its size.
func (s *SliceMats) Mat(l int) (m []float64, wout, win int) {
	off := 0
	for i := range l {
		_, wo := SplitOffset(i, s.K, s.Out)
		_, wi := SplitOffset(i, s.K, s.In)
		off += wo * wi
	}
	_, wout = SplitOffset(l, s.K, s.Out)
	_, win = SplitOffset(l, s.K, s.In)
	return s.Data[off : off+wout*win : off+wout*win], wout, win
}

// EmbedTensor sets s to the embeddings of the frequency slices of the
// rows×cols×K tensor whose lateral slices have the split spectra spec
// (cols blocks of rows·K): s.Out = rows, s.In = cols. With conjTrans it
// embeds the conjugate transposes of the slices instead (s.Out = cols,
// s.In = rows). Every entry is multiplied by scale.
func EmbedTensor(s *SliceMats, spec []float64, rows, cols int, conjTrans bool, scale float64) {
	k := s.K
	rk := rows * k
	for l := range Stored(k) {
		m, wout, win := s.Mat(l)
		off, width := SplitOffset(l, k, rows)
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

// ApplySlices sets the rows of dst (n rows, stride s.Out·K) to the split
// spectra of Z applied to the rows of src (n rows, stride s.In·K), slice by
// slice. dst and src must not overlap.
func ApplySlices(s *SliceMats, dst, src []float64, n int) {
	for l := range Stored(s.K) {
		m, wout, win := s.Mat(l)
		offOut, _ := SplitOffset(l, s.K, s.Out)
		offIn, _ := SplitOffset(l, s.K, s.In)
		GemmNT(n, wout, win, src[offIn:], s.In*s.K, m, win, dst[offOut:], s.Out*s.K)
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
	ForwardBlocks(p, aspec, a)
	mats := NewSliceMats(k, m, r)
	EmbedTensor(&mats, aspec, m, r, false, 1)
	bspec := make([]float64, r*k*n)
	ForwardBlocks(p, bspec, b)
	out := make([]float64, m*k*n)
	ApplySlices(&mats, out, bspec, n)
	InverseBlocks(p, dst, out)
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
