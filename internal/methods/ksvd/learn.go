package ksvd

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"tdsc/internal/parallel"
)

// LearnOptions are the settings of K-SVD learning (Learn).
type LearnOptions struct {
	// Iters is the number of K-SVD iterations (coding, then one sweep over
	// the atoms).
	Iters int
	// Epsilon2 bounds the squared residual ‖y − Dα‖² at which coding a
	// training sample stops: (C·σ)²·n for noise σ.
	Epsilon2 float64
	// MaxAtoms is the most atoms a sample is coded with.
	MaxAtoms int
	// Exact updates every atom with the leading singular pair of its
	// restricted residual (gonum's SVD) instead of the default single power
	// step of approximate K-SVD.
	Exact bool
	// Threads is the number of worker goroutines of the coding (0:
	// GOMAXPROCS); the result does not depend on it.
	Threads int
	// Progress, if not nil, is called after the coding of every iteration
	// with the iteration (1-based), the root-mean-square residual per entry
	// and the mean number of atoms per sample.
	Progress func(iter int, rmse, meanAtoms float64)
}

// The dictionary clean-up after each sweep, the reference toolbox's rule:
// an atom used by fewer than minUses samples, or whose correlation with an
// earlier atom exceeds maxCoherence, is replaced by the worst-coded sample.
const (
	minUses      = 4
	maxCoherence = 0.99
)

// codeChunk is the number of samples coded from one matrix product X·D; it
// is fixed so that the work split does not depend on the thread count.
const codeChunk = 256

// codes are the sparse codes of a set of signals: signal s uses the atoms
// index[s*maxAtoms : s*maxAtoms+count[s]] with the coefficients at the same
// places of coef.
type codes struct {
	maxAtoms int
	count    []int
	index    []int
	coef     []float64
}

func newCodes(n, maxAtoms int) *codes {
	return &codes{maxAtoms: maxAtoms, count: make([]int, n), index: make([]int, n*maxAtoms), coef: make([]float64, n*maxAtoms)}
}

// Learn runs K-SVD from the dictionary init on the training samples (the
// rows of a count×init.Dim row-major matrix, count = len(samples)/init.Dim)
// and returns the learned dictionary; init and samples are not modified.
// Each iteration codes every sample by Batch-OMP, updates every atom in
// turn against the residual restricted to the samples that use it, and
// then replaces unused and duplicated atoms by the worst-coded samples
// (normalised). It stops with ctx.Err() when ctx is cancelled.
func Learn(ctx context.Context, init *Dictionary, samples []float64, o LearnOptions) (*Dictionary, error) {
	n := init.Dim
	if n == 0 || len(samples)%n != 0 {
		return nil, fmt.Errorf("ksvd: Learn: %d sample values are not rows of %d", len(samples), n)
	}
	if o.MaxAtoms < 1 || o.Iters < 0 {
		return nil, fmt.Errorf("ksvd: Learn: need MaxAtoms ≥ 1 and Iters ≥ 0, got %d and %d", o.MaxAtoms, o.Iters)
	}
	count := len(samples) / n
	d := init.Clone()
	maxAtoms := min(o.MaxAtoms, d.Size)
	cs := newCodes(count, maxAtoms)
	residual := make([]float64, len(samples))
	var gram []float64
	for it := 1; it <= o.Iters; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		gram = d.Gram(gram)
		if err := codeSamples(ctx, d, gram, samples, cs, residual, o.Epsilon2, o.Threads); err != nil {
			return nil, err
		}
		if o.Progress != nil {
			used := 0
			for _, c := range cs.count {
				used += c
			}
			o.Progress(it, math.Sqrt(floats.Dot(residual, residual)/float64(len(residual))), float64(used)/float64(count))
		}
		sweep(d, cs, residual, o.Exact)
		gram = d.Gram(gram)
		replaceAtoms(d, gram, samples, cs, residual)
	}
	return d, nil
}

// codeSamples codes every sample over d (Gram matrix gram) and writes the
// codes to cs and the residuals y − Dα to residual (same layout as
// samples). Work is split in chunks of codeChunk samples, each coded from
// one matrix product into its own part of cs and residual.
func codeSamples(ctx context.Context, d *Dictionary, gram, samples []float64, cs *codes, residual []float64, eps2 float64, threads int) error {
	n, k := d.Dim, d.Size
	count := len(samples) / n
	workers := parallel.Workers(threads)
	type scratch struct {
		coder *Coder
		corr  []float64
	}
	ws := make([]*scratch, workers)
	chunks := (count + codeChunk - 1) / codeChunk
	return parallel.For(ctx, chunks, workers, func(w, c int) error {
		s := ws[w]
		if s == nil {
			s = &scratch{coder: NewCoder(gram, k, cs.maxAtoms), corr: make([]float64, codeChunk*k)}
			ws[w] = s
		}
		lo, hi := c*codeChunk, min((c+1)*codeChunk, count)
		d.Correlate(s.corr, samples[lo*n:hi*n], hi-lo)
		m := cs.maxAtoms
		for i := lo; i < hi; i++ {
			y := samples[i*n : (i+1)*n]
			idx, coef := cs.index[i*m:(i+1)*m], cs.coef[i*m:(i+1)*m]
			na, _ := s.coder.Code(idx, coef, s.corr[(i-lo)*k:(i-lo+1)*k], floats.Dot(y, y), eps2)
			cs.count[i] = na
			r := residual[i*n : (i+1)*n]
			copy(r, y)
			for j := range na {
				floats.AddScaled(r, -coef[j], d.Atom(idx[j]))
			}
		}
		return nil
	})
}

// users lists, for every atom, the places in cs (s*maxAtoms + slot) of the
// samples that use it, in increasing sample order: the places of atom k are
// places[start[k]:start[k+1]].
func users(cs *codes, size int) (start, places []int) {
	start = make([]int, size+1)
	for s, c := range cs.count {
		for _, k := range cs.index[s*cs.maxAtoms : s*cs.maxAtoms+c] {
			start[k+1]++
		}
	}
	for k := range size {
		start[k+1] += start[k]
	}
	places = make([]int, start[size])
	next := slices.Clone(start[:size])
	for s, c := range cs.count {
		for slot := range c {
			p := s*cs.maxAtoms + slot
			k := cs.index[p]
			places[next[k]] = p
			next[k]++
		}
	}
	return start, places
}

// sweep is the K-SVD dictionary update with the supports fixed: for every
// atom k in turn, with ω the samples that use it and E = R_ω + d_k a_ω the
// residual without atom k's contribution (R = Y − DA kept up to date in
// residual), it replaces (d_k, a_ω) by a unit d and coefficients a that fit
// E better: the leading singular pair of E when exact, else one block
// coordinate step d ∝ E·a_ω, a = Eᵀd (approximate K-SVD). Neither step
// increases ‖Y − DA‖_F. An unused atom is left as it is.
func sweep(d *Dictionary, cs *codes, residual []float64, exact bool) {
	n := d.Dim
	start, places := users(cs, d.Size)
	var e []float64
	v := make([]float64, n)
	for k := range d.Size {
		ps := places[start[k]:start[k+1]]
		if len(ps) == 0 {
			continue
		}
		atom := d.Atom(k)
		if cap(e) < len(ps)*n {
			e = make([]float64, len(ps)*n)
		}
		e = e[:len(ps)*n]
		clear(v)
		for i, p := range ps {
			s := p / cs.maxAtoms
			row := e[i*n : (i+1)*n]
			copy(row, residual[s*n:(s+1)*n])
			floats.AddScaled(row, cs.coef[p], atom)
			floats.AddScaled(v, cs.coef[p], row)
		}
		if exact {
			if !leadingRightVector(v, e, len(ps), n) {
				continue
			}
			if floats.Dot(v, atom) < 0 { // keep the atom's sign
				floats.Scale(-1, v)
			}
		} else {
			norm := floats.Norm(v, 2)
			if norm == 0 {
				continue
			}
			floats.Scale(1/norm, v)
		}
		copy(atom, v)
		for i, p := range ps {
			s := p / cs.maxAtoms
			row := e[i*n : (i+1)*n]
			a := floats.Dot(row, atom)
			cs.coef[p] = a
			r := residual[s*n : (s+1)*n]
			copy(r, row)
			floats.AddScaled(r, -a, atom)
		}
	}
}

// leadingRightVector writes to v the right singular vector of the rows×n
// matrix e (row-major) for its largest singular value, by gonum's SVD, and
// reports whether the factorisation succeeded with a nonzero value.
func leadingRightVector(v, e []float64, rows, n int) bool {
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(rows, n, e), mat.SVDThinV) {
		return false
	}
	if svd.Values(nil)[0] == 0 {
		return false
	}
	var vt mat.Dense
	svd.VTo(&vt)
	for i := range n {
		v[i] = vt.At(i, 0)
	}
	return true
}

// replaceAtoms swaps every atom used by fewer than minUses samples, or
// whose |correlation| with an earlier atom exceeds maxCoherence, for the
// normalised training sample with the largest residual energy not yet
// taken (ties to the lower index): the reference toolbox's clean-up, which
// keeps the dictionary from wasting atoms. gram is DᵀD of the current d.
// The replaced atom's codes are not touched: the next coding redoes them.
func replaceAtoms(d *Dictionary, gram, samples []float64, cs *codes, residual []float64) {
	n, k := d.Dim, d.Size
	uses := make([]int, k)
	for s, c := range cs.count {
		for _, a := range cs.index[s*cs.maxAtoms : s*cs.maxAtoms+c] {
			uses[a]++
		}
	}
	var replace []int
	for j := range k {
		bad := uses[j] < minUses
		for i := 0; i < j && !bad; i++ {
			bad = math.Abs(gram[i*k+j]) > maxCoherence
		}
		if bad {
			replace = append(replace, j)
		}
	}
	if len(replace) == 0 {
		return
	}
	count := len(samples) / n
	energy := make([]float64, count)
	order := make([]int, count)
	for s := range count {
		r := residual[s*n : (s+1)*n]
		energy[s] = floats.Dot(r, r)
		order[s] = s
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case energy[a] > energy[b]:
			return -1
		case energy[a] < energy[b]:
			return 1
		}
		return 0
	})
	next := 0
	for _, j := range replace {
		for next < count {
			s := order[next]
			next++
			y := samples[s*n : (s+1)*n]
			if floats.Dot(y, y) == 0 {
				continue
			}
			atom := d.Atom(j)
			copy(atom, y)
			normalise(atom)
			break
		}
	}
}
