package multilinear

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Tucker is a Tucker model X ≈ G ×₀ U₀ ×₁ U₁ ×₂ U₂ with a core G of size
// Ranks and factors Uₙ (Dims[n]×Ranks[n]) with orthonormal columns.
type Tucker struct {
	Core    *Tensor
	Factors [3]*mat.Dense
}

// Reconstruct returns the full tensor G ×₀ U₀ ×₁ U₁ ×₂ U₂.
func (t *Tucker) Reconstruct(ctx context.Context, workers int) (*Tensor, error) {
	return MultiplyModes(ctx, t.Core, [3]mat.Matrix{t.Factors[0], t.Factors[1], t.Factors[2]}, workers)
}

// TuckerOptions are the settings of HOOI.
type TuckerOptions struct {
	// MaxIter is the largest number of sweeps over the modes (0: 50).
	MaxIter int
	// Tol stops the sweeps when the fit 1 − ‖X − X̂‖/‖X‖ improves by less
	// than Tol in one sweep (0: 1e-8).
	Tol float64
	// Workers is the number of goroutines (0: GOMAXPROCS).
	Workers int
}

func checkRanks(x *Tensor, ranks [3]int) error {
	for n, r := range ranks {
		if r < 1 || r > x.Dims[n] {
			return fmt.Errorf("multilinear: rank %d of mode %d is not in [1, %d]", r, n, x.Dims[n])
		}
	}
	return nil
}

// HOSVD returns the truncated higher-order SVD of x: Uₙ are the leading
// Ranks[n] left singular vectors of X₍ₙ₎ (eigenvectors of its Gram matrix)
// and the core is X ×ₙ Uₙᵀ over all modes. It is exact when x has
// multilinear rank at most ranks.
func HOSVD(ctx context.Context, x *Tensor, ranks [3]int, workers int) (*Tucker, error) {
	if err := checkRanks(x, ranks); err != nil {
		return nil, err
	}
	var model Tucker
	for n := range 3 {
		g, err := Gram(ctx, x, n, workers)
		if err != nil {
			return nil, err
		}
		_, u, _, err := TopEigen(g, ranks[n])
		if err != nil {
			return nil, err
		}
		model.Factors[n] = u
	}
	core, err := MultiplyModes(ctx, x, transposes(model.Factors, -1), workers)
	if err != nil {
		return nil, err
	}
	model.Core = core
	return &model, nil
}

// transposes returns the transposes of f as matrices, leaving out mode
// skip (nil there).
func transposes(f [3]*mat.Dense, skip int) [3]mat.Matrix {
	var out [3]mat.Matrix
	for n, u := range f {
		if n != skip {
			out[n] = u.T()
		}
	}
	return out
}

// HOOI fits a Tucker model of the given ranks to x by higher-order
// orthogonal iteration (alternating least squares over the factors,
// de Lathauwer et al. 2000), starting from the HOSVD. Each step sets Uₙ to
// the leading left singular vectors of (X ×ₘ Uₘᵀ, m ≠ n)₍ₙ₎, which
// maximises ‖G‖ with the other factors fixed, so the residual
// ‖X − X̂‖² = ‖X‖² − ‖G‖² never increases. It returns the model and the
// squared residual after the HOSVD and after every sweep.
func HOOI(ctx context.Context, x *Tensor, ranks [3]int, o TuckerOptions) (*Tucker, []float64, error) {
	if o.MaxIter == 0 {
		o.MaxIter = 50
	}
	if o.Tol == 0 {
		o.Tol = 1e-8
	}
	model, err := HOSVD(ctx, x, ranks, o.Workers)
	if err != nil {
		return nil, nil, err
	}
	norm2 := x.SquaredNorm()
	residuals := []float64{math.Max(norm2-model.Core.SquaredNorm(), 0)}
	fit := func(r float64) float64 {
		if norm2 == 0 {
			return 1
		}
		return 1 - math.Sqrt(r/norm2)
	}
	for iter := 0; iter < o.MaxIter; iter++ {
		var core *Tensor
		for n := range 3 {
			y, err := MultiplyModes(ctx, x, transposes(model.Factors, n), o.Workers)
			if err != nil {
				return nil, nil, err
			}
			g, err := Gram(ctx, y, n, o.Workers)
			if err != nil {
				return nil, nil, err
			}
			_, u, _, err := TopEigen(g, ranks[n])
			if err != nil {
				return nil, nil, err
			}
			model.Factors[n] = u
			if n == 2 {
				if core, err = ModeProduct(ctx, y, n, u.T(), o.Workers); err != nil {
					return nil, nil, err
				}
			}
		}
		model.Core = core
		r := math.Max(norm2-core.SquaredNorm(), 0)
		prev := residuals[len(residuals)-1]
		residuals = append(residuals, r)
		if fit(r)-fit(prev) < o.Tol {
			break
		}
	}
	return model, residuals, nil
}
