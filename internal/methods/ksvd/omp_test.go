package ksvd

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// subsets calls fn with every increasing s-subset of [0, k).
func subsets(k, s int, fn func([]int)) {
	cur := make([]int, 0, s)
	var rec func(from int)
	rec = func(from int) {
		if len(cur) == s {
			fn(cur)
			return
		}
		for i := from; i < k; i++ {
			cur = append(cur, i)
			rec(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	rec(0)
}

// exhaustive returns the support of size s with the least least-squares
// residual, that residual, and the gap to the second-best support.
func exhaustive(d *Dictionary, x []float64, s int) (best []int, energy, gap float64) {
	energy, second := math.Inf(1), math.Inf(1)
	subsets(d.Size, s, func(sup []int) {
		_, e := leastSquares(d, sup, x)
		switch {
		case e < energy:
			second, energy, best = energy, e, slices.Clone(sup)
		case e < second:
			second = e
		}
	})
	return best, energy, second - energy
}

// TestOMPAgainstExhaustiveSearch checks Batch-OMP on tiny random
// dictionaries against the least-squares fits of every support of size
// 1–3: its first atom is the best single atom (for unit atoms, the one of
// largest |⟨d, x⟩|), its coefficients are the least-squares fit on its
// support, the returned residual is that fit's, and no support of its size
// does better; on an orthonormal dictionary OMP is exactly the best s-term
// approximation, so its support is the exhaustive optimum.
func TestOMPAgainstExhaustiveSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		d := randomDictionary(rng, 6, 10)
		x := randomVector(rng, 6)
		dtx := make([]float64, d.Size)
		d.Correlate(dtx, x, 1)
		for s := 1; s <= 3; s++ {
			sup, coef, res := batchOMP(d, x, 0, s)
			if len(sup) != s {
				t.Fatalf("trial %d: %d atoms, want %d", trial, len(sup), s)
			}
			if first := floats.MaxIdx(absAll(dtx)); sup[0] != first {
				t.Fatalf("trial %d: first atom %d, the largest correlation is atom %d", trial, sup[0], first)
			}
			ls, lsRes := leastSquares(d, sup, x)
			assertClose(t, "coefficients", coef, ls, 1e-10)
			if !closeTo(res, lsRes, 1e-10) || !closeTo(res, residualEnergy(d, sup, coef, x), 1e-10) {
				t.Fatalf("trial %d: residual %.15g, least squares on the support %.15g", trial, res, lsRes)
			}
			_, best, _ := exhaustive(d, x, s)
			if res < best-1e-10 {
				t.Fatalf("trial %d: OMP residual %.15g below the exhaustive optimum %.15g", trial, res, best)
			}
			if s == 1 && !closeTo(res, best, 1e-10) {
				t.Fatalf("trial %d: one atom: residual %.15g, best %.15g", trial, res, best)
			}
		}

		q := orthonormalDictionary(rng, 6)
		for s := 1; s <= 3; s++ {
			sup, _, res := batchOMP(q, x, 0, s)
			best, energy, gap := exhaustive(q, x, s)
			if !closeTo(res, energy, 1e-10) {
				t.Fatalf("trial %d orthonormal s=%d: residual %.15g, exhaustive %.15g", trial, s, res, energy)
			}
			if gap > 1e-8 {
				got := slices.Sorted(slices.Values(sup))
				if !slices.Equal(got, best) {
					t.Fatalf("trial %d orthonormal s=%d: support %v, exhaustive %v", trial, s, got, best)
				}
			}
		}
	}
}

func absAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Abs(x)
	}
	return out
}

// TestBatchOMPMatchesPlainOMP checks the Cholesky-updated Batch-OMP against
// textbook OMP (explicit residual, QR least squares each step) on random
// dictionaries and signals, sparse ones with noise and dense ones, with the
// error bound and the atom limit both active: same atoms in the same order,
// same coefficients and residual.
func TestBatchOMPMatchesPlainOMP(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 60 {
		n, k := 16, 40
		d := randomDictionary(rng, n, k)
		x := make([]float64, n)
		if trial%2 == 0 {
			for range 4 {
				floats.AddScaled(x, 3*rng.NormFloat64(), d.Atom(rng.IntN(k)))
			}
			floats.AddScaled(x, 0.1, randomVector(rng, n))
		} else {
			x = randomVector(rng, n)
		}
		eps2 := []float64{0, 0.05, 0.5 * floats.Dot(x, x)}[trial%3]
		maxAtoms := []int{8, 16, 3, 12}[trial%4]
		gs, gc, gr := batchOMP(d, x, eps2, maxAtoms)
		ws, wc, wr := plainOMP(d, x, eps2, maxAtoms)
		if !slices.Equal(gs, ws) {
			t.Fatalf("trial %d: support %v, plain OMP %v", trial, gs, ws)
		}
		assertClose(t, "coefficients", gc, wc, 1e-8)
		if math.Abs(gr-wr) > 1e-9*math.Max(1, floats.Dot(x, x)) {
			t.Fatalf("trial %d: residual %.15g, plain OMP %.15g", trial, gr, wr)
		}
		if len(gs) < maxAtoms && gr > eps2 {
			t.Fatalf("trial %d: stopped at %d atoms with residual %g > %g", trial, len(gs), gr, eps2)
		}
	}
}

// TestCoderReuse checks that a Coder gives the same answer for a signal
// whatever it coded before (the support marks of earlier signals must not
// leak), and that it skips an atom that duplicates one in the support.
func TestCoderReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	d := randomDictionary(rng, 8, 20)
	copy(d.Atom(7), d.Atom(3)) // a duplicate: never useful after atom 3
	c := NewCoder(d.Gram(nil), d.Size, 8)
	dtx := make([]float64, d.Size)
	idx, coef := make([]int, 8), make([]float64, 8)
	var first []int
	for rep := range 5 {
		x := slices.Clone(d.Atom(3))
		floats.AddScaled(x, 0.5, d.Atom(1))
		if rep > 0 {
			y := randomVector(rng, 8)
			d.Correlate(dtx, y, 1)
			c.Code(idx, coef, dtx, floats.Dot(y, y), 0)
		}
		d.Correlate(dtx, x, 1)
		n, _ := c.Code(idx, coef, dtx, floats.Dot(x, x), 0)
		got := slices.Clone(idx[:n])
		if contains(got, 3) && contains(got, 7) {
			t.Fatalf("support %v holds both copies of one atom", got)
		}
		if rep == 0 {
			first = got
		} else if !slices.Equal(got, first) {
			t.Fatalf("repeat %d: support %v, first time %v", rep, got, first)
		}
	}
}
