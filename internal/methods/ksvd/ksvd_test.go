package ksvd

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"tdsc/internal/msi"
)

// TestDCTSquareIsOrthonormal checks that the square 1-D DCT (k = n) and the
// square separable 3-D DCT are orthonormal, DᵀD = I, and that overcomplete
// ones have unit atoms with a constant atom 0.
func TestDCTSquareIsOrthonormal(t *testing.T) {
	for n := 1; n <= 9; n++ {
		d, err := OvercompleteDCT(n, n)
		if err != nil {
			t.Fatal(err)
		}
		checkIdentity(t, d.Gram(nil), n, 1e-13)
	}
	d, err := PatchDCT(4, 4, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkIdentity(t, d.Gram(nil), 48, 1e-13)

	for _, c := range []struct{ p, k, depth, kd int }{{8, 16, 1, 1}, {5, 7, 1, 1}, {6, 10, 5, 5}, {4, 6, 3, 4}} {
		d, err := PatchDCT(c.p, c.k, c.depth, c.kd)
		if err != nil {
			t.Fatal(err)
		}
		if d.Dim != c.p*c.p*c.depth || d.Size != c.k*c.k*c.kd {
			t.Fatalf("%+v: %d atoms of %d", c, d.Size, d.Dim)
		}
		for j := range d.Size {
			if nrm := floats.Norm(d.Atom(j), 2); math.Abs(nrm-1) > 1e-13 {
				t.Fatalf("%+v: atom %d has norm %v", c, j, nrm)
			}
		}
		for _, v := range d.Atom(0) {
			if math.Abs(v-1/math.Sqrt(float64(d.Dim))) > 1e-15 {
				t.Fatalf("%+v: atom 0 is not constant: %v", c, d.Atom(0))
			}
		}
		// Every other atom is orthogonal to the constant: it has zero mean.
		for j := 1; j < d.Size; j++ {
			if s := floats.Sum(d.Atom(j)); math.Abs(s) > 1e-12 {
				t.Fatalf("%+v: atom %d has sum %v", c, j, s)
			}
		}
	}
	if _, err := OvercompleteDCT(4, 3); err == nil {
		t.Error("OvercompleteDCT(4, 3) accepted fewer atoms than the length")
	}
}

func checkIdentity(t *testing.T, g []float64, n int, tol float64) {
	t.Helper()
	for i := range n {
		for j := range n {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(g[i*n+j]-want) > tol {
				t.Fatalf("%d×%d Gram entry (%d, %d) = %v", n, n, i, j, g[i*n+j])
			}
		}
	}
}

// TestKroneckerLayout checks the entry order of Kronecker against its
// definition.
func TestKroneckerLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a, b := randomDictionary(rng, 3, 4), randomDictionary(rng, 2, 5)
	d := Kronecker(a, b)
	for i := range a.Size {
		for j := range b.Size {
			for s := range a.Dim {
				for u := range b.Dim {
					want := a.Atom(i)[s] * b.Atom(j)[u]
					if got := d.Atom(i*b.Size + j)[s*b.Dim+u]; math.Abs(got-want) > 1e-15 {
						t.Fatalf("atom (%d,%d) entry (%d,%d) = %v, want %v", i, j, s, u, got, want)
					}
				}
			}
		}
	}
}

// learningProblem returns a random dictionary and samples that are sparse
// combinations of other random atoms plus noise, coded once over the
// dictionary: the state at the start of a K-SVD sweep.
func learningProblem(rng *rand.Rand, n, k, count int) (d *Dictionary, samples []float64, cs *codes, residual []float64) {
	d = randomDictionary(rng, n, k)
	truth := randomDictionary(rng, n, k)
	samples = make([]float64, count*n)
	for s := range count {
		y := samples[s*n : (s+1)*n]
		for range 3 {
			floats.AddScaled(y, rng.NormFloat64(), truth.Atom(rng.IntN(k)))
		}
		floats.AddScaled(y, 0.05, randomVector(rng, n))
	}
	cs = newCodes(count, 4)
	residual = make([]float64, len(samples))
	if err := codeSamples(context.Background(), d, d.Gram(nil), samples, cs, residual, 0.01, 2); err != nil {
		panic(err)
	}
	return d, samples, cs, residual
}

// objective returns ‖Y − DA‖_F², formed from the codes.
func objective(d *Dictionary, samples []float64, cs *codes) float64 {
	n, total := d.Dim, 0.0
	for s := range cs.count {
		lo := s * cs.maxAtoms
		total += residualEnergy(d, cs.index[lo:lo+cs.count[s]], cs.coef[lo:lo+cs.count[s]], samples[s*n:(s+1)*n])
	}
	return total
}

// TestSweepExactAtomIsSVD checks the exact K-SVD update of the first atom
// against gonum's SVD of the residual restricted to the samples that use
// it, E = Y_ω − Σ_{j≠0} d_j a_j,ω formed directly from the samples: the new
// atom is E's leading left singular vector (up to sign) and the new
// coefficients are σ₁ times its right one.
func TestSweepExactAtomIsSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	d, samples, cs, residual := learningProblem(rng, 12, 20, 300)
	n := d.Dim
	// Restricted residual without atom 0, and the places of atom 0's coefficients.
	var rows [][]float64
	var places []int
	for s := range cs.count {
		lo := s * cs.maxAtoms
		for slot := range cs.count[s] {
			if cs.index[lo+slot] != 0 {
				continue
			}
			e := append([]float64(nil), samples[s*n:(s+1)*n]...)
			for j := range cs.count[s] {
				if j != slot {
					floats.AddScaled(e, -cs.coef[lo+j], d.Atom(cs.index[lo+j]))
				}
			}
			rows = append(rows, e)
			places = append(places, lo+slot)
		}
	}
	if len(rows) < 5 {
		t.Fatalf("atom 0 is used by %d samples only", len(rows))
	}
	e := mat.NewDense(n, len(rows), nil) // columns are samples, as in the paper
	for j, r := range rows {
		for i, v := range r {
			e.Set(i, j, v)
		}
	}
	var svd mat.SVD
	if !svd.Factorize(e, mat.SVDThin) {
		t.Fatal("SVD failed")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	s1 := svd.Values(nil)[0]

	sweep(d, cs, residual, true)
	sign := 1.0
	if d.Atom(0)[0]*u.At(0, 0) < 0 {
		sign = -1
	}
	for i := range n {
		if math.Abs(d.Atom(0)[i]-sign*u.At(i, 0)) > 1e-9 {
			t.Fatalf("atom entry %d = %v, SVD %v", i, d.Atom(0)[i], sign*u.At(i, 0))
		}
	}
	for j, p := range places {
		if want := sign * s1 * v.At(j, 0); math.Abs(cs.coef[p]-want) > 1e-9*math.Max(1, s1) {
			t.Fatalf("coefficient %d = %v, SVD %v", j, cs.coef[p], want)
		}
	}
}

// TestSweepObjectiveDoesNotIncrease checks that K-SVD sweeps with the
// supports fixed never increase ‖Y − DA‖_F², exact and approximate, and
// that the residual kept by the sweep is Y − DA.
func TestSweepObjectiveDoesNotIncrease(t *testing.T) {
	for _, exact := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(11, 12))
		d, samples, cs, residual := learningProblem(rng, 10, 16, 200)
		prev := objective(d, samples, cs)
		start := prev
		for it := range 6 {
			sweep(d, cs, residual, exact)
			obj := objective(d, samples, cs)
			if obj > prev*(1+1e-12) {
				t.Fatalf("exact=%v sweep %d: objective %.15g rose from %.15g", exact, it, obj, prev)
			}
			if kept := floats.Dot(residual, residual); !closeTo(kept, obj, 1e-9) {
				t.Fatalf("exact=%v sweep %d: kept residual %.15g, objective %.15g", exact, it, kept, obj)
			}
			prev = obj
		}
		if prev > 0.9*start {
			t.Errorf("exact=%v: six sweeps lowered the objective only from %g to %g", exact, start, prev)
		}
		for j := range d.Size {
			if nrm := floats.Norm(d.Atom(j), 2); math.Abs(nrm-1) > 1e-12 {
				t.Fatalf("exact=%v: atom %d has norm %v", exact, j, nrm)
			}
		}
	}
}

// TestReplaceAtoms checks the clean-up: an unused atom and a duplicate are
// replaced by the normalised samples with the largest residuals, worst
// first, and nothing else changes.
func TestReplaceAtoms(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	d, samples, cs, residual := learningProblem(rng, 10, 16, 400)
	// Make atom 5 unused and atom 9 a copy of atom 2.
	for s := range cs.count {
		lo := s * cs.maxAtoms
		for slot := range cs.count[s] {
			if cs.index[lo+slot] == 5 {
				cs.index[lo+slot] = 6
			}
		}
	}
	copy(d.Atom(9), d.Atom(2))
	before := d.Clone()
	replaceAtoms(d, d.Gram(nil), samples, cs, residual)
	n := d.Dim
	energy := make([]float64, len(cs.count))
	for s := range energy {
		r := residual[s*n : (s+1)*n]
		energy[s] = floats.Dot(r, r)
	}
	worst := floats.MaxIdx(energy)
	energy[worst] = -1
	second := floats.MaxIdx(energy)
	for j := range d.Size {
		switch j {
		case 5, 9:
			s := worst
			if j == 9 {
				s = second
			}
			want := append([]float64(nil), samples[s*n:(s+1)*n]...)
			normalise(want)
			assertClose(t, "replaced atom", d.Atom(j), want, 1e-15)
		default:
			if !floats.Equal(d.Atom(j), before.Atom(j)) {
				t.Fatalf("atom %d changed", j)
			}
		}
	}
}

// TestLearnReducesError checks that K-SVD learning from a random start
// lowers the coding error of its samples.
func TestLearnReducesError(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	d, samples, _, _ := learningProblem(rng, 10, 16, 500)
	var rmse []float64
	_, err := Learn(context.Background(), d, samples, LearnOptions{
		Iters: 8, Epsilon2: 0, MaxAtoms: 3, Threads: 2,
		Progress: func(_ int, r, _ float64) { rmse = append(rmse, r) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rmse) != 8 || rmse[7] > 0.7*rmse[0] {
		t.Errorf("coding error over the iterations: %v", rmse)
	}
}

// directAverage solves the normal equations of the x-step,
// (λI + Σ RᵢᵀRᵢ) x = λy + Σ Rᵢᵀ(Dαᵢ + mᵢ), as a dense linear system, with
// every patch coded by textbook OMP (plainOMP).
func directAverage(t *testing.T, noisy *msi.Cube, d *Dictionary, o DenoiseOptions) []float64 {
	h, w, nb := noisy.Height, noisy.Width, noisy.Bands
	nv := h * w * nb
	a := mat.NewDense(nv, nv, nil)
	rhs := make([]float64, nv)
	for i := range nv {
		a.Set(i, i, o.Lambda)
		rhs[i] = o.Lambda * noisy.Data[i]
	}
	p, depth := o.Patch, o.Depth
	for _, b0 := range positions(nb, depth, o.BandStep) {
		for _, y0 := range positions(h, p, o.Step) {
			for _, x0 := range positions(w, p, o.Step) {
				var voxels []int
				for b := range depth {
					for y := range p {
						for x := range p {
							voxels = append(voxels, ((b0+b)*h+y0+y)*w+x0+x)
						}
					}
				}
				v := make([]float64, len(voxels))
				for i, vi := range voxels {
					v[i] = noisy.Data[vi]
				}
				mean := floats.Sum(v) / float64(len(v))
				floats.AddConst(-mean, v)
				sup, coef, _ := plainOMP(d, v, o.Epsilon2, o.MaxAtoms)
				rec := make([]float64, len(v))
				for i, k := range sup {
					floats.AddScaled(rec, coef[i], d.Atom(k))
				}
				for i, vi := range voxels {
					a.Set(vi, vi, a.At(vi, vi)+1)
					rhs[vi] += rec[i] + mean
				}
			}
		}
	}
	var x mat.VecDense
	if err := x.SolveVec(a, mat.NewVecDense(nv, rhs)); err != nil {
		t.Fatal(err)
	}
	return x.RawVector().Data
}

// TestReconstructSolvesNormalEquations checks the averaging against a
// direct solve of its normal equations on tiny random cubes, for step 1
// and for larger steps that still cover every voxel, grey and 3-D patches.
func TestReconstructSolvesNormalEquations(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, c := range []struct{ h, w, b, p, depth, step, bstep, k, kd int }{
		{9, 8, 1, 3, 1, 1, 1, 4, 1},
		{9, 8, 1, 3, 1, 2, 1, 4, 1},
		{7, 6, 5, 3, 2, 1, 1, 3, 3},
		{7, 6, 5, 3, 3, 2, 2, 4, 3},
	} {
		noisy := msi.NewCube(c.h, c.w, c.b)
		for i := range noisy.Data {
			noisy.Data[i] = 100 + 30*rng.NormFloat64()
		}
		d, err := PatchDCT(c.p, c.k, c.depth, c.kd)
		if err != nil {
			t.Fatal(err)
		}
		o := DenoiseOptions{Patch: c.p, Depth: c.depth, Step: c.step, BandStep: c.bstep,
			Epsilon2: 0.5 * 900 * float64(d.Dim), MaxAtoms: 4, Lambda: 0.7, Threads: 2}
		got := msi.NewCube(c.h, c.w, c.b)
		if err := Reconstruct(context.Background(), got, noisy, d, o); err != nil {
			t.Fatal(err)
		}
		want := directAverage(t, noisy, d, o)
		assertClose(t, "voxel", got.Data, want, 1e-9)
	}
}

// TestPositionsCover checks that the grid of window starts covers every
// index and includes both ends.
func TestPositionsCover(t *testing.T) {
	for n := 1; n <= 20; n++ {
		for p := 1; p <= n; p++ {
			for s := 1; s <= p; s++ {
				ps := positions(n, p, s)
				if ps[0] != 0 || ps[len(ps)-1] != n-p {
					t.Fatalf("n=%d p=%d s=%d: %v", n, p, s, ps)
				}
				for i, c := range coverage(n, p, ps) {
					if c == 0 {
						t.Fatalf("n=%d p=%d s=%d: index %d uncovered", n, p, s, i)
					}
				}
			}
		}
	}
}

// smallCube returns a smooth random cube with noise, for the pipeline
// tests.
func smallCube(h, w, b int, seed uint64) *msi.Cube {
	rng := rand.New(rand.NewPCG(seed, 1))
	c := msi.NewCube(h, w, b)
	for z := range b {
		for y := range h {
			for x := range w {
				c.Set(y, x, z, 120+60*math.Sin(float64(x+2*z)/4)*math.Cos(float64(y)/5)+20*rng.NormFloat64())
			}
		}
	}
	return c
}

// TestDenoiseThreadsIdentical checks that learning and the averaging give
// bit-identical results for 1 and 3 threads.
func TestDenoiseThreadsIdentical(t *testing.T) {
	noisy := smallCube(30, 27, 6, 2)
	var outs [2]*msi.Cube
	for i, th := range []int{1, 3} {
		outs[i] = msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
		_, err := Denoise(context.Background(), outs[i], noisy, 20, Settings{
			Patch: 4, Depth: 3, SideAtoms: 6, DepthAtoms: 3, Iters: 3, Samples: 1200,
			Seed: 5, Step: 1, BandStep: 1, Threads: th,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range outs[0].Data {
		if outs[0].Data[i] != outs[1].Data[i] {
			t.Fatalf("voxel %d: %v with 1 thread, %v with 3", i, outs[0].Data[i], outs[1].Data[i])
		}
	}
}

// TestCancelled checks that learning and the averaging stop with
// context.Canceled.
func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	noisy := smallCube(20, 20, 2, 3)
	d, _ := PatchDCT(4, 6, 1, 1)
	samples := SamplePatches(noisy, 4, 1, 300, 1)
	if _, err := Learn(ctx, d, samples, LearnOptions{Iters: 2, MaxAtoms: 4}); !errors.Is(err, context.Canceled) {
		t.Errorf("Learn: %v", err)
	}
	out := msi.NewCube(20, 20, 2)
	err := Reconstruct(ctx, out, noisy, d, DenoiseOptions{Patch: 4, Depth: 1, Step: 1, BandStep: 1, MaxAtoms: 4, Lambda: 1})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Reconstruct: %v", err)
	}
}

// TestSamplePatches checks that the training patches are real windows of
// the cube with their means removed, and that the seed fixes them.
func TestSamplePatches(t *testing.T) {
	c := smallCube(12, 10, 4, 4)
	p, depth := 3, 2
	s := SamplePatches(c, p, depth, 50, 9)
	if !floats.Equal(s, SamplePatches(c, p, depth, 50, 9)) {
		t.Fatal("same seed, different samples")
	}
	n := p * p * depth
	for i := range 50 {
		v := s[i*n : (i+1)*n]
		if math.Abs(floats.Sum(v)) > 1e-9 {
			t.Fatalf("sample %d has mean %v", i, floats.Sum(v)/float64(n))
		}
		found := false
		for b0 := 0; b0+depth <= c.Bands && !found; b0++ {
			for y0 := 0; y0+p <= c.Height && !found; y0++ {
				for x0 := 0; x0+p <= c.Width && !found; x0++ {
					w := make([]float64, 0, n)
					for b := range depth {
						for y := range p {
							for x := range p {
								w = append(w, c.At(y0+y, x0+x, b0+b))
							}
						}
					}
					floats.AddConst(-floats.Sum(w)/float64(n), w)
					found = floats.EqualApprox(w, v, 1e-9)
				}
			}
		}
		if !found {
			t.Fatalf("sample %d is no window of the cube", i)
		}
	}
}
