package multilinear

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"tdsc/internal/parallel"
)

// CP is a CP (PARAFAC) model of rank R: X ≈ Σ_r λ_r a_r ∘ b_r ∘ c_r, with
// the vectors the unit-norm columns of Factors[0..2] (Dims[n]×R) and λ the
// Weights.
type CP struct {
	Weights []float64
	Factors [3]*mat.Dense
}

// Rank is the number of components R.
func (m *CP) Rank() int { return len(m.Weights) }

// Reconstruct returns the full tensor Σ_r λ_r a_r ∘ b_r ∘ c_r.
func (m *CP) Reconstruct(ctx context.Context, workers int) (*Tensor, error) {
	a, b, c := m.Factors[0], m.Factors[1], m.Factors[2]
	i0, _ := a.Dims()
	i1, _ := b.Dims()
	i2, rank := c.Dims()
	out := New(i0, i1, i2)
	// Slice k of the result is A·diag(λ ∘ C[k,:])·Bᵀ.
	bt := mat.DenseCopyOf(b.T()).RawMatrix()
	err := forEach(ctx, i2, workers, func(k int, scratch []float64) {
		as := general(i0, rank, scratch[:i0*rank])
		ar := a.RawMatrix()
		for i := 0; i < i0; i++ {
			for r := 0; r < rank; r++ {
				as.Data[i*rank+r] = ar.Data[i*ar.Stride+r] * m.Weights[r] * c.At(k, r)
			}
		}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, as, bt, 0, general(i0, i1, out.Data[k*i0*i1:]))
	}, i0*rank)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CPInit says how CPALS starts.
type CPInit int

const (
	// InitHOSVD starts factor n from the leading min(R, Dims[n])
	// eigenvectors of the mode-n Gram matrix, completed with seeded random
	// columns when R > Dims[n].
	InitHOSVD CPInit = iota
	// InitRandom starts every factor from seeded standard normal entries.
	InitRandom
)

// CPOptions are the settings of CPALS.
type CPOptions struct {
	// MaxIter is the largest number of sweeps (0: 100).
	MaxIter int
	// Tol stops the sweeps when the squared residual decreases by less than
	// Tol times its previous value in one sweep (0: 1e-6).
	Tol float64
	// Init chooses the starting factors when Start is nil.
	Init CPInit
	// Seed seeds the random starting columns (PCG).
	Seed uint64
	// Start, if not nil, is the model to start from (its rank must be the
	// rank asked for); its factors are not modified.
	Start *CP
	// Workers is the number of goroutines (0: GOMAXPROCS).
	Workers int
	// Progress, if not nil, is called after every sweep with the sweep
	// number (from 1) and the squared residual.
	Progress func(iter int, residual float64)
}

// CPALS fits a rank-R CP model to x by alternating least squares: each step
// solves the linear least-squares problem for one factor with the other two
// fixed, A = X₍₀₎(C ⊙ B)(CᵀC ∗ BᵀB)⁺ (⊙ Khatri–Rao, ∗ elementwise), then
// moves the column norms of the new factor into the weights. Each step is
// an exact minimiser (the pseudo-inverse handles a singular Gram matrix),
// so the residual never increases. It returns the model and the squared
// residual ‖X − X̂‖² after every sweep; the residual is computed from the
// Gram matrices, ‖X‖² − 2⟨X, X̂⟩ + ‖X̂‖², at no extra pass over X.
func CPALS(ctx context.Context, x *Tensor, rank int, o CPOptions) (*CP, []float64, error) {
	if rank < 1 {
		return nil, nil, fmt.Errorf("multilinear: CP rank %d is not positive", rank)
	}
	if o.MaxIter == 0 {
		o.MaxIter = 100
	}
	if o.Tol == 0 {
		o.Tol = 1e-6
	}
	var f [3]*mat.Dense
	if o.Start != nil {
		if o.Start.Rank() != rank {
			return nil, nil, fmt.Errorf("multilinear: starting model of rank %d for rank %d", o.Start.Rank(), rank)
		}
		for n := range 3 {
			f[n] = mat.DenseCopyOf(o.Start.Factors[n])
		}
		// Carry the weights on the last factor, the first one updated
		// being the first factor, which ignores its own scale.
		f[2].Apply(func(_, r int, v float64) float64 { return v * o.Start.Weights[r] }, f[2])
	} else {
		var err error
		if f, err = cpStart(ctx, x, rank, o); err != nil {
			return nil, nil, err
		}
	}
	i0, i1, i2 := x.Dims[0], x.Dims[1], x.Dims[2]
	norm2 := x.SquaredNorm()
	weights := make([]float64, rank)
	t := make([]float64, i2*i0*rank)  // X·B as an (i2·i0)×R matrix
	kr := make([]float64, i2*i0*rank) // Khatri–Rao C ⊙ A as an (i2·i0)×R matrix
	m := [3]*mat.Dense{mat.NewDense(i0, rank, nil), mat.NewDense(i1, rank, nil), mat.NewDense(i2, rank, nil)}
	xv := general(i2*i0, i1, x.Data)
	var residuals []float64
	for iter := 1; iter <= o.MaxIter; iter++ {
		for n := range 3 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			// MTTKRP: m[n] = X₍ₙ₎ times the Khatri–Rao product of the others.
			switch n {
			case 0, 2:
				if err := gemmRows(ctx, o.Workers, blas.NoTrans, xv, f[1].RawMatrix(), general(i2*i0, rank, t)); err != nil {
					return nil, nil, err
				}
				mtt := m[n].RawMatrix()
				for i := range mtt.Data {
					mtt.Data[i] = 0
				}
				other := f[2]
				if n == 2 {
					other = f[0]
				}
				od := other.RawMatrix()
				for k := 0; k < i2; k++ {
					for i := 0; i < i0; i++ {
						row := t[(k*i0+i)*rank:][:rank]
						if n == 0 {
							dst, w := mtt.Data[i*rank:][:rank], od.Data[k*od.Stride:][:rank]
							for r, v := range row {
								dst[r] += v * w[r]
							}
						} else {
							dst, w := mtt.Data[k*rank:][:rank], od.Data[i*od.Stride:][:rank]
							for r, v := range row {
								dst[r] += v * w[r]
							}
						}
					}
				}
			case 1:
				ad, cd := f[0].RawMatrix(), f[2].RawMatrix()
				for k := 0; k < i2; k++ {
					for i := 0; i < i0; i++ {
						dst := kr[(k*i0+i)*rank:][:rank]
						ar, cr := ad.Data[i*ad.Stride:][:rank], cd.Data[k*cd.Stride:][:rank]
						for r := range dst {
							dst[r] = ar[r] * cr[r]
						}
					}
				}
				if err := gemmRows(ctx, o.Workers, blas.Trans, xv, general(i2*i0, rank, kr), m[1].RawMatrix()); err != nil {
					return nil, nil, err
				}
			}
			// The Gram matrix of the Khatri–Rao product is the elementwise
			// product of the other factors' Gram matrices.
			p, q := others(n)
			g := mat.NewSymDense(rank, nil)
			var gp, gq mat.Dense
			gp.Mul(f[p].T(), f[p])
			gq.Mul(f[q].T(), f[q])
			for r := 0; r < rank; r++ {
				for s := r; s < rank; s++ {
					g.SetSym(r, s, gp.At(r, s)*gq.At(r, s))
				}
			}
			next, err := solvePSD(m[n], g)
			if err != nil {
				return nil, nil, err
			}
			f[n] = next
			if n == 2 {
				// ⟨X, X̂⟩ = Σ m₂ ∘ C and ‖X̂‖² = Σ (AᵀA ∗ BᵀB ∗ CᵀC) with C
				// still carrying the weights.
				inner := 0.0
				md, cd := m[2].RawMatrix(), next.RawMatrix()
				for k := 0; k < i2; k++ {
					for r := 0; r < rank; r++ {
						inner += md.Data[k*md.Stride+r] * cd.Data[k*cd.Stride+r]
					}
				}
				var gc mat.Dense
				gc.Mul(next.T(), next)
				model := 0.0
				for r := 0; r < rank; r++ {
					for s := 0; s < rank; s++ {
						model += g.At(r, s) * gc.At(r, s)
					}
				}
				residuals = append(residuals, math.Max(norm2-2*inner+model, 0))
			}
			normalizeColumns(f[n], weights)
		}
		r := residuals[len(residuals)-1]
		if o.Progress != nil {
			o.Progress(iter, r)
		}
		if len(residuals) > 1 {
			prev := residuals[len(residuals)-2]
			if prev-r < o.Tol*prev {
				break
			}
		}
	}
	return &CP{Weights: weights, Factors: f}, residuals, nil
}

// normalizeColumns scales every column of f to unit norm and stores the
// norms in w (a zero column stays zero with weight 0).
func normalizeColumns(f *mat.Dense, w []float64) {
	rows, cols := f.Dims()
	for c := 0; c < cols; c++ {
		s := 0.0
		for r := 0; r < rows; r++ {
			v := f.At(r, c)
			s += v * v
		}
		s = math.Sqrt(s)
		w[c] = s
		if s > 0 {
			for r := 0; r < rows; r++ {
				f.Set(r, c, f.At(r, c)/s)
			}
		}
	}
}

// solvePSD returns m·G⁺ for a symmetric positive semidefinite G, with the
// pseudo-inverse from its eigendecomposition (eigenvalues below
// R·ε·λ_max count as zero).
func solvePSD(m *mat.Dense, g *mat.SymDense) (*mat.Dense, error) {
	var eig mat.EigenSym
	if !eig.Factorize(g, true) {
		return nil, fmt.Errorf("multilinear: eigendecomposition of the CP Gram matrix failed")
	}
	vals := eig.Values(nil)
	var q mat.Dense
	eig.VectorsTo(&q)
	n := len(vals)
	cut := float64(n) * 2.2e-16 * math.Abs(vals[n-1])
	var mq mat.Dense
	mq.Mul(m, &q)
	for c := 0; c < n; c++ {
		inv := 0.0
		if vals[c] > cut {
			inv = 1 / vals[c]
		}
		rows, _ := mq.Dims()
		for r := 0; r < rows; r++ {
			mq.Set(r, c, mq.At(r, c)*inv)
		}
	}
	var out mat.Dense
	out.Mul(&mq, q.T())
	return &out, nil
}

// cpStart returns the starting factors of CPALS (CPOptions.Init).
func cpStart(ctx context.Context, x *Tensor, rank int, o CPOptions) ([3]*mat.Dense, error) {
	var f [3]*mat.Dense
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	for n := range 3 {
		d := x.Dims[n]
		f[n] = mat.NewDense(d, rank, nil)
		lead := 0
		if o.Init == InitHOSVD {
			g, err := Gram(ctx, x, n, o.Workers)
			if err != nil {
				return f, err
			}
			lead = min(rank, d)
			_, u, _, err := TopEigen(g, lead)
			if err != nil {
				return f, err
			}
			f[n].Slice(0, d, 0, lead).(*mat.Dense).Copy(u)
		}
		for c := lead; c < rank; c++ {
			for r := 0; r < d; r++ {
				f[n].Set(r, c, rng.NormFloat64())
			}
		}
	}
	return f, nil
}

// forEach runs fn(i, scratch) for i in [0, n) in parallel, with a scratch
// slice of the given length per worker.
func forEach(ctx context.Context, n, workers int, fn func(i int, scratch []float64), scratchLen int) error {
	w := parallel.Workers(workers)
	scratch := make([][]float64, w)
	return parallel.For(ctx, n, w, func(worker, i int) error {
		if scratch[worker] == nil {
			scratch[worker] = make([]float64, scratchLen)
		}
		fn(i, scratch[worker])
		return nil
	})
}
