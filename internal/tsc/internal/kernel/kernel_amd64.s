//go:build amd64 && !purego

#include "textflag.h"

// The loops of the package in SSE2; see kernel.go and kernel_amd64.go. Every function
// computes w[i] = src[i] + sum(i) for i < len(w), where sum(i) is the sum
// of v·g[i] over its runs, added left to right as in the portable loops,
// two elements per instruction and the last one alone when len(w) is odd.
// With above != nil it also writes to above the positions i with
// |w[i]| > tau (a NaN counts: the comparison is "not ≤") in increasing
// order and returns their number; with above == nil it returns 0.
//
// Registers: DI w, SI src, R8–R11 the runs, AX i, BX the count, R12 above,
// R13 len(w) rounded down to even, X0–X3 the values broadcast to both
// lanes, X6 tau broadcast, X7 the mask that clears the sign bits.

// SETUP loads the common operands; the runs and their values are loaded by
// each function.
#define SETUP(tauOff, aboveOff) \
	MOVQ w_base+0(FP), DI \
	MOVQ w_len+8(FP), R13 \
	ANDQ $-2, R13 \
	MOVQ src_base+24(FP), SI \
	MOVSD tauOff(FP), X6 \
	UNPCKLPD X6, X6 \
	PCMPEQL X7, X7 \
	PSRLQ $1, X7 \
	MOVQ aboveOff(FP), R12 \
	XORQ AX, AX \
	XORQ BX, BX

// TEST sets DX to the bits (lane 0, lane 1) of |X4| > tau; X4 is lost.
#define TEST \
	ANDPD X7, X4 \
	CMPPD X6, X4, $6 \
	MOVMSKPD X4, DX

// RECORD appends i (lane 0) and i+1 (lane 1) to above as DX says. Both are
// stored; a position whose bit is clear is overwritten by the next one.
#define RECORD \
	MOVQ DX, CX \
	ANDQ $1, CX \
	MOVL AX, (R12)(BX*4) \
	ADDQ CX, BX \
	SHRQ $1, DX \
	LEAQ 1(AX), CX \
	MOVL CX, (R12)(BX*4) \
	ADDQ DX, BX

// RECORD1 appends i if bit 0 of DX is set (the odd last element).
#define RECORD1 \
	ANDQ $1, DX \
	MOVL AX, (R12)(BX*4) \
	ADDQ DX, BX

// SUM1, SUM2 and SUM4 set X4 to the sum for elements i and i+1 (MOVUPD,
// MULPD, ADDPD) or element i alone (MOVSD, MULSD, ADDSD), src included.
#define SUM1(MOV, MUL, ADD) \
	MOV (R8)(AX*8), X4 \
	MUL X0, X4 \
	MOV (SI)(AX*8), X5 \
	ADD X5, X4

#define SUM2(MOV, MUL, ADD) \
	MOV (R8)(AX*8), X4 \
	MUL X0, X4 \
	MOV (R9)(AX*8), X5 \
	MUL X1, X5 \
	ADD X5, X4 \
	MOV (SI)(AX*8), X5 \
	ADD X5, X4

#define SUM4(MOV, MUL, ADD) \
	MOV (R8)(AX*8), X4 \
	MUL X0, X4 \
	MOV (R9)(AX*8), X5 \
	MUL X1, X5 \
	ADD X5, X4 \
	MOV (R10)(AX*8), X5 \
	MUL X2, X5 \
	ADD X5, X4 \
	MOV (R11)(AX*8), X5 \
	MUL X3, X5 \
	ADD X5, X4 \
	MOV (SI)(AX*8), X5 \
	ADD X5, X4

// BODY is the loop of one function: SUM is its sum, retOff the offset of
// its result.
#define BODY(SUM, retOff) \
	TESTQ R12, R12 \
	JZ plain \
test: \
	CMPQ AX, R13 \
	JGE testlast \
	SUM(MOVUPD, MULPD, ADDPD) \
	MOVUPD X4, (DI)(AX*8) \
	TEST \
	TESTQ DX, DX \
	JZ testnext \
	RECORD \
testnext: \
	ADDQ $2, AX \
	JMP test \
testlast: \
	CMPQ AX, w_len+8(FP) \
	JGE done \
	SUM(MOVSD, MULSD, ADDSD) \
	MOVSD X4, (DI)(AX*8) \
	TEST \
	RECORD1 \
done: \
	MOVQ BX, retOff(FP) \
	RET \
plain: \
	CMPQ AX, R13 \
	JGE plainlast \
	SUM(MOVUPD, MULPD, ADDPD) \
	MOVUPD X4, (DI)(AX*8) \
	ADDQ $2, AX \
	JMP plain \
plainlast: \
	CMPQ AX, w_len+8(FP) \
	JGE done \
	SUM(MOVSD, MULSD, ADDSD) \
	MOVSD X4, (DI)(AX*8) \
	JMP done

// func add1SSE2(w, src, g []float64, v, tau float64, above []int32) int
TEXT ·add1SSE2(SB), NOSPLIT, $0-120
	SETUP(tau+80, above_base+88)
	MOVQ g_base+48(FP), R8
	MOVSD v+72(FP), X0
	UNPCKLPD X0, X0
	BODY(SUM1, ret+112)

// func add2SSE2(w, src, g0, g1 []float64, v0, v1, tau float64, above []int32) int
TEXT ·add2SSE2(SB), NOSPLIT, $0-152
	SETUP(tau+112, above_base+120)
	MOVQ g0_base+48(FP), R8
	MOVQ g1_base+72(FP), R9
	MOVSD v0+96(FP), X0
	UNPCKLPD X0, X0
	MOVSD v1+104(FP), X1
	UNPCKLPD X1, X1
	BODY(SUM2, ret+144)

// func add4SSE2(w, src, g0, g1, g2, g3 []float64, v0, v1, v2, v3, tau float64, above []int32) int
TEXT ·add4SSE2(SB), NOSPLIT, $0-216
	SETUP(tau+176, above_base+184)
	MOVQ g0_base+48(FP), R8
	MOVQ g1_base+72(FP), R9
	MOVQ g2_base+96(FP), R10
	MOVQ g3_base+120(FP), R11
	MOVSD v0+144(FP), X0
	UNPCKLPD X0, X0
	MOVSD v1+152(FP), X1
	UNPCKLPD X1, X1
	MOVSD v2+160(FP), X2
	UNPCKLPD X2, X2
	MOVSD v3+168(FP), X3
	UNPCKLPD X3, X3
	BODY(SUM4, ret+208)
