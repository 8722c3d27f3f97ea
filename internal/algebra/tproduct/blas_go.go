//go:build !openblas

package tproduct

// BLASName names the implementation of the matrix products: the package's
// own pure-Go kernels in the default build, OpenBLAS under the build tag
// openblas.
func BLASName() string { return "pure Go" }

// gemmImpl is gemmGo in the default build.
func gemmImpl(n, wo, wi int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	gemmGo(n, wo, wi, a, lda, b, ldb, c, ldc)
}

// GemmCost and DFTCost are the costs of a multiply-add of GemmNT and of
// transforming one tube entry (forward or inverse), relative to a
// multiply-add of the sparse time-domain accumulation; they set the choice
// between the dense and the sparse gradient step (measured with
// BenchmarkEncodePaper).
const (
	GemmCost = 1.0
	DFTCost  = 1.0
)
