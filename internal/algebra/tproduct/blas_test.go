package tproduct

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestGemmNTAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 5))
	for range 20 {
		n, wo, wi := 1+rng.IntN(9), 1+rng.IntN(11), 1+rng.IntN(13)
		lda, ldb, ldc := wi+rng.IntN(3), wi+rng.IntN(3), wo+rng.IntN(3)
		a := make([]float64, (n-1)*lda+wi)
		b := make([]float64, (wo-1)*ldb+wi)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		for name, f := range map[string]func(int, int, int, []float64, int, []float64, int, []float64, int){
			"GemmNT": GemmNT, "gemmGo": gemmGo,
		} {
			c := make([]float64, (n-1)*ldc+wo)
			for i := range c {
				c[i] = math.NaN()
			}
			f(n, wo, wi, a, lda, b, ldb, c, ldc)
			for i := range n {
				for j := range wo {
					var s float64
					for p := range wi {
						s += a[i*lda+p] * b[j*ldb+p]
					}
					if math.Abs(c[i*ldc+j]-s) > 1e-13*float64(wi) {
						t.Fatalf("%s %d×%d×%d: c(%d,%d) = %v, want %v", name, n, wo, wi, i, j, c[i*ldc+j], s)
					}
				}
			}
		}
	}
}
