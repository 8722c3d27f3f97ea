// Package multilinear is the algebra of third-order tensors that the global
// tensor-decomposition denoisers build on: mode-n unfolding and folding,
// mode-n products with matrices, mode-n Gram matrices, the Tucker model
// (HOSVD and HOOI, de Lathauwer, de Moor and Vandewalle 2000), the CP or
// PARAFAC model fitted by alternating least squares (Harshman 1970; Kolda and
// Bader, "Tensor decompositions and applications", SIAM Review 2009), and
// the information-theoretic criteria AIC and MDL for the number of signals
// in a set of covariance eigenvalues (Wax and Kailath 1985).
//
// Conventions. A Tensor has modes 0, 1, 2 of sizes Dims[0], Dims[1],
// Dims[2], and element (i, j, k) is Data[(k*Dims[0]+i)*Dims[1]+j]: the
// slices along mode 2 are row-major Dims[0]×Dims[1] matrices stored one
// after the other. That is exactly the band-sequential layout of a
// multispectral cube (msi.Cube: mode 0 the rows y, mode 1 the columns x,
// mode 2 the bands), so a cube's data is a tensor without a copy.
//
// The mode-n unfolding X₍ₙ₎ is the Dims[n] × (N/Dims[n]) matrix whose column
// index runs over the other two modes in increasing mode order, the lower
// mode fastest (Kolda and Bader's convention): for n = 0 column j + k·Dims[1],
// for n = 1 column i + k·Dims[0], for n = 2 column i + j·Dims[0]. Only Unfold
// and Fold materialise it; the products and Gram matrices work on the
// tensor's own layout through matrix views, which give the same numbers.
//
// Determinism. Large products are split into blocks of a fixed size, never
// by the number of workers, and every block is written by one call; sums of
// partial results run in a fixed order. Results are bit-identical for any
// number of threads.
package multilinear

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"tdsc/internal/parallel"
)

// Tensor is a dense third-order tensor in the layout of the package comment.
type Tensor struct {
	Dims [3]int
	Data []float64
}

// New returns a zero tensor of the given mode sizes.
func New(i0, i1, i2 int) *Tensor {
	return &Tensor{Dims: [3]int{i0, i1, i2}, Data: make([]float64, i0*i1*i2)}
}

// Len is the number of elements.
func (t *Tensor) Len() int { return t.Dims[0] * t.Dims[1] * t.Dims[2] }

// index returns the position of element (i, j, k) in Data.
func (t *Tensor) index(i, j, k int) int { return (k*t.Dims[0]+i)*t.Dims[1] + j }

// At returns element (i, j, k).
func (t *Tensor) At(i, j, k int) float64 { return t.Data[t.index(i, j, k)] }

// Set sets element (i, j, k) to v.
func (t *Tensor) Set(i, j, k int, v float64) { t.Data[t.index(i, j, k)] = v }

// Clone returns a deep copy.
func (t *Tensor) Clone() *Tensor {
	return &Tensor{Dims: t.Dims, Data: append([]float64(nil), t.Data...)}
}

// SquaredNorm returns the squared Frobenius norm ‖t‖².
func (t *Tensor) SquaredNorm() float64 {
	s := 0.0
	for _, v := range t.Data {
		s += v * v
	}
	return s
}

// others returns the two modes other than n, in increasing order.
func others(n int) (int, int) {
	switch n {
	case 0:
		return 1, 2
	case 1:
		return 0, 2
	default:
		return 0, 1
	}
}

// Unfold returns the mode-n unfolding X₍ₙ₎ (package comment).
func (t *Tensor) Unfold(n int) *mat.Dense {
	a, b := others(n)
	cols := t.Dims[a] * t.Dims[b]
	out := mat.NewDense(t.Dims[n], cols, nil)
	raw := out.RawMatrix()
	for k := 0; k < t.Dims[2]; k++ {
		for i := 0; i < t.Dims[0]; i++ {
			for j := 0; j < t.Dims[1]; j++ {
				idx := [3]int{i, j, k}
				col := idx[a] + idx[b]*t.Dims[a]
				raw.Data[idx[n]*raw.Stride+col] = t.At(i, j, k)
			}
		}
	}
	return out
}

// Fold is the inverse of Unfold: it returns the tensor of mode sizes dims
// whose mode-n unfolding is m.
func Fold(m mat.Matrix, n int, dims [3]int) *Tensor {
	a, b := others(n)
	r, c := m.Dims()
	if r != dims[n] || c != dims[a]*dims[b] {
		panic(fmt.Sprintf("multilinear: cannot fold a %d×%d matrix along mode %d into %v", r, c, n, dims))
	}
	t := New(dims[0], dims[1], dims[2])
	for k := 0; k < dims[2]; k++ {
		for i := 0; i < dims[0]; i++ {
			for j := 0; j < dims[1]; j++ {
				idx := [3]int{i, j, k}
				t.Set(i, j, k, m.At(idx[n], idx[a]+idx[b]*dims[a]))
			}
		}
	}
	return t
}

// blockRows is the number of rows of one block of a split matrix product:
// large enough for BLAS efficiency, small enough to share out work.
const blockRows = 256

// general returns the row-major r×c matrix view of data.
func general(r, c int, data []float64) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: c, Data: data}
}

// rowBlock returns rows [r0, r1) of g as a view.
func rowBlock(g blas64.General, r0, r1 int) blas64.General {
	return blas64.General{Rows: r1 - r0, Cols: g.Cols, Stride: g.Stride, Data: g.Data[r0*g.Stride:]}
}

// gemmRows computes c = op(a)·b (tA says whether op transposes a) with the
// rows of c split into blocks of blockRows, one call each, in parallel.
func gemmRows(ctx context.Context, workers int, tA blas.Transpose, a, b, c blas64.General) error {
	blocks := (c.Rows + blockRows - 1) / blockRows
	return parallel.For(ctx, blocks, workers, func(_, i int) error {
		r0, r1 := i*blockRows, min((i+1)*blockRows, c.Rows)
		var ab blas64.General
		if tA == blas.NoTrans {
			ab = rowBlock(a, r0, r1)
		} else {
			ab = blas64.General{Rows: a.Rows, Cols: r1 - r0, Stride: a.Stride, Data: a.Data[r0:]}
		}
		blas64.Gemm(tA, blas.NoTrans, 1, ab, b, 0, rowBlock(c, r0, r1))
		return nil
	})
}

// ModeProduct returns t ×ₙ A, the tensor whose mode-n unfolding is
// A·X₍ₙ₎; A is J×Dims[n] and the result has size J along mode n. workers
// is the number of goroutines (0: GOMAXPROCS); the result does not depend
// on it.
func ModeProduct(ctx context.Context, t *Tensor, n int, a mat.Matrix, workers int) (*Tensor, error) {
	ar, ac := a.Dims()
	if ac != t.Dims[n] {
		panic(fmt.Sprintf("multilinear: mode-%d product of a tensor %v with a %d×%d matrix", n, t.Dims, ar, ac))
	}
	am := mat.DenseCopyOf(a).RawMatrix()
	dims := t.Dims
	dims[n] = ar
	out := New(dims[0], dims[1], dims[2])
	i0, i1, i2 := t.Dims[0], t.Dims[1], t.Dims[2]
	var err error
	switch n {
	case 0:
		// Each mode-2 slice X_k (i0×i1) becomes A·X_k.
		err = parallel.For(ctx, i2, workers, func(_, k int) error {
			xk := general(i0, i1, t.Data[k*i0*i1:])
			yk := general(ar, i1, out.Data[k*ar*i1:])
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, am, xk, 0, yk)
			return nil
		})
	case 1:
		// The data is an (i2·i0)×i1 matrix M; the result is M·Aᵀ.
		m := general(i2*i0, i1, t.Data)
		at := mat.DenseCopyOf(a.T()).RawMatrix()
		err = gemmRows(ctx, workers, blas.NoTrans, m, at, general(i2*i0, ar, out.Data))
	default:
		// The data is an i2×(i0·i1) matrix M; the result is A·M, split by
		// blocks of columns so that the work is shared.
		cols := i0 * i1
		blocks := (cols + 4096 - 1) / 4096
		err = parallel.For(ctx, blocks, workers, func(_, bi int) error {
			c0, c1 := bi*4096, min((bi+1)*4096, cols)
			mb := blas64.General{Rows: i2, Cols: c1 - c0, Stride: cols, Data: t.Data[c0:]}
			yb := blas64.General{Rows: ar, Cols: c1 - c0, Stride: cols, Data: out.Data[c0:]}
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, am, mb, 0, yb)
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MultiplyModes returns t ×ₙ mats[n] for every n whose mats[n] is not nil,
// applied in the order that shrinks the tensor soonest (largest reduction
// of the element count first).
func MultiplyModes(ctx context.Context, t *Tensor, mats [3]mat.Matrix, workers int) (*Tensor, error) {
	done := [3]bool{}
	cur := t
	for {
		best, bestRatio := -1, math.Inf(1)
		for n, a := range mats {
			if a == nil || done[n] {
				continue
			}
			r, _ := a.Dims()
			if ratio := float64(r) / float64(cur.Dims[n]); ratio < bestRatio {
				best, bestRatio = n, ratio
			}
		}
		if best < 0 {
			return cur, nil
		}
		next, err := ModeProduct(ctx, cur, best, mats[best], workers)
		if err != nil {
			return nil, err
		}
		cur, done[best] = next, true
	}
}

// Gram returns the mode-n Gram matrix X₍ₙ₎X₍ₙ₎ᵀ (Dims[n]×Dims[n],
// symmetric). Partial sums over fixed blocks are added in block order.
func Gram(ctx context.Context, t *Tensor, n int, workers int) (*mat.SymDense, error) {
	i0, i1, i2 := t.Dims[0], t.Dims[1], t.Dims[2]
	d := t.Dims[n]
	// Each case describes the tensor as a list of blocks M_b with
	// X₍ₙ₎X₍ₙ₎ᵀ = Σ_b M_b M_bᵀ (trans false) or Σ_b M_bᵀ M_b (trans true).
	var (
		nblocks int
		block   func(b int) blas64.General
		trans   bool
	)
	switch n {
	case 0:
		nblocks = i2
		block = func(k int) blas64.General { return general(i0, i1, t.Data[k*i0*i1:]) }
	case 1:
		rows := i2 * i0
		nblocks = (rows + blockRows - 1) / blockRows
		m := general(rows, i1, t.Data)
		block = func(b int) blas64.General { return rowBlock(m, b*blockRows, min((b+1)*blockRows, rows)) }
		trans = true
	default:
		cols := i0 * i1
		const width = 4096
		nblocks = (cols + width - 1) / width
		block = func(b int) blas64.General {
			c0, c1 := b*width, min((b+1)*width, cols)
			return blas64.General{Rows: i2, Cols: c1 - c0, Stride: cols, Data: t.Data[c0:]}
		}
	}
	parts := make([][]float64, nblocks)
	err := parallel.For(ctx, nblocks, workers, func(_, b int) error {
		s := blas64.Symmetric{N: d, Stride: d, Uplo: blas.Upper, Data: make([]float64, d*d)}
		tr := blas.NoTrans
		if trans {
			tr = blas.Trans
		}
		blas64.Syrk(tr, 1, block(b), 0, s)
		parts[b] = s.Data
		return nil
	})
	if err != nil {
		return nil, err
	}
	sum := make([]float64, d*d)
	for _, p := range parts {
		for i, v := range p {
			sum[i] += v
		}
	}
	// Syrk filled the upper triangle; mirror it.
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			sum[j*d+i] = sum[i*d+j]
		}
	}
	return mat.NewSymDense(d, sum), nil
}

// TopEigen returns the k largest eigenvalues of the symmetric matrix s in
// decreasing order and the d×k matrix of their unit eigenvectors, each
// signed so that its entry of largest magnitude is positive (so the result
// does not depend on the eigensolver's sign choice). It also returns all d
// eigenvalues in decreasing order.
func TopEigen(s mat.Symmetric, k int) (vals []float64, vecs *mat.Dense, all []float64, err error) {
	var eig mat.EigenSym
	if !eig.Factorize(s, true) {
		return nil, nil, nil, fmt.Errorf("multilinear: eigendecomposition failed")
	}
	asc := eig.Values(nil)
	var v mat.Dense
	eig.VectorsTo(&v)
	d := len(asc)
	all = make([]float64, d)
	for i := range all {
		all[i] = asc[d-1-i]
	}
	vecs = mat.NewDense(d, k, nil)
	for c := 0; c < k; c++ {
		src := d - 1 - c
		big, sign := 0.0, 1.0
		for r := 0; r < d; r++ {
			if a := math.Abs(v.At(r, src)); a > big {
				big = a
				sign = math.Copysign(1, v.At(r, src))
			}
		}
		for r := 0; r < d; r++ {
			vecs.Set(r, c, sign*v.At(r, src))
		}
	}
	return all[:k:k], vecs, all, nil
}

// CentreSlices subtracts from every mode-2 slice of t (a band of a cube)
// its mean and returns the means, for AddSliceMeans to put back.
func (t *Tensor) CentreSlices() []float64 {
	plane := t.Dims[0] * t.Dims[1]
	means := make([]float64, t.Dims[2])
	for k := range means {
		slice := t.Data[k*plane : (k+1)*plane]
		s := 0.0
		for _, v := range slice {
			s += v
		}
		means[k] = s / float64(plane)
		for i := range slice {
			slice[i] -= means[k]
		}
	}
	return means
}

// AddSliceMeans adds means[k] to every element of mode-2 slice k of t. It
// panics if len(means) is not t.Dims[2].
func (t *Tensor) AddSliceMeans(means []float64) {
	if len(means) != t.Dims[2] {
		panic(fmt.Sprintf("multilinear: %d means for %d slices", len(means), t.Dims[2]))
	}
	plane := t.Dims[0] * t.Dims[1]
	for k, m := range means {
		slice := t.Data[k*plane : (k+1)*plane]
		for i := range slice {
			slice[i] += m
		}
	}
}
