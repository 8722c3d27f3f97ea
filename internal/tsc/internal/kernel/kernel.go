// Package kernel holds the inner loops of the sparse gradient step of the
// tsc encoder: passes over a step w that add runs of a time-domain table,
//
//	w[i] = src[i] + (v0·g0[i] + v1·g1[i] + …)
//
// for one, two or four runs g with values v (the products added left to
// right, then added to src[i]; src may be w), for i < len(w); every run and
// src must hold at least len(w) values. The …Above variants also write to
// above, in increasing order, the positions i with |w[i]| > τ, where tb is
// the bit pattern of τ ≥ 0 and a NaN counts as above, and return their
// number; above must hold len(w) values.
//
// On amd64 the loops are SSE2 assembly, two elements per instruction, with
// the same operations in the same order as the portable Go loops, so both
// give the same results bit for bit; the build tag purego selects the Go
// loops everywhere. They live in a package of their own because Go
// assembly cannot sit in a package that uses cgo, as tsc does with OpenBLAS.
package kernel
