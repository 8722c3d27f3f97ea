package tensr

import (
	"context"
	"fmt"
	"math"

	"tdsc/internal/parallel"
)

// learnChunk is the number of training patches one parallel task handles.
// It is fixed, not derived from the number of workers, so that the partial
// sums of a pass, added in chunk order, are the same for every thread count.
const learnChunk = 128

// dictSweeps bounds the column sweeps of one mode's dictionary update, and
// dictSweepTol stops them once no column moved by more than that (the
// columns have norm ≤ 1).
const (
	dictSweeps   = 100
	dictSweepTol = 1e-10
)

// LearnOptions are the settings of Learn.
type LearnOptions struct {
	Lambda    float64 // ℓ1 weight λ
	Iters     int     // maximum outer iterations (coding, then the three modes)
	CodeIters int     // maximum FISTA iterations of a training code per outer iteration
	CodeTol   float64 // relative change that stops a code's FISTA early
	// Tol stops learning once the objective's relative decrease over an
	// outer iteration falls below it (0: always run Iters).
	Tol     float64
	Threads int // worker goroutines (≤ 0: GOMAXPROCS); the result does not depend on it
	// Progress, if not nil, is called after every outer iteration with its
	// number (from 1) and the objective.
	Progress func(iter int, objective float64)
}

// LearnResult is a learned dictionary and its training objective after
// every outer iteration.
type LearnResult struct {
	Dict      *Dictionary
	Objective []float64
}

// Learn learns a separable dictionary from the n training patches in x
// (patch j is x[j·P:(j+1)·P], P = p₁p₂p₃, mode 1 fastest), starting from
// init (which it does not modify), by alternating minimisation of
//
//	F(D₁,D₂,D₃,{Bⱼ}) = Σⱼ ½‖Xⱼ − Bⱼ×₁D₁×₂D₂×₃D₃‖² + λ‖Bⱼ‖₁,  ‖dₙ,ₖ‖ ≤ 1,
//
// repeating two steps:
//
//  1. Coding: every Bⱼ by FISTA (Coder) warm-started from its previous
//     value; the new code is kept only if it lowers the patch's objective,
//     so this step never increases F (FISTA itself is not monotone).
//  2. Dictionary, mode by mode (n = 1, 2, 3, each with the latest other
//     two): with the codes fixed, F in Dₙ is the constrained least squares
//     ½‖X₍ₙ₎ − DₙWₙ‖² with Wₙ the mode-n unfolding of Bⱼ×ₘ≠ₙDₘ over all
//     patches. Only Sₙ = WₙWₙᵀ (rₙ×rₙ) and Yₙ = X₍ₙ₎Wₙᵀ (pₙ×rₙ) touch the
//     data, accumulated in one pass. The paper solves this problem through
//     its Lagrange dual; here it is solved by block-coordinate descent over
//     the columns (as in Mairal et al.'s online dictionary learning): with
//     the others fixed, column k's exact minimiser on the unit ball is the
//     unconstrained one, dₖ + (Yₙ(:,k) − DₙSₙ(:,k))/Sₙ(k,k), projected onto
//     the ball, because that block's Hessian is Sₙ(k,k)·I. Every column
//     step is exact, so the step never increases F, and the sweeps
//     converge to the same minimiser as the dual. A column whose Sₙ(k,k)
//     is zero (no code uses it) is left as it is.
//
// The objective recorded after an iteration is F after its dictionary
// update. Learning stops after Iters iterations or when F's relative
// decrease falls below Tol. It stops with ctx.Err() when ctx is cancelled.
func Learn(ctx context.Context, x []float64, n int, init *Dictionary, o LearnOptions) (*LearnResult, error) {
	if err := init.check(); err != nil {
		return nil, err
	}
	plen, clen := init.PatchLen(), init.CoreLen()
	if n < 1 || len(x) < n*plen {
		return nil, fmt.Errorf("tensr: %d training patches of %d values need %d values, got %d", n, plen, n*plen, len(x))
	}
	if o.Iters < 1 {
		return nil, fmt.Errorf("tensr: at least one learning iteration is needed, got %d", o.Iters)
	}
	dict := init.Clone()
	codes := make([]float64, n*clen)
	workers := parallel.Workers(o.Threads)
	chunks := (n + learnChunk - 1) / learnChunk

	type scratch struct {
		trial, rec, w []float64
		ws            *Workspace
	}
	maxW := 0
	for m := range 3 {
		maxW = max(maxW, plen/init.Size[m]*init.Atoms[m])
	}
	scr := make([]scratch, workers)
	for i := range scr {
		scr[i] = scratch{trial: make([]float64, clen), rec: make([]float64, plen), w: make([]float64, maxW)}
	}

	res := &LearnResult{}
	prevObj := math.Inf(1)
	for iter := 1; iter <= o.Iters; iter++ {
		coder, err := NewCoder(dict, o.Lambda, o.CodeIters, o.CodeTol)
		if err != nil {
			return nil, err
		}
		for i := range scr {
			scr[i].ws = coder.NewWorkspace()
		}
		// 1. Coding, kept per patch only when it helps.
		err = parallel.For(ctx, chunks, workers, func(w, ch int) error {
			s := &scr[w]
			for j := ch * learnChunk; j < min((ch+1)*learnChunk, n); j++ {
				xj := x[j*plen : (j+1)*plen]
				bj := codes[j*clen : (j+1)*clen]
				coder.Synthesize(s.ws, s.rec, bj)
				old := coder.objective(xj, s.rec, bj)
				copy(s.trial, bj)
				coder.Code(s.ws, s.trial, xj, true)
				coder.Synthesize(s.ws, s.rec, s.trial)
				if coder.objective(xj, s.rec, s.trial) <= old {
					copy(bj, s.trial)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		// 2. Dictionary, one mode at a time.
		var obj float64
		for mode := range 3 {
			sums, err := modeSums(ctx, x, codes, n, dict, mode, workers, func(w int) []float64 { return scr[w].w })
			if err != nil {
				return nil, err
			}
			updateMode(dict, mode, sums)
			if mode == 2 {
				obj = sums.objective(dict.D[mode], o.Lambda)
			}
		}
		res.Objective = append(res.Objective, obj)
		if o.Progress != nil {
			o.Progress(iter, obj)
		}
		if o.Tol > 0 && prevObj-obj <= o.Tol*math.Abs(obj) {
			break
		}
		prevObj = obj
	}
	res.Dict = dict
	return res, nil
}

// modeStats are the sums of one mode's dictionary update over the training
// set: S = WWᵀ (r×r), Y = X₍ₙ₎Wᵀ (p×r), and, for the objective, Σ‖Xⱼ‖² and
// Σ‖Bⱼ‖₁.
type modeStats struct {
	p, r   int
	s, y   []float64
	xx, l1 float64
}

// objective returns F for the codes of these sums and the mode matrix m
// (p×r) that they were taken for, the other two modes as they were when
// summing: ½Σ‖Xⱼ‖² − ⟨m, Y⟩ + ½⟨mᵀm, S⟩ + λΣ‖Bⱼ‖₁.
func (st *modeStats) objective(m []float64, lambda float64) float64 {
	p, r := st.p, st.r
	lin := 0.0
	for i := range p * r {
		lin += m[i] * st.y[i]
	}
	g := gram(m, p, r)
	quad := 0.0
	for i := range r * r {
		quad += g[i] * st.s[i]
	}
	return st.xx/2 - lin + quad/2 + lambda*st.l1
}

// modeSums accumulates the sums of mode's update over all training patches:
// per chunk of learnChunk patches into its own partial sums, then the
// chunks in order, so the result is the same for every number of workers.
func modeSums(ctx context.Context, x, codes []float64, n int, d *Dictionary, mode, workers int, wbuf func(int) []float64) (*modeStats, error) {
	plen, clen := d.PatchLen(), d.CoreLen()
	p, r := d.Size[mode], d.Atoms[mode]
	chunks := (n + learnChunk - 1) / learnChunk
	parts := make([]modeStats, chunks)
	// W = B ×ₘ Dₘ for m ≠ mode and ×ₘ I for m = mode.
	var mats [3][]float64
	var wsize [3]int
	for m := range 3 {
		if m == mode {
			mats[m] = identity(d.Atoms[m])
			wsize[m] = d.Atoms[m]
		} else {
			mats[m] = d.D[m]
			wsize[m] = d.Size[m]
		}
	}
	// Scratch of the mode products, per worker.
	a, b := scratchLen(d.Atoms, wsize)
	s1 := make([][]float64, workers)
	s2 := make([][]float64, workers)
	for i := range workers {
		s1[i], s2[i] = make([]float64, a), make([]float64, b)
	}
	inner := 1
	for m := range mode {
		inner *= d.Size[m]
	}
	outer := plen / (inner * p)
	err := parallel.For(ctx, chunks, workers, func(w, ch int) error {
		st := &parts[ch]
		st.p, st.r = p, r
		st.s, st.y = make([]float64, r*r), make([]float64, p*r)
		wt := wbuf(w)[:inner*r*outer]
		for j := ch * learnChunk; j < min((ch+1)*learnChunk, n); j++ {
			xj := x[j*plen : (j+1)*plen]
			bj := codes[j*clen : (j+1)*clen]
			Multilinear(wt, bj, d.Atoms, wsize, mats, s1[w], s2[w])
			for _, v := range xj {
				st.xx += v * v
			}
			for _, v := range bj {
				st.l1 += math.Abs(v)
			}
			for o := range outer {
				for in := range inner {
					// Mode fibres of X (p values) and W (r values) at stride inner.
					xo := o*p*inner + in
					wo := o*r*inner + in
					for k := range r {
						wk := wt[wo+k*inner]
						if wk == 0 {
							continue
						}
						srow := st.s[k*r : (k+1)*r]
						for l := range r {
							srow[l] += wk * wt[wo+l*inner]
						}
						for i := range p {
							st.y[i*r+k] += xj[xo+i*inner] * wk
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tot := &modeStats{p: p, r: r, s: make([]float64, r*r), y: make([]float64, p*r)}
	for i := range parts {
		for k, v := range parts[i].s {
			tot.s[k] += v
		}
		for k, v := range parts[i].y {
			tot.y[k] += v
		}
		tot.xx += parts[i].xx
		tot.l1 += parts[i].l1
	}
	return tot, nil
}

// identity returns the r×r identity matrix, row-major.
func identity(r int) []float64 {
	m := make([]float64, r*r)
	for i := range r {
		m[i*r+i] = 1
	}
	return m
}

// updateMode minimises ½tr(DSDᵀ) − tr(DᵀY) over the mode's matrix D
// (p×r) subject to unit-ball columns, by exact block-coordinate steps on
// the columns (see Learn), starting from the current D.
func updateMode(d *Dictionary, mode int, st *modeStats) {
	p, r := st.p, st.r
	m := d.D[mode]
	u := make([]float64, p)
	for range dictSweeps {
		moved := 0.0
		for k := range r {
			skk := st.s[k*r+k]
			if !(skk > 0) {
				continue
			}
			// u = dₖ + (Y(:,k) − D·S(:,k))/S(k,k)
			norm := 0.0
			for i := range p {
				ds := 0.0
				for l := range r {
					ds += m[i*r+l] * st.s[l*r+k]
				}
				u[i] = m[i*r+k] + (st.y[i*r+k]-ds)/skk
				norm += u[i] * u[i]
			}
			scale := 1.0
			if norm > 1 {
				scale = 1 / math.Sqrt(norm)
			}
			for i := range p {
				v := u[i] * scale
				moved = max(moved, math.Abs(v-m[i*r+k]))
				m[i*r+k] = v
			}
		}
		if moved <= dictSweepTol {
			break
		}
	}
}
