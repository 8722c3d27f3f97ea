package tsc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/option"
)

// LearnOptions sets the dictionary learning of Learn.
type LearnOptions struct {
	Atoms      int     // R, the number of atoms (≥ 1)
	Beta       float64 // ℓ1 weight β (finite, ≥ 0)
	Iters      int     // maximum outer iterations (≥ 1; the paper uses ≤ 30)
	InnerIters int     // FISTA iterations of every coding step (≥ 1)
	// Tol stops learning once |obj_{p−1} − obj_p| ≤ Tol·obj_p between two
	// outer iterations (0: run all Iters).
	Tol float64
	// Seed drives the initialisation: R distinct training patches drawn at
	// random among the non-zero ones, normalised to unit norm.
	Seed uint64
	// Threads is the number of goroutines (≤ 0: runtime.GOMAXPROCS(0)).
	// The result does not depend on it.
	Threads int
	// Progress, if not nil, is called after every outer iteration with its
	// number (1-based) and the objective after its dictionary step.
	Progress func(iter int, objective float64)
}

// LearnResult is the outcome of Learn.
type LearnResult struct {
	// Dict is the learned M×R×K dictionary; ‖Dict(:,j,:)‖_F² ≤ 1 + 1e−9.
	Dict *tproduct.Tensor
	// Codes are the R×N×K coefficients of the training patches that the
	// last objective value is for.
	Codes *tproduct.Tensor
	// Objective holds ½‖X − D*B‖_F² + β‖B‖₁ after the dictionary step of
	// every outer iteration; it does not increase (up to round-off).
	Objective []float64
	// Iterations is the number of outer iterations run (len(Objective)).
	Iterations int
	// CodesKept counts the coding steps whose result was discarded because
	// it did not lower the objective (the previous codes were kept).
	CodesKept int
	// Reseeded counts the dead atoms re-seeded over all iterations.
	Reseeded int
}

// seedStream is the second word of the PCG state of the initialisation, so
// that Seed alone selects the stream.
const seedStream = 0x2d5c_d1c7

// Learn learns a dictionary of opt.Atoms atoms for the training patches x
// (M×N×K, one patch per lateral slice, typically mean-removed) by
// Algorithm 1 of the paper (docs/model.md §5): starting from randomly chosen,
// normalised training patches, it alternates
//
//  1. coding all of X with the current D by FISTA (Encoder.Encode over
//     batches on opt.Threads goroutines, opt.InnerIters iterations, warm-started from the previous codes after
//     the first iteration), and
//  2. the dictionary update by the Lagrange dual (dictUpdater),
//
// for at most opt.Iters outer iterations, stopping early by opt.Tol.
//
// FISTA with a fixed iteration budget is not monotone, so a warm-started
// coding step can end above the objective it started from. Such a step is
// discarded and the previous codes are kept (the check is free: the
// statistics gathered for the dictionary step give the objective), so the
// recorded objective never increases.
//
// Learn stops when ctx is done: it returns ctx.Err() within one batch of
// coding or one chunk of the dictionary step, so that an interrupted command
// does not wait for a long outer iteration to end. It returns an error if
// the options are invalid, x holds a NaN or an infinity, or fewer than
// opt.Atoms training patches are non-zero.
func Learn(ctx context.Context, x *tproduct.Tensor, opt LearnOptions) (*LearnResult, error) {
	return learn(ctx, x, opt, func(d, b *tproduct.Tensor, warm bool, threads int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		enc, err := NewEncoder(d, EncodeOptions{Beta: opt.Beta, MaxIter: opt.InnerIters})
		if err != nil {
			return err
		}
		enc.encodeAll(ctx, b, x, warm, threads)
		return ctx.Err()
	})
}

// coder sets the codes b of the training patches for the dictionary d,
// starting from b when warm.
type coder func(d, b *tproduct.Tensor, warm bool, threads int) error

// learn is Learn with the coding step given by code; ctx stops the
// dictionary steps (code watches it itself).
func learn(ctx context.Context, x *tproduct.Tensor, opt LearnOptions, code coder) (*LearnResult, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if x == nil || x.M < 1 || x.N < 1 || x.K < 1 || len(x.Data) != x.M*x.N*x.K {
		return nil, errors.New("tsc: Learn: malformed training tensor")
	}
	for _, v := range x.Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("tsc: Learn: the training patches hold a NaN or infinite value")
		}
	}
	m, n, k, r := x.M, x.N, x.K, opt.Atoms
	threads := opt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	d, err := initDictionary(x, r, opt.Seed)
	if err != nil {
		return nil, err
	}

	u := newDictUpdater(m, r, k, threads)
	// The accepted codes and their statistics, and the candidates of the
	// current coding step.
	var prevStats, curStats dictStats
	prevStats.init(m, r, k)
	curStats.init(m, r, k)
	prevB, curB := tproduct.NewTensor(r, n, k), tproduct.NewTensor(r, n, k)
	if err := u.accumulate(ctx, &prevStats, x, prevB); err != nil {
		return nil, err
	}
	prevObj := u.objective(&prevStats, d, opt.Beta) // ½‖X‖²

	res := &LearnResult{Dict: d}
	for p := range opt.Iters {
		copy(curB.Data, prevB.Data)
		if err := code(d, curB, p > 0, threads); isContextErr(err) {
			return nil, err
		} else if err != nil {
			return nil, fmt.Errorf("tsc: Learn: outer iteration %d: %w", p+1, err)
		}
		if err := u.accumulate(ctx, &curStats, x, curB); err != nil {
			return nil, err
		}
		if !curStats.finite {
			return nil, fmt.Errorf("tsc: Learn: outer iteration %d: the codes hold a NaN or infinite value", p+1)
		}
		if u.objective(&curStats, d, opt.Beta) <= prevObj {
			prevB, curB = curB, prevB
			prevStats, curStats = curStats, prevStats
		} else {
			res.CodesKept++
		}
		info, err := u.solve(ctx, d, &prevStats, x, prevB)
		if isContextErr(err) {
			return nil, err
		} else if err != nil {
			return nil, fmt.Errorf("tsc: Learn: outer iteration %d: %w", p+1, err)
		}
		res.Reseeded += info.Dead
		obj := info.Objective + opt.Beta*prevStats.l1
		res.Objective = append(res.Objective, obj)
		res.Iterations = p + 1
		if opt.Progress != nil {
			opt.Progress(p+1, obj)
		}
		if p > 0 && opt.Tol > 0 && math.Abs(prevObj-obj) <= opt.Tol*obj {
			break
		}
		prevObj = obj
	}
	res.Codes = prevB
	return res, nil
}

// isContextErr reports whether err is a context's: Learn returns those as
// they are, so that callers can tell an interrupt from a failure.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Validate checks the options of Learn and returns an *option.Error naming
// the first bad one (Field in the spelling of the command-line flags:
// atoms, beta, iters, inner-iters, tol).
func (opt *LearnOptions) Validate() error {
	switch {
	case opt.Atoms < 1:
		return option.Errorf("atoms", opt.Atoms, "atoms must be at least 1, got %d", opt.Atoms)
	case !(opt.Beta >= 0) || math.IsInf(opt.Beta, 0):
		return option.Errorf("beta", opt.Beta, "beta must be a finite number ≥ 0, got %v", opt.Beta)
	case opt.Iters < 1:
		return option.Errorf("iters", opt.Iters, "iters (outer iterations) must be at least 1, got %d", opt.Iters)
	case opt.InnerIters < 1:
		return option.Errorf("inner-iters", opt.InnerIters, "inner-iters (coding iterations) must be at least 1, got %d", opt.InnerIters)
	case !(opt.Tol >= 0) || math.IsInf(opt.Tol, 0):
		return option.Errorf("tol", opt.Tol, "tol (tolerance) must be a finite number ≥ 0, got %v", opt.Tol)
	}
	return nil
}

// objective returns ½‖X − D*B‖_F² + β‖B‖₁ for the dictionary d from the
// statistics st of X and B.
func (u *dictUpdater) objective(st *dictStats, d *tproduct.Tensor, beta float64) float64 {
	u.dft.Forward(u.dh, d)
	return st.dataTerm(u.dh)/2 + beta*st.l1
}

// initDictionary returns r distinct non-zero patches of x, chosen at random
// with the given seed and normalised to unit norm, as an M×r×K dictionary.
func initDictionary(x *tproduct.Tensor, r int, seed uint64) (*tproduct.Tensor, error) {
	usable := make([]int, 0, x.N)
	for j := range x.N {
		if sumSquares(x.Lateral(j)) > 0 {
			usable = append(usable, j)
		}
	}
	if len(usable) < r {
		return nil, fmt.Errorf("tsc: Learn: %d of the %d training patches are non-zero, fewer than the %d atoms",
			len(usable), x.N, r)
	}
	rng := rand.New(rand.NewPCG(seed, seedStream))
	d := tproduct.NewTensor(x.M, r, x.K)
	for q := range r {
		// Partial Fisher–Yates: usable[q] becomes a uniform pick among the
		// patches not yet drawn.
		i := q + rng.IntN(len(usable)-q)
		usable[q], usable[i] = usable[i], usable[q]
		src, dst := x.Lateral(usable[q]), d.Lateral(q)
		s := 1 / math.Sqrt(sumSquares(src))
		for t, v := range src {
			dst[t] = v * s
		}
		if n2 := sumSquares(dst); n2 > 1 {
			s := 1 / math.Sqrt(n2)
			for t := range dst {
				dst[t] *= s
			}
		}
	}
	return d, nil
}
