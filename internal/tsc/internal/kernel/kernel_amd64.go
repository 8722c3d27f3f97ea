//go:build amd64 && !purego

package kernel

import "math"

// The loops in SSE2 (kernel_amd64.s), which every amd64 processor has: two
// elements per instruction, with the same operations in the same order as
// the portable loops (kernel_go.go), so the results are the same bit for
// bit. The scalar loops are bound by the issue of one instruction per
// element and operation, and these passes are most of the time of coding.
//
// The wrappers slice the operands to len(w), so that an operand too short
// panics here rather than being read out of bounds.

//go:noescape
func add1SSE2(w, src, g []float64, v, tau float64, above []int32) int

//go:noescape
func add2SSE2(w, src, g0, g1 []float64, v0, v1, tau float64, above []int32) int

//go:noescape
func add4SSE2(w, src, g0, g1, g2, g3 []float64, v0, v1, v2, v3, tau float64, above []int32) int

// Add4 sets w to src plus four runs.
func Add4(w, src, g0, g1, g2, g3 []float64, v0, v1, v2, v3 float64) {
	n := len(w)
	add4SSE2(w, src[:n], g0[:n], g1[:n], g2[:n], g3[:n], v0, v1, v2, v3, 0, nil)
}

// Add4Above is Add4 that also lists the positions above τ.
func Add4Above(w, src, g0, g1, g2, g3 []float64, v0, v1, v2, v3 float64, tb uint64, above []int32) int {
	n := len(w)
	return add4SSE2(w, src[:n], g0[:n], g1[:n], g2[:n], g3[:n], v0, v1, v2, v3, math.Float64frombits(tb), above[:n])
}

// Add2 sets w to src plus two runs.
func Add2(w, src, g0, g1 []float64, v0, v1 float64) {
	n := len(w)
	add2SSE2(w, src[:n], g0[:n], g1[:n], v0, v1, 0, nil)
}

// Add2Above is Add2 that also lists the positions above τ.
func Add2Above(w, src, g0, g1 []float64, v0, v1 float64, tb uint64, above []int32) int {
	n := len(w)
	return add2SSE2(w, src[:n], g0[:n], g1[:n], v0, v1, math.Float64frombits(tb), above[:n])
}

// Add1 sets w to src plus one run.
func Add1(w, src, g []float64, v float64) {
	n := len(w)
	add1SSE2(w, src[:n], g[:n], v, 0, nil)
}

// Add1Above is Add1 that also lists the positions above τ.
func Add1Above(w, src, g []float64, v float64, tb uint64, above []int32) int {
	n := len(w)
	return add1SSE2(w, src[:n], g[:n], v, math.Float64frombits(tb), above[:n])
}
