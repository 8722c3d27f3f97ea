package tproduct

// The Fourier-domain products of the package are real matrix products
// c = a·bᵀ on row-major blocks with explicit strides (complex slices enter as
// their real embeddings, see EmbedTensor). They go through GemmNT, which
// the default build implements with the package's own register-blocked Go
// kernel (blas_kernel.go) and the build tag openblas with OpenBLAS
// (blas_openblas.go). At the sizes of this package (30×30 to 128×128 times
// a batch) gonum's native Dgemm is no faster than that kernel and starts
// goroutines of its own above 64×256, which would both allocate and compete
// with the batch-level parallelism of the callers (the coding of many
// batches of patches in package tsc).

// GemmNT sets c[i*ldc+j] = Σ_p a[i*lda+p]·b[j*ldb+p] for i < n, j < wo,
// p < wi: c (n×wo) = a (n×wi) · bᵀ (b is wo×wi). c must not overlap a or b.
func GemmNT(n, wo, wi int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if n == 0 || wo == 0 {
		return
	}
	if wi == 0 {
		for i := range n {
			clear(c[i*ldc : i*ldc+wo])
		}
		return
	}
	gemmImpl(n, wo, wi, a, lda, b, ldb, c, ldc)
}
