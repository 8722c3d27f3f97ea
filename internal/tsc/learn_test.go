package tsc

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/algebra/tproduct/tproducttest"
)

// learnPatches returns n patches of m×1×k made of a few random unit atoms
// with sparse random weights plus noise, mean-removed like image patches.
func learnPatches(rng *rand.Rand, m, n, k, atoms int) *tproduct.Tensor {
	d := tproducttest.UnitAtoms(rng, m, atoms, k)
	b := dictSparseCoefficients(rng, atoms, n, k, 0.7)
	x := dictNaiveProduct(d, b)
	for j := range n {
		col := x.Lateral(j)
		var mean float64
		for i := range col {
			col[i] += 0.05 * rng.NormFloat64()
			mean += col[i]
		}
		mean /= float64(len(col))
		for i := range col {
			col[i] -= mean
		}
	}
	return x
}

func TestLearnObjectiveMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, k := range []int{1, 4, 5} {
		m, n, r := 9, 300, 6
		x := learnPatches(rng, m, n, k, 8)
		beta := 0.1
		var progress []float64
		res, err := Learn(t.Context(), x, LearnOptions{
			Atoms: r, Beta: beta, Iters: 15, InnerIters: 10, Seed: 7, Threads: 2,
			Progress: func(iter int, obj float64) {
				if iter != len(progress)+1 {
					t.Errorf("progress reported iteration %d after %d", iter, len(progress))
				}
				progress = append(progress, obj)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Iterations != 15 || len(res.Objective) != 15 || !slices.Equal(progress, res.Objective) {
			t.Fatalf("k=%d: %d iterations, %d objective values, progress %d", k, res.Iterations, len(res.Objective), len(progress))
		}
		start := sumSquares(x.Data) / 2
		prev := start
		for p, obj := range res.Objective {
			if obj > prev*(1+1e-12) {
				t.Errorf("k=%d: objective rose at iteration %d: %.15g → %.15g", k, p+1, prev, obj)
			}
			prev = obj
		}
		if !(res.Objective[len(res.Objective)-1] < 0.5*start) {
			t.Errorf("k=%d: learning did not fit: ½‖X‖² = %g, final objective %g", k, start, res.Objective[len(res.Objective)-1])
		}
		// The recorded objective is that of the returned dictionary and codes.
		direct := directObjective(res.Dict, res.Codes, x, beta)
		if last := res.Objective[len(res.Objective)-1]; math.Abs(direct-last) > 1e-9*direct {
			t.Errorf("k=%d: recorded objective %.15g, direct %.15g", k, last, direct)
		}
		for j := range r {
			if n2 := dictAtomNorm2(res.Dict, j); n2 > 1+1e-9 {
				t.Errorf("k=%d: atom %d has squared norm %.15g", k, j, n2)
			}
		}
	}
}

func TestLearnHugeBeta(t *testing.T) {
	// With β above ‖D†*X‖_∞ every code is zero: all atoms are dead in every
	// iteration, the objective stays ½‖X‖², and nothing fails.
	rng := rand.New(rand.NewPCG(33, 34))
	m, n, k, r := 4, 50, 5, 5
	x := learnPatches(rng, m, n, k, 4)
	res, err := Learn(t.Context(), x, LearnOptions{Atoms: r, Beta: 1e6, Iters: 4, InnerIters: 5, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	half := sumSquares(x.Data) / 2
	for p, obj := range res.Objective {
		if math.Abs(obj-half) > 1e-12*half {
			t.Errorf("iteration %d: objective %.15g, want ½‖X‖² = %.15g", p+1, obj, half)
		}
	}
	if res.Reseeded != r*len(res.Objective) {
		t.Errorf("%d atoms re-seeded, want %d", res.Reseeded, r*len(res.Objective))
	}
	for _, v := range res.Codes.Data {
		if v != 0 {
			t.Fatal("non-zero code")
		}
	}
	for j := range r {
		if n2 := dictAtomNorm2(res.Dict, j); math.Abs(n2-1) > 1e-12 {
			t.Errorf("atom %d has squared norm %.15g", j, n2)
		}
	}
}

// learnMatrixReference runs Algorithm 1 for K = 1 with plain matrices:
// FISTA on ½‖X − DB‖² + β‖B‖₁ with L = λ_max(DᵀD), and the dictionary step
// min ½‖X − DB‖² s.t. ‖d_j‖ ≤ 1 by projected gradient descent run to
// convergence, dead atoms replaced by the normalised worst-fitted patches.
// It returns the objective after every outer iteration and the dictionary.
func learnMatrixReference(t *testing.T, x, d0 *mat.Dense, beta float64, iters, inner int) ([]float64, *mat.Dense) {
	m, n := x.Dims()
	_, r := d0.Dims()
	d := mat.DenseCopyOf(d0)
	b := mat.NewDense(r, n, nil)
	var objs []float64
	objective := func(b *mat.Dense) float64 {
		var res mat.Dense
		res.Mul(d, b)
		res.Sub(x, &res)
		f := mat.Norm(&res, 2)
		var l1 float64
		for i := range r {
			for j := range n {
				l1 += math.Abs(b.At(i, j))
			}
		}
		return f*f/2 + beta*l1
	}
	prevObj := objective(b)
	for p := range iters {
		// Coding.
		var gram, sym mat.Dense
		gram.Mul(d.T(), d)
		sym.CloneFrom(&gram)
		var eig mat.EigenSym
		if !eig.Factorize(mat.NewSymDense(r, sym.RawMatrix().Data), false) {
			t.Fatal("eigendecomposition failed")
		}
		vals := eig.Values(nil)
		lip := vals[r-1]
		var c mat.Dense
		c.Mul(d.T(), x)
		bk := mat.DenseCopyOf(b)
		if p == 0 {
			bk.Zero()
		}
		y, bPrev := mat.DenseCopyOf(bk), mat.DenseCopyOf(bk)
		tk := 1.0
		for range inner {
			var g mat.Dense
			g.Mul(&gram, y)
			g.Sub(&g, &c)
			next := mat.NewDense(r, n, nil)
			for i := range r {
				for j := range n {
					v := y.At(i, j) - g.At(i, j)/lip
					next.Set(i, j, math.Copysign(max(math.Abs(v)-beta/lip, 0), v))
				}
			}
			tn := (1 + math.Sqrt(1+4*tk*tk)) / 2
			y = mat.NewDense(r, n, nil)
			for i := range r {
				for j := range n {
					y.Set(i, j, next.At(i, j)+(tk-1)/tn*(next.At(i, j)-bPrev.At(i, j)))
				}
			}
			tk = tn
			bPrev = next
		}
		if objective(bPrev) <= prevObj {
			b = bPrev
		}
		// Dictionary step by projected gradient.
		var bbt, xbt mat.Dense
		bbt.Mul(b, b.T())
		xbt.Mul(x, b.T())
		var e2 mat.EigenSym
		if !e2.Factorize(mat.NewSymDense(r, mat.DenseCopyOf(&bbt).RawMatrix().Data), false) {
			t.Fatal("eigendecomposition failed")
		}
		ev := e2.Values(nil)
		if lb := ev[r-1]; lb > 0 {
			for range 100000 {
				var g mat.Dense
				g.Mul(d, &bbt)
				g.Sub(&g, &xbt)
				var change, size float64
				for j := range r {
					var n2 float64
					for i := range m {
						v := d.At(i, j) - g.At(i, j)/lb
						change = max(change, math.Abs(v-d.At(i, j)))
						d.Set(i, j, v)
						n2 += v * v
					}
					if n2 > 1 {
						for i := range m {
							d.Set(i, j, d.At(i, j)/math.Sqrt(n2))
						}
					}
					for i := range m {
						size = max(size, math.Abs(d.At(i, j)))
					}
				}
				if change <= 1e-15*size {
					break
				}
			}
		}
		// Dead atoms: the worst-fitted patches, normalised.
		var res mat.Dense
		res.Mul(d, b)
		res.Sub(x, &res)
		used := map[int]bool{}
		for q := range r {
			if bbt.At(q, q) > 0 {
				continue
			}
			best, bestRes := -1, -1.0
			for j := range n {
				rn := mat.Norm(res.ColView(j), 2)
				if !used[j] && mat.Norm(x.ColView(j), 2) > 0 && rn > bestRes {
					best, bestRes = j, rn
				}
			}
			used[best] = true
			xn := mat.Norm(x.ColView(best), 2)
			for i := range m {
				d.Set(i, q, x.At(i, best)/xn)
			}
		}
		prevObj = objective(b)
		objs = append(objs, prevObj)
	}
	return objs, d
}

func TestLearnK1MatchesMatrixSparseCoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	m, n, r := 8, 60, 4
	x := learnPatches(rng, m, n, 1, 6)
	const beta, iters, inner, seed = 0.05, 6, 3000, 11
	res, err := Learn(t.Context(), x, LearnOptions{Atoms: r, Beta: beta, Iters: iters, InnerIters: inner, Seed: seed, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The same start as Learn.
	d0, err := initDictionary(x, r, seed)
	if err != nil {
		t.Fatal(err)
	}
	// For K = 1 a tensor M×N×1 is an M×N matrix stored by columns.
	xm := mat.NewDense(m, n, nil)
	for j := range n {
		for i := range m {
			xm.Set(i, j, x.At(i, j, 0))
		}
	}
	dm := mat.NewDense(m, r, nil)
	for q := range r {
		for i := range m {
			dm.Set(i, q, d0.At(i, q, 0))
		}
	}
	want, dRef := learnMatrixReference(t, xm, dm, beta, iters, inner)
	for p := range iters {
		if math.Abs(res.Objective[p]-want[p]) > 1e-7*want[p] {
			t.Errorf("iteration %d: objective %.12g, matrix sparse coding %.12g", p+1, res.Objective[p], want[p])
		}
	}
	for q := range r {
		for i := range m {
			if math.Abs(res.Dict.At(i, q, 0)-dRef.At(i, q)) > 1e-5 {
				t.Fatalf("atom %d differs from the matrix reference: %g vs %g", q, res.Dict.At(i, q, 0), dRef.At(i, q))
			}
		}
	}
}

func TestLearnThreadCountInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	x := learnPatches(rng, 9, 3000, 5, 10)
	var first *LearnResult
	for _, threads := range []int{1, 2} {
		res, err := Learn(t.Context(), x, LearnOptions{Atoms: 8, Beta: 0.1, Iters: 3, InnerIters: 8, Seed: 3, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res
		} else if !slices.Equal(first.Dict.Data, res.Dict.Data) || !slices.Equal(first.Objective, res.Objective) {
			t.Errorf("%d threads give another result than 1", threads)
		}
	}
}

func TestLearnTolStopsEarly(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	x := learnPatches(rng, 4, 100, 3, 4)
	res, err := Learn(t.Context(), x, LearnOptions{Atoms: 3, Beta: 0.1, Iters: 30, InnerIters: 20, Tol: 0.5, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The second iteration cannot change a positive objective by half of it
	// after the first has fitted (relative change ≤ 0.5 unless it halves).
	if res.Iterations == 30 || res.Iterations != len(res.Objective) {
		t.Fatalf("ran %d iterations (%d objective values) with Tol 0.5", res.Iterations, len(res.Objective))
	}
	p := res.Iterations - 1
	if p < 1 || math.Abs(res.Objective[p-1]-res.Objective[p]) > 0.5*res.Objective[p] {
		t.Errorf("stopped after iteration %d with objectives %v", res.Iterations, res.Objective)
	}
}

func TestInitDictionary(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	m, n, k, r := 3, 40, 4, 10
	x := tproducttest.Rand(rng, m, n, k)
	// Zero patches are never drawn.
	for j := 0; j < n; j += 2 {
		clear(x.Lateral(j))
	}
	d, err := initDictionary(x, r, 5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for q := range r {
		found := -1
		for j := range n {
			xn := math.Sqrt(dictAtomNorm2(x, j))
			if xn == 0 {
				continue
			}
			same := true
			for i, v := range d.Lateral(q) {
				same = same && math.Abs(v-x.Lateral(j)[i]/xn) < 1e-15
			}
			if same {
				found = j
			}
		}
		if found < 0 || seen[found] {
			t.Fatalf("atom %d is not a new normalised non-zero patch (%d)", q, found)
		}
		seen[found] = true
		if n2 := dictAtomNorm2(d, q); math.Abs(n2-1) > 1e-15 {
			t.Errorf("atom %d has squared norm %.17g", q, n2)
		}
	}
	again, _ := initDictionary(x, r, 5)
	other, _ := initDictionary(x, r, 6)
	if !slices.Equal(d.Data, again.Data) {
		t.Error("same seed, different start")
	}
	if slices.Equal(d.Data, other.Data) {
		t.Error("different seeds, same start")
	}
	// All 20 non-zero patches can be drawn, 21 cannot.
	if _, err := initDictionary(x, 20, 1); err != nil {
		t.Error(err)
	}
	if _, err := initDictionary(x, 21, 1); err == nil || !strings.Contains(err.Error(), "20 of the 40 training patches are non-zero") {
		t.Errorf("21 atoms from 20 usable patches: %v", err)
	}
}

func TestLearnRejectsBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	x := tproducttest.Rand(rng, 4, 10, 2)
	good := LearnOptions{Atoms: 3, Beta: 1, Iters: 2, InnerIters: 2}
	cases := []struct {
		name string
		edit func(o *LearnOptions)
		want string
	}{
		{"no atoms", func(o *LearnOptions) { o.Atoms = 0 }, "atoms must be at least 1, got 0"},
		{"negative beta", func(o *LearnOptions) { o.Beta = -1 }, "beta must be"},
		{"NaN beta", func(o *LearnOptions) { o.Beta = math.NaN() }, "beta must be"},
		{"infinite beta", func(o *LearnOptions) { o.Beta = math.Inf(1) }, "beta must be"},
		{"no iterations", func(o *LearnOptions) { o.Iters = 0 }, "outer iterations"},
		{"no coding iterations", func(o *LearnOptions) { o.InnerIters = 0 }, "coding iterations"},
		{"negative tol", func(o *LearnOptions) { o.Tol = -0.1 }, "tol (tolerance)"},
		{"more atoms than patches", func(o *LearnOptions) { o.Atoms = 11 }, "fewer than the 11 atoms"},
	}
	for _, c := range cases {
		o := good
		c.edit(&o)
		if _, err := Learn(t.Context(), x, o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	bad := tproducttest.Rand(rng, 4, 10, 2)
	bad.Data[3] = math.NaN()
	if _, err := Learn(t.Context(), bad, good); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN patch: %v", err)
	}
	if _, err := Learn(t.Context(), nil, good); err == nil {
		t.Error("nil patches accepted")
	}
}

func TestLearnKeepsCodesThatFitBetter(t *testing.T) {
	// A coding step that makes things worse (here: codes scaled up after the
	// first iteration) is discarded, so the objective does not rise.
	rng := rand.New(rand.NewPCG(45, 46))
	x := learnPatches(rng, 6, 80, 3, 5)
	opt := LearnOptions{Atoms: 4, Beta: 0.05, Iters: 5, InnerIters: 50, Seed: 4, Threads: 1}
	calls := 0
	var lastGood []float64
	res, err := learn(t.Context(), x, opt, func(d, b *tproduct.Tensor, warm bool, threads int) error {
		calls++
		if warm != (calls > 1) {
			t.Errorf("call %d: warm = %v", calls, warm)
		}
		enc, err := NewEncoder(d, EncodeOptions{Beta: opt.Beta, MaxIter: opt.InnerIters})
		if err != nil {
			return err
		}
		enc.encodeAll(t.Context(), b, x, warm, threads)
		if calls == 1 {
			lastGood = slices.Clone(b.Data)
			return nil
		}
		for i := range b.Data {
			b.Data[i] *= 3
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.CodesKept != opt.Iters-1 {
		t.Errorf("%d coding steps discarded, want %d", res.CodesKept, opt.Iters-1)
	}
	if !slices.Equal(res.Codes.Data, lastGood) {
		t.Error("the returned codes are not those of the first coding step")
	}
	for p := 1; p < len(res.Objective); p++ {
		if res.Objective[p] > res.Objective[p-1]*(1+1e-12) {
			t.Errorf("objective rose at iteration %d: %v", p+1, res.Objective)
		}
	}
	if direct := directObjective(res.Dict, res.Codes, x, opt.Beta); math.Abs(direct-res.Objective[opt.Iters-1]) > 1e-9*direct {
		t.Errorf("recorded objective %.15g, direct %.15g", res.Objective[opt.Iters-1], direct)
	}
}

func TestLearnSomeDeadAtoms(t *testing.T) {
	// Patches on two sets of pixels: strong ones on pixels 0..1, weak ones
	// (coefficients below β) on pixels 2..3. The two kinds are orthogonal
	// under every circular shift, so an atom drawn from a weak patch never
	// gets a coefficient: it dies, is re-seeded with a badly fitted (weak)
	// patch, and dies again, while the other atoms learn.
	for _, k := range []int{1, 3} {
		rng := rand.New(rand.NewPCG(47, uint64(k)))
		m, n, r := 4, 60, 4
		x := tproduct.NewTensor(m, n, k)
		for j := range n {
			lo, scale := 0, 10.0
			if j%2 == 1 {
				lo, scale = 2, 0.01
			}
			for t := range k {
				for i := lo; i < lo+2; i++ {
					x.Set(i, j, t, scale*rng.NormFloat64())
				}
			}
		}
		var res *LearnResult
		for seed := range uint64(20) {
			var err error
			res, err = Learn(t.Context(), x, LearnOptions{Atoms: r, Beta: 1, Iters: 6, InnerIters: 30, Seed: seed, Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			if res.Reseeded > 0 && res.Reseeded < r*res.Iterations {
				break
			}
		}
		if res.Reseeded == 0 || res.Reseeded == r*res.Iterations {
			t.Fatalf("k=%d: no seed gives a mixture of dead and live atoms (%d re-seeded)", k, res.Reseeded)
		}
		for p := 1; p < len(res.Objective); p++ {
			if res.Objective[p] > res.Objective[p-1]*(1+1e-12) {
				t.Errorf("k=%d: objective rose at iteration %d: %v", k, p+1, res.Objective)
			}
		}
		if direct, last := directObjective(res.Dict, res.Codes, x, 1), res.Objective[len(res.Objective)-1]; math.Abs(direct-last) > 1e-9*direct {
			t.Errorf("k=%d: recorded objective %.15g, direct %.15g", k, last, direct)
		}
		for j := range r {
			if n2 := dictAtomNorm2(res.Dict, j); n2 > 1+1e-9 || n2 < 1e-3 {
				t.Errorf("k=%d: atom %d has squared norm %.15g", k, j, n2)
			}
		}
	}
}

func TestLearnStopsWhenCancelled(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	x := learnPatches(rng, 9, 500, 5, 8)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	res, err := Learn(ctx, x, LearnOptions{
		Atoms: 6, Beta: 0.1, Iters: 10, InnerIters: 5, Seed: 1,
		Progress: func(iter int, _ float64) {
			calls++
			if iter == 2 {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("cancelled after iteration 2: result %v, error %v; want no result and context.Canceled", res, err)
	}
	if calls != 2 {
		t.Errorf("%d iterations reported after cancelling at the second", calls)
	}
}

func TestLearnStopsInTheDictionaryStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	x := learnPatches(rng, 9, 500, 5, 8)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	codingSteps := 0
	res, err := learn(ctx, x, LearnOptions{Atoms: 6, Beta: 0.1, Iters: 10, InnerIters: 5, Seed: 1},
		func(_, _ *tproduct.Tensor, _ bool, _ int) error {
			// A coding step that ends without looking at ctx: only the
			// dictionary step that follows can see it is done.
			codingSteps++
			cancel()
			return nil
		})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("cancelled in the first coding step: result %v, error %v; want no result and context.Canceled", res, err)
	}
	if codingSteps != 1 {
		t.Errorf("%d coding steps ran after the context was cancelled in the first", codingSteps)
	}
}

func TestEncodeAllStartsNoBatchOnceStopped(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	m, r, k, n := 9, 6, 5, 700
	enc, err := NewEncoder(tproducttest.UnitAtoms(rng, m, r, k), EncodeOptions{Beta: 0.1, MaxIter: 20})
	if err != nil {
		t.Fatal(err)
	}
	x := learnPatches(rng, m, n, k, 8)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got := tproduct.NewTensor(r, n, k)
	for i := range got.Data {
		got.Data[i] = math.NaN()
	}
	enc.encodeAll(ctx, got, x, false, 2)
	for i, v := range got.Data {
		if !math.IsNaN(v) {
			t.Fatalf("code %d was written after the context was cancelled", i)
		}
	}
}
