package tensr

import (
	"fmt"
	"math"
)

// Coder solves the TenSR coding problem of one patch X (p₁×p₂×p₃, mode 1
// fastest) for a fixed separable dictionary:
//
//	min_B ½‖X − B×₁D₁×₂D₂×₃D₃‖² + λ‖B‖₁,   B of r₁×r₂×r₃,
//
// with FISTA in the tensor space (the paper's tensor-based ISTA with
// Nesterov momentum; Beck and Teboulle 2009). The gradient of the smooth
// part is
//
//	∇f(B) = B×₁G₁×₂G₂×₃G₃ − C,   Gₙ = DₙᵀDₙ (rₙ×rₙ),  C = X×₁D₁ᵀ×₂D₂ᵀ×₃D₃ᵀ,
//
// with C computed once per patch, and the step is 1/L with
// L = Π‖Dₙ‖₂² (Dictionary.Lipschitz), the exact Lipschitz constant.
// Iteration p, from B₀ (zero or a warm start), t₁ = 1, Y₁ = B₀:
//
//	B_p = soft(Y_p − ∇f(Y_p)/L, λ/L),  t_{p+1} = (1+√(1+4t_p²))/2,
//	Y_{p+1} = B_p + ((t_p−1)/t_{p+1})(B_p − B_{p−1}),
//
// until MaxIter iterations or ‖B_p − B_{p−1}‖ ≤ Tol·‖B_p‖. When the
// composite step points against the momentum, ⟨Y_p − B_p, B_p − B_{p−1}⟩ > 0,
// the momentum is reset (Y_{p+1} = B_p, t_{p+1} = 1): adaptive restart
// (O'Donoghue and Candès 2015), which keeps FISTA's rate and removes its
// oscillations on these small, well-conditioned-on-the-support problems.
//
// The Gram product B×₁G₁×₂G₂×₃G₃ costs Σ rₙ·r₁r₂r₃ multiply-adds densely.
// When the momentum point has few non-zeros it is cheaper to add, for
// every non-zero b at (k₁,k₂,k₃), b·G₁(:,k₁)⊗G₂(:,k₂)⊗G₃(:,k₃): the coder
// picks the cheaper of the two before every iteration from the count of
// non-zeros alone, so the result depends on the patch only.
//
// A Coder is immutable and safe for concurrent use with one Workspace per
// goroutine.
type Coder struct {
	dict      *Dictionary
	dt        [3][]float64 // Dₙᵀ, rₙ×pₙ
	gram      [3][]float64 // Gₙ, rₙ×rₙ (symmetric)
	lipschitz float64
	lambda    float64
	maxIter   int
	tol       float64
}

// NewCoder returns a coder for dictionary d, ℓ1 weight lambda ≥ 0, at most
// maxIter ≥ 1 FISTA iterations and relative-change tolerance tol (0: always
// maxIter iterations).
func NewCoder(d *Dictionary, lambda float64, maxIter int, tol float64) (*Coder, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if !(lambda >= 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("tensr: bad ℓ1 weight %v", lambda)
	}
	if maxIter < 1 {
		return nil, fmt.Errorf("tensr: at least one FISTA iteration is needed, got %d", maxIter)
	}
	c := &Coder{dict: d, lambda: lambda, maxIter: maxIter, tol: tol}
	for n := range 3 {
		c.dt[n] = transpose(d.D[n], d.Size[n], d.Atoms[n])
		c.gram[n] = gram(d.D[n], d.Size[n], d.Atoms[n])
	}
	c.lipschitz = d.Lipschitz()
	if !(c.lipschitz > 0) || math.IsInf(c.lipschitz, 0) {
		return nil, fmt.Errorf("tensr: the dictionary's Lipschitz constant is %v", c.lipschitz)
	}
	return c, nil
}

// Lipschitz returns the constant L of the coder's step 1/L.
func (c *Coder) Lipschitz() float64 { return c.lipschitz }

// Workspace is the scratch memory of one goroutine's calls to a Coder.
type Workspace struct {
	c, y, prev, grad []float64 // core-sized
	s1, s2           []float64 // mode-product intermediates
	nz               []int32   // indices of the non-zeros of the momentum point
}

// NewWorkspace returns scratch memory for c.
func (c *Coder) NewWorkspace() *Workspace {
	d := c.dict
	nc := d.CoreLen()
	// The largest intermediates of the three kinds of products (analysis
	// p→r, synthesis r→p, Gram r→r).
	s1, s2 := 0, 0
	for _, kr := range [][2][3]int{{d.Size, d.Atoms}, {d.Atoms, d.Size}, {d.Atoms, d.Atoms}} {
		a, b := scratchLen(kr[0], kr[1])
		s1, s2 = max(s1, a), max(s2, b)
	}
	return &Workspace{
		c: make([]float64, nc), y: make([]float64, nc), prev: make([]float64, nc), grad: make([]float64, nc),
		s1: make([]float64, s1), s2: make([]float64, s2), nz: make([]int32, nc),
	}
}

// Analyze sets dst (a core) to X×₁D₁ᵀ×₂D₂ᵀ×₃D₃ᵀ.
func (c *Coder) Analyze(ws *Workspace, dst, x []float64) {
	d := c.dict
	Multilinear(dst, x, d.Size, d.Atoms, c.dt, ws.s1, ws.s2)
}

// Synthesize sets dst (a patch) to B×₁D₁×₂D₂×₃D₃.
func (c *Coder) Synthesize(ws *Workspace, dst, b []float64) {
	d := c.dict
	Multilinear(dst, b, d.Atoms, d.Size, d.D, ws.s1, ws.s2)
}

// gramProduct sets dst = y×₁G₁×₂G₂×₃G₃, densely or from the non-zeros of
// y, whichever costs fewer multiply-adds.
func (c *Coder) gramProduct(ws *Workspace, dst, y []float64) {
	d := c.dict
	r := d.Atoms
	nz := ws.nz[:0]
	for i, v := range y {
		if v != 0 {
			nz = append(nz, int32(i))
		}
	}
	nc := len(y)
	dense := (r[0] + r[1] + r[2]) * nc
	sparse := len(nz) * (nc + r[1]*r[0] + 8)
	if dense <= sparse {
		Multilinear(dst, y, r, r, c.gram, ws.s1, ws.s2)
		return
	}
	clear(dst)
	r0, r1, r2 := r[0], r[1], r[2]
	g0, g1, g2 := c.gram[0], c.gram[1], c.gram[2]
	outer := ws.s1[:r1*r0] // G₂(:,k₂)⊗G₁(:,k₁) scaled by the coefficient
	for _, idx := range nz {
		i := int(idx)
		k0 := i % r0
		k1 := (i / r0) % r1
		k2 := i / (r0 * r1)
		v := y[i]
		for i1 := range r1 {
			w := v * g1[i1*r1+k1]
			o := outer[i1*r0 : (i1+1)*r0]
			for i0 := range o {
				o[i0] = w * g0[i0*r0+k0]
			}
		}
		for i2 := range r2 {
			w := g2[i2*r2+k2]
			out := dst[i2*r1*r0 : (i2+1)*r1*r0]
			out = out[:len(outer)]
			for j, o := range outer {
				out[j] += w * o
			}
		}
	}
}

// Code solves the coding problem for patch x into the core b. With warm
// false b is ignored and the iteration starts from zero; with warm true it
// starts from the given b. It returns the number of iterations run.
func (c *Coder) Code(ws *Workspace, b, x []float64, warm bool) int {
	c.Analyze(ws, ws.c, x)
	return c.codeFromAnalysis(ws, b, warm)
}

// codeFromAnalysis is Code once ws.c holds the analysis of the patch.
func (c *Coder) codeFromAnalysis(ws *Workspace, b []float64, warm bool) int {
	// B = 0 is a minimiser exactly when the gradient there, −C, lies in
	// λ·∂‖·‖₁(0), i.e. |C| ≤ λ everywhere: most patches of a smooth scene
	// at high noise need no iteration at all.
	zero := true
	for _, v := range ws.c[:len(b)] {
		if math.Abs(v) > c.lambda {
			zero = false
			break
		}
	}
	if zero || !warm {
		clear(b)
		if zero {
			return 0
		}
	}
	inv := 1 / c.lipschitz
	thr := c.lambda * inv
	y, prev, grad, cc := ws.y, ws.prev, ws.grad, ws.c
	y, prev, grad = y[:len(b)], prev[:len(b)], grad[:len(b)]
	cc = cc[:len(b)]
	copy(y, b)
	t := 1.0
	iter := 0
	for iter < c.maxIter {
		iter++
		c.gramProduct(ws, grad, y)
		copy(prev, b)
		tNext := (1 + math.Sqrt(1+4*t*t)) / 2
		mom := (t - 1) / tNext
		t = tNext
		var diff, norm, dir float64
		for i, yi := range y {
			v := yi - (grad[i]-cc[i])*inv
			switch {
			case v > thr:
				v -= thr
			case v < -thr:
				v += thr
			default:
				v = 0
			}
			b[i] = v
			dv := v - prev[i]
			diff += dv * dv
			norm += v * v
			dir += (yi - v) * dv
			y[i] = v + mom*dv
		}
		if diff <= c.tol*c.tol*norm {
			break
		}
		if dir > 0 {
			// Adaptive restart (O'Donoghue and Candès 2015): the step went
			// against the momentum, so drop it and restart from B_p.
			copy(y, b)
			t = 1
		}
	}
	return iter
}

// Objective returns ½‖X − B×₁D₁×₂D₂×₃D₃‖² + λ‖B‖₁ for patch x and core b.
// It allocates the synthesis: it is meant for tests, not for loops.
func (c *Coder) Objective(ws *Workspace, x, b []float64) float64 {
	rec := make([]float64, len(x))
	c.Synthesize(ws, rec, b)
	return c.objective(x, rec, b)
}

// objective is Objective with the synthesis rec of b given.
func (c *Coder) objective(x, rec, b []float64) float64 {
	fit := 0.0
	for i, v := range x {
		e := v - rec[i]
		fit += e * e
	}
	l1 := 0.0
	for _, v := range b {
		l1 += math.Abs(v)
	}
	return fit/2 + c.lambda*l1
}
