//go:build !amd64 || purego

package kernel

import "math"

// signMask clears the sign bit of a float64 bit pattern. For non-negative
// floats the order of the bit patterns is that of the values, so
// bits(x)&signMask > tb is |x| > τ (and true for a NaN).
const signMask = 1<<63 - 1

// The portable loops (see the package documentation). The variants with and
// without the test are separate loops so that the passes that need no test
// pay nothing for it.

// Add4 sets w to src plus four runs.
func Add4(w, src, g0, g1, g2, g3 []float64, v0, v1, v2, v3 float64) {
	src, g0, g1, g2, g3 = src[:len(w)], g0[:len(w)], g1[:len(w)], g2[:len(w)], g3[:len(w)]
	for i := range w {
		w[i] = src[i] + (v0*g0[i] + v1*g1[i] + v2*g2[i] + v3*g3[i])
	}
}

// Add4Above is Add4 that also lists the positions above τ.
func Add4Above(w, src, g0, g1, g2, g3 []float64, v0, v1, v2, v3 float64, tb uint64, above []int32) int {
	src, g0, g1, g2, g3 = src[:len(w)], g0[:len(w)], g1[:len(w)], g2[:len(w)], g3[:len(w)]
	k := 0
	for i := range w {
		x := src[i] + (v0*g0[i] + v1*g1[i] + v2*g2[i] + v3*g3[i])
		w[i] = x
		if math.Float64bits(x)&signMask > tb {
			above[k] = int32(i)
			k++
		}
	}
	return k
}

// Add2 sets w to src plus two runs.
func Add2(w, src, g0, g1 []float64, v0, v1 float64) {
	src, g0, g1 = src[:len(w)], g0[:len(w)], g1[:len(w)]
	for i := range w {
		w[i] = src[i] + (v0*g0[i] + v1*g1[i])
	}
}

// Add2Above is Add2 that also lists the positions above τ.
func Add2Above(w, src, g0, g1 []float64, v0, v1 float64, tb uint64, above []int32) int {
	src, g0, g1 = src[:len(w)], g0[:len(w)], g1[:len(w)]
	k := 0
	for i := range w {
		x := src[i] + (v0*g0[i] + v1*g1[i])
		w[i] = x
		if math.Float64bits(x)&signMask > tb {
			above[k] = int32(i)
			k++
		}
	}
	return k
}

// Add1 sets w to src plus one run.
func Add1(w, src, g []float64, v float64) {
	src, g = src[:len(w)], g[:len(w)]
	for i := range w {
		w[i] = src[i] + v*g[i]
	}
}

// Add1Above is Add1 that also lists the positions above τ.
func Add1Above(w, src, g []float64, v float64, tb uint64, above []int32) int {
	src, g = src[:len(w)], g[:len(w)]
	k := 0
	for i := range w {
		x := src[i] + v*g[i]
		w[i] = x
		if math.Float64bits(x)&signMask > tb {
			above[k] = int32(i)
			k++
		}
	}
	return k
}
