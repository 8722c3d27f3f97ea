package tproduct

// gemmGo is the pure-Go GemmNT: c (n×wo) = a (n×wi) · bᵀ, every entry a dot
// product of a row of a with a row of b. Blocks of 2 rows of a by 4 rows of
// b keep eight independent sums in registers, so each loaded value is used
// two or four times; the summation order over p is the natural one whatever
// the block, so an entry does not depend on n or on its position.
func gemmGo(n, wo, wi int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	i := 0
	for ; i+2 <= n; i += 2 {
		a0 := a[i*lda : i*lda+wi]
		a1 := a[(i+1)*lda : (i+1)*lda+wi]
		a1 = a1[:len(a0)]
		c0 := c[i*ldc : i*ldc+wo]
		c1 := c[(i+1)*ldc : (i+1)*ldc+wo]
		j := 0
		for ; j+4 <= wo; j += 4 {
			b0 := b[j*ldb : j*ldb+wi]
			b1 := b[(j+1)*ldb : (j+1)*ldb+wi]
			b2 := b[(j+2)*ldb : (j+2)*ldb+wi]
			b3 := b[(j+3)*ldb : (j+3)*ldb+wi]
			b0, b1, b2, b3 = b0[:len(a0)], b1[:len(a0)], b2[:len(a0)], b3[:len(a0)]
			var s00, s01, s02, s03, s10, s11, s12, s13 float64
			for p, x0 := range a0 {
				x1 := a1[p]
				y0, y1, y2, y3 := b0[p], b1[p], b2[p], b3[p]
				s00 += x0 * y0
				s01 += x0 * y1
				s02 += x0 * y2
				s03 += x0 * y3
				s10 += x1 * y0
				s11 += x1 * y1
				s12 += x1 * y2
				s13 += x1 * y3
			}
			o0 := c0[j : j+4 : j+4]
			o1 := c1[j : j+4 : j+4]
			o0[0], o0[1], o0[2], o0[3] = s00, s01, s02, s03
			o1[0], o1[1], o1[2], o1[3] = s10, s11, s12, s13
		}
		for ; j < wo; j++ {
			bj := b[j*ldb : j*ldb+wi]
			bj = bj[:len(a0)]
			var s0, s1 float64
			for p, x0 := range a0 {
				s0 += x0 * bj[p]
				s1 += a1[p] * bj[p]
			}
			c0[j], c1[j] = s0, s1
		}
	}
	if i < n {
		a0 := a[i*lda : i*lda+wi]
		c0 := c[i*ldc : i*ldc+wo]
		for j := range wo {
			bj := b[j*ldb : j*ldb+wi]
			bj = bj[:len(a0)]
			var s float64
			for p, x := range a0 {
				s += x * bj[p]
			}
			c0[j] = s
		}
	}
}
