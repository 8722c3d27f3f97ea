//go:build openblas

package tensor

// Build with CGO_LDFLAGS=-lopenblas: the cgo part of
// gonum.org/v1/netlib/blas/netlib is linked against the CBLAS interface of
// the system library.

/*
#cgo LDFLAGS: -lopenblas
void openblas_set_num_threads(int);
*/
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/netlib/blas/netlib"
)

// The encoder parallelises over batches of patches itself (EncodeAll), so
// OpenBLAS must not start threads of its own: its thread count is a
// process-wide library setting, fixed to one when the package is loaded.
func init() { C.openblas_set_num_threads(1) }

// BLASName names the implementation of the matrix products: the package's
// own pure-Go kernels in the default build, OpenBLAS under the build tag
// openblas.
func BLASName() string { return "OpenBLAS" }

// gemmImpl calls OpenBLAS's dgemm (row-major, b transposed).
func gemmImpl(n, wo, wi int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	netlib.Implementation{}.Dgemm(blas.NoTrans, blas.Trans, n, wo, wi, 1, a, lda, b, ldb, 0, c, ldc)
}

// GemmCost and DFTCost are the costs of a multiply-add of GemmNT and of
// transforming one tube entry (forward or inverse), relative to a
// multiply-add of the sparse time-domain accumulation; they set the choice
// between the dense and the sparse gradient step (measured with
// BenchmarkEncodePaper).
const (
	GemmCost = 0.25
	DFTCost  = 1.0
)
