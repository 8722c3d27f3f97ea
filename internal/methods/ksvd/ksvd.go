// Package ksvd is the K-SVD denoiser and its two front ends, the baselines
// of the paper's Table 2: the method "bwksvd" (BandSpec, BandDenoiser),
// every band a grey image, and the method "3dksvd" (Spec3D, Denoiser3D),
// spatio-spectral patches. The denoiser is an overcomplete DCT dictionary,
// sparse coding by Batch-OMP, K-SVD dictionary learning on noisy patches,
// and the averaging of the coded patches back into an image (Denoise).
//
// The problem (Elad and Aharon 2006, "Image denoising via sparse and
// redundant representations over learned dictionaries"): every patch Rᵢy of
// a noisy image y = x + n, n ~ N(0, σ²), is close to a sparse combination
// Dαᵢ of the atoms of a dictionary D. The estimate is
//
//	x̂ = argmin_x λ‖x − y‖² + Σᵢ ‖Dαᵢ − Rᵢx‖²,
//	αᵢ = argmin ‖α‖₀ subject to ‖Rᵢy − Dα‖² ≤ ε², ε = C·σ·√n,
//
// with n the patch length, C = 1.15 and λ = 30/σ. The x-step has the closed
// form of a per-pixel average (Reconstruct):
//
//	x̂ = (λ·y + Σᵢ RᵢᵀDαᵢ) / (λ·1 + Σᵢ RᵢᵀRᵢ).
//
// The algorithms:
//
//   - Dictionary initialisation: the separable overcomplete DCT (DCT): a
//     Kronecker product of 1-D overcomplete DCTs, one per patch axis.
//   - Sparse coding: Batch-OMP (Rubinstein, Zibulevsky and Elad 2008,
//     "Efficient implementation of the K-SVD algorithm using batch
//     orthogonal matching pursuit"): with the Gram matrix G = DᵀD and Dᵀx
//     computed beforehand (Dᵀx for a whole row of patches in one matrix
//     product), OMP needs no residual vector, only a Cholesky factor of
//     G restricted to the support that grows by one row per atom (Coder).
//   - Dictionary update: K-SVD (Aharon, Elad and Bruckstein 2006), atom by
//     atom, each the best rank-1 fit of the residual restricted to the
//     samples that use it; by default with the single power step of the
//     approximate K-SVD of the Batch-OMP paper, optionally exactly through
//     gonum's SVD (Learn).
//
// Conventions. A patch is a p×p-pixel × d-band window of a band-major cube
// (msi.Cube; d = 1 for a grey image or one band), flattened with the column
// fastest, then the row, then the band: entry (b, y, x) at (b·p + y)·p + x.
// Patches are coded with their mean removed and the mean added back to the
// reconstruction, as the reference K-SVD toolbox does: the dictionary then
// spends no atom on the patch's level, which is the one component the
// average over all patches estimates well anyway. A Dictionary holds its
// atoms as rows (atom k contiguous), so Dᵀx for a batch of patches stored as
// rows is one BLAS product X·Dᵀ.
//
// Every parallel loop splits work by size and writes per-iteration results
// that are combined in a fixed order afterwards, so the outputs are
// bit-identical for any number of threads.
package ksvd

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// DefaultGain is the factor C of the error bound ε = C·σ·√n (Elad and
// Aharon's value).
const DefaultGain = 1.15

// DefaultLambdaTimesSigma is the product λ·σ of the averaging weight of the
// noisy image: λ = 30/σ on the [0, 255] scale (Elad and Aharon).
const DefaultLambdaTimesSigma = 30

// Dictionary is a set of Size atoms of length Dim.
type Dictionary struct {
	Dim  int // length n of a signal (a flattened patch)
	Size int // number K of atoms
	// Atoms holds the atoms as the rows of a Size×Dim row-major matrix:
	// atom k is Atoms[k*Dim : (k+1)*Dim]. As a matrix it is Dᵀ.
	Atoms []float64
}

// NewDictionary returns a dictionary of size zero atoms of length dim.
func NewDictionary(dim, size int) *Dictionary {
	return &Dictionary{Dim: dim, Size: size, Atoms: make([]float64, dim*size)}
}

// Atom returns atom k (a slice of d.Atoms, not a copy).
func (d *Dictionary) Atom(k int) []float64 { return d.Atoms[k*d.Dim : (k+1)*d.Dim] }

// Clone returns a deep copy of d.
func (d *Dictionary) Clone() *Dictionary {
	return &Dictionary{Dim: d.Dim, Size: d.Size, Atoms: append([]float64(nil), d.Atoms...)}
}

// matrix returns the atoms as the Size×Dim general matrix Dᵀ.
func (d *Dictionary) matrix() blas64.General {
	return blas64.General{Rows: d.Size, Cols: d.Dim, Stride: d.Dim, Data: d.Atoms}
}

// Gram returns G = DᵀD (Size×Size, row-major) in dst, allocating it when
// dst is too short. G is exactly symmetric: the upper triangle comes from
// one symmetric rank-k update and the lower one is its mirror.
func (d *Dictionary) Gram(dst []float64) []float64 {
	k := d.Size
	if len(dst) < k*k {
		dst = make([]float64, k*k)
	}
	dst = dst[:k*k]
	g := blas64.Symmetric{Uplo: blas.Upper, N: k, Stride: k, Data: dst}
	blas64.Syrk(blas.NoTrans, 1, d.matrix(), 0, g)
	for i := range k {
		for j := i + 1; j < k; j++ {
			dst[j*k+i] = dst[i*k+j]
		}
	}
	return dst
}

// Correlate writes C = X·D (count×Size, row-major) to dst: row i holds the
// correlations Dᵀxᵢ of the signal xᵢ = x[i*Dim:(i+1)*Dim] with every atom.
func (d *Dictionary) Correlate(dst, x []float64, count int) {
	if len(x) < count*d.Dim || len(dst) < count*d.Size {
		panic(fmt.Sprintf("ksvd: Correlate: %d signals of %d need %d values and %d outputs, got %d and %d",
			count, d.Dim, count*d.Dim, count*d.Size, len(x), len(dst)))
	}
	if count == 0 {
		return
	}
	xs := blas64.General{Rows: count, Cols: d.Dim, Stride: d.Dim, Data: x}
	cs := blas64.General{Rows: count, Cols: d.Size, Stride: d.Size, Data: dst}
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, xs, d.matrix(), 0, cs)
}
