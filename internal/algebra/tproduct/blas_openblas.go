//go:build openblas

package tproduct

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
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// The encoder and the nonlocal stages parallelise over batches and groups
// themselves, so OpenBLAS must not start threads of its own: its thread
// count is a process-wide library setting, fixed to one when the package is
// loaded. gonum's blas64 (and through it gonum's LAPACK, as the low-rank
// stage's group factorisations use them) is pointed at OpenBLAS too, a
// process-wide setting of the same kind: in this build every dense product
// goes through one library.
func init() {
	C.openblas_set_num_threads(1)
	blas64.Use(netlib.Implementation{})
}

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
