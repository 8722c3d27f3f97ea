package tproduct

import "fmt"

// Tensor is a real M×N×K tensor.
//
// Layout: the lateral slices (the N columns: patches of a batch, atoms of a
// dictionary) are contiguous M×K blocks, each stored tube-band by tube-band:
// element (i, j, t) is Data[(j*K+t)*M+i]. A patch of p×p pixels and q bands
// is thus q consecutive runs of p² pixels (row-major within the window).
type Tensor struct {
	M, N, K int
	Data    []float64
}

// NewTensor returns a zero M×N×K tensor. It panics if a dimension is not
// positive.
func NewTensor(m, n, k int) *Tensor {
	if m <= 0 || n <= 0 || k <= 0 {
		panic(fmt.Sprintf("tsc: bad tensor size %d×%d×%d", m, n, k))
	}
	return &Tensor{M: m, N: n, K: k, Data: make([]float64, m*n*k)}
}

// At returns element (i, j, t).
func (x *Tensor) At(i, j, t int) float64 { return x.Data[(j*x.K+t)*x.M+i] }

// Set sets element (i, j, t) to v.
func (x *Tensor) Set(i, j, t int, v float64) { x.Data[(j*x.K+t)*x.M+i] = v }

// Lateral returns lateral slice j (column j: one patch or atom) as an M×K
// block laid out band by band; it aliases x.Data.
func (x *Tensor) Lateral(j int) []float64 {
	n := x.M * x.K
	return x.Data[j*n : (j+1)*n : (j+1)*n]
}

// Slice returns the lateral slices j0..j1-1 as a tensor that aliases x.Data.
func (x *Tensor) Slice(j0, j1 int) *Tensor {
	n := x.M * x.K
	return &Tensor{M: x.M, N: j1 - j0, K: x.K, Data: x.Data[j0*n : j1*n : j1*n]}
}
