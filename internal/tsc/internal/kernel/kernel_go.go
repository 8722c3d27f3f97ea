//go:build !amd64 || purego

package kernel

import "math"

// signMask clears the sign bit of a float64 bit pattern. For non-negative
// floats the order of the bit patterns is that of the values, so
// bits(x)&signMask > tb is |x| > τ (and true for a NaN).
const signMask = 1<<63 - 1

// The portable loops (see the package documentation). The variants with and
// without the test are separate loops so that the passes that need no test
// pay nothing for it. The explicit conversions round every product and sum
// as the SSE2 loops do: without them a compiler may fuse a product and a
// sum into one multiply-add (Go allows it, and does it on arm64), and the
// results would depend on the platform.

// Add4 sets w to src plus four runs.
func Add4(w, src, g0, g1, g2, g3 []float64, v0, v1, v2, v3 float64) {
	src, g0, g1, g2, g3 = src[:len(w)], g0[:len(w)], g1[:len(w)], g2[:len(w)], g3[:len(w)]
	for i := range w {
		w[i] = src[i] + (float64(float64(float64(v0*g0[i])+float64(v1*g1[i]))+float64(v2*g2[i])) + float64(v3*g3[i]))
	}
}

// Add4Above is Add4 that also lists the positions above τ.
func Add4Above(w, src, g0, g1, g2, g3 []float64, v0, v1, v2, v3 float64, tb uint64, above []int32) int {
	src, g0, g1, g2, g3 = src[:len(w)], g0[:len(w)], g1[:len(w)], g2[:len(w)], g3[:len(w)]
	k := 0
	for i := range w {
		x := src[i] + (float64(float64(float64(v0*g0[i])+float64(v1*g1[i]))+float64(v2*g2[i])) + float64(v3*g3[i]))
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
		w[i] = src[i] + (float64(v0*g0[i]) + float64(v1*g1[i]))
	}
}

// Add2Above is Add2 that also lists the positions above τ.
func Add2Above(w, src, g0, g1 []float64, v0, v1 float64, tb uint64, above []int32) int {
	src, g0, g1 = src[:len(w)], g0[:len(w)], g1[:len(w)]
	k := 0
	for i := range w {
		x := src[i] + (float64(v0*g0[i]) + float64(v1*g1[i]))
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
		w[i] = src[i] + float64(v*g[i])
	}
}

// Add1Above is Add1 that also lists the positions above τ.
func Add1Above(w, src, g []float64, v float64, tb uint64, above []int32) int {
	src, g = src[:len(w)], g[:len(w)]
	k := 0
	for i := range w {
		x := src[i] + float64(v*g[i])
		w[i] = x
		if math.Float64bits(x)&signMask > tb {
			above[k] = int32(i)
			k++
		}
	}
	return k
}
