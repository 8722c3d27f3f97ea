package tensr

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"tdsc/internal/denoise"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/option"
)

// randomMatrix returns a rows×cols row-major matrix of standard normal
// entries.
func randomMatrix(rng *rand.Rand, rows, cols int) []float64 {
	m := make([]float64, rows*cols)
	for i := range m {
		m[i] = rng.NormFloat64()
	}
	return m
}

// randomDictionary returns a dictionary with random unit-norm columns.
func randomDictionary(rng *rand.Rand, size, atoms [3]int) *Dictionary {
	d := &Dictionary{Size: size, Atoms: atoms}
	for n := range 3 {
		p, r := size[n], atoms[n]
		m := randomMatrix(rng, p, r)
		for k := range r {
			s := 0.0
			for i := range p {
				s += m[i*r+k] * m[i*r+k]
			}
			for i := range p {
				m[i*r+k] /= math.Sqrt(s)
			}
		}
		d.D[n] = m
	}
	return d
}

// directMultilinear is the oracle of Multilinear: the defining sum
// dst(i₁,i₂,i₃) = Σ A₁(i₁,k₁)A₂(i₂,k₂)A₃(i₃,k₃)·src(k₁,k₂,k₃), mode 1
// fastest.
func directMultilinear(src []float64, k, rows [3]int, a [3][]float64) []float64 {
	dst := make([]float64, rows[0]*rows[1]*rows[2])
	for i3 := range rows[2] {
		for i2 := range rows[1] {
			for i1 := range rows[0] {
				s := 0.0
				for k3 := range k[2] {
					for k2 := range k[1] {
						for k1 := range k[0] {
							s += a[0][i1*k[0]+k1] * a[1][i2*k[1]+k2] * a[2][i3*k[2]+k3] * src[(k3*k[1]+k2)*k[0]+k1]
						}
					}
				}
				dst[(i3*rows[1]+i2)*rows[0]+i1] = s
			}
		}
	}
	return dst
}

func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		m = max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

// TestMultilinearOracle checks the three chained mode products, and every
// single mode-n product (identities on the other modes), against the
// defining sums on random tensors of unequal sizes.
func TestMultilinearOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		var k, rows [3]int
		for n := range 3 {
			k[n], rows[n] = 1+rng.IntN(6), 1+rng.IntN(6)
		}
		src := randomMatrix(rng, k[0]*k[1], k[2])
		var a [3][]float64
		for n := range 3 {
			a[n] = randomMatrix(rng, rows[n], k[n])
		}
		check := func(name string, rows [3]int, a [3][]float64) {
			a1, a2 := scratchLen(k, rows)
			dst := make([]float64, rows[0]*rows[1]*rows[2])
			Multilinear(dst, src, k, rows, a, make([]float64, a1), make([]float64, a2))
			want := directMultilinear(src, k, rows, a)
			if d := maxAbsDiff(dst, want); d > 1e-12 {
				t.Fatalf("trial %d, %s: %v→%v differs from the direct sum by %g", trial, name, k, rows, d)
			}
		}
		check("all modes", rows, a)
		for n := range 3 {
			single := [3][]float64{identity(k[0]), identity(k[1]), identity(k[2])}
			r := k
			single[n], r[n] = a[n], rows[n]
			check("mode "+string(rune('1'+n)), r, single)
		}
	}
}

// kronecker returns the (p₁p₂p₃)×(r₁r₂r₃) matrix D₃⊗D₂⊗D₁ of the
// vectorised problem, built entry by entry from its definition.
func kronecker(d *Dictionary) *mat.Dense {
	p, r := d.Size, d.Atoms
	k := mat.NewDense(d.PatchLen(), d.CoreLen(), nil)
	for i3 := range p[2] {
		for i2 := range p[1] {
			for i1 := range p[0] {
				row := (i3*p[1]+i2)*p[0] + i1
				for k3 := range r[2] {
					for k2 := range r[1] {
						for k1 := range r[0] {
							col := (k3*r[1]+k2)*r[0] + k1
							k.Set(row, col, d.D[0][i1*r[0]+k1]*d.D[1][i2*r[1]+k2]*d.D[2][i3*r[2]+k3])
						}
					}
				}
			}
		}
	}
	return k
}

// TestLipschitzAgainstSVD checks the product of the factors' squared norms
// against the squared largest singular value of the Kronecker matrix.
func TestLipschitzAgainstSVD(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 10 {
		var size, atoms [3]int
		for n := range 3 {
			size[n], atoms[n] = 2+rng.IntN(3), 2+rng.IntN(4)
		}
		d := randomDictionary(rng, size, atoms)
		var svd mat.SVD
		if !svd.Factorize(kronecker(d), mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		want := svd.Values(nil)[0]
		want *= want
		if got := d.Lipschitz(); math.Abs(got-want) > 1e-10*want {
			t.Errorf("trial %d: Lipschitz %.15g, squared spectral norm of the Kronecker matrix %.15g", trial, got, want)
		}
	}
}

// TestGradientFiniteDifference checks ∇f(B) = B×G − C, on a dense core and
// on a sparse one (the coder's other evaluation path), against central
// differences of f(B) = ½‖X − B×₁D₁×₂D₂×₃D₃‖².
func TestGradientFiniteDifference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	d := randomDictionary(rng, [3]int{3, 4, 2}, [3]int{5, 4, 3})
	c, err := NewCoder(d, 0, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	ws := c.NewWorkspace()
	x := randomMatrix(rng, d.PatchLen(), 1)
	f := func(b []float64) float64 {
		rec := make([]float64, len(x))
		c.Synthesize(ws, rec, b)
		s := 0.0
		for i := range x {
			e := x[i] - rec[i]
			s += e * e
		}
		return s / 2
	}
	dense := randomMatrix(rng, d.CoreLen(), 1)
	sparse := make([]float64, d.CoreLen())
	sparse[7], sparse[31] = 1.5, -0.7
	for name, b := range map[string][]float64{"dense": dense, "sparse": sparse} {
		grad := make([]float64, len(b))
		c.Analyze(ws, ws.c, x)
		cc := append([]float64(nil), ws.c...)
		c.gramProduct(ws, grad, b)
		for i := range grad {
			grad[i] -= cc[i]
		}
		const h = 1e-5
		for i := range b {
			bp := append([]float64(nil), b...)
			bm := append([]float64(nil), b...)
			bp[i] += h
			bm[i] -= h
			fd := (f(bp) - f(bm)) / (2 * h)
			if math.Abs(fd-grad[i]) > 1e-6*(1+math.Abs(fd)) {
				t.Fatalf("%s core, coefficient %d: gradient %.10g, finite difference %.10g", name, i, grad[i], fd)
			}
		}
	}
}

// denseFISTA is the oracle of the coder: plain FISTA on the vectorised
// lasso min ½‖x − Kb‖² + λ‖b‖₁ with the explicit Kronecker matrix K, step
// 1/‖K‖², a fixed large number of iterations.
func denseFISTA(k *mat.Dense, x []float64, lambda float64, iters int) []float64 {
	rows, cols := k.Dims()
	var svd mat.SVD
	svd.Factorize(k, mat.SVDNone)
	l := svd.Values(nil)[0]
	l *= l
	xv := mat.NewVecDense(rows, append([]float64(nil), x...))
	b := mat.NewVecDense(cols, nil)
	y := mat.NewVecDense(cols, nil)
	prev := mat.NewVecDense(cols, nil)
	res := mat.NewVecDense(rows, nil)
	grad := mat.NewVecDense(cols, nil)
	t := 1.0
	for range iters {
		res.MulVec(k, y)
		res.SubVec(res, xv)
		grad.MulVec(k.T(), res)
		prev.CopyVec(b)
		for i := range cols {
			v := y.AtVec(i) - grad.AtVec(i)/l
			b.SetVec(i, math.Copysign(math.Max(math.Abs(v)-lambda/l, 0), v))
		}
		tn := (1 + math.Sqrt(1+4*t*t)) / 2
		for i := range cols {
			y.SetVec(i, b.AtVec(i)+(t-1)/tn*(b.AtVec(i)-prev.AtVec(i)))
		}
		t = tn
	}
	return b.RawVector().Data
}

// TestCodeMatchesVectorisedLasso checks that the tensor-space coder finds
// the minimiser of the vectorised problem: same code to tolerance as a
// dense FISTA on the explicit Kronecker matrix, on random tiny cases (the
// lasso is strictly convex there, the dictionaries being undercomplete in
// total: 24 coefficients for 30 values).
func TestCodeMatchesVectorisedLasso(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 5 {
		d := randomDictionary(rng, [3]int{3, 5, 2}, [3]int{2, 4, 3})
		k := kronecker(d)
		x := randomMatrix(rng, d.PatchLen(), 1)
		lambda := 0.3 + 0.5*rng.Float64()
		want := denseFISTA(k, x, lambda, 20000)
		c, err := NewCoder(d, lambda, 20000, 1e-14)
		if err != nil {
			t.Fatal(err)
		}
		ws := c.NewWorkspace()
		got := make([]float64, d.CoreLen())
		c.Code(ws, got, x, false)
		if diff := maxAbsDiff(got, want); diff > 1e-7 {
			t.Errorf("trial %d: codes differ by %g\n got %v\nwant %v", trial, diff, got, want)
		}
		nz := 0
		for _, v := range want {
			if v != 0 {
				nz++
			}
		}
		if nz == 0 || nz == len(want) {
			t.Errorf("trial %d: λ = %g leaves %d of %d coefficients: not a test of the threshold", trial, lambda, nz, len(want))
		}
	}
}

// TestCodeZeroShortcut checks that a patch whose analysis is within ±λ
// gets the zero code, which then satisfies the optimality condition.
func TestCodeZeroShortcut(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	d := randomDictionary(rng, [3]int{3, 3, 3}, [3]int{4, 4, 4})
	x := randomMatrix(rng, d.PatchLen(), 1)
	c, _ := NewCoder(d, 1e6, 50, 0)
	ws := c.NewWorkspace()
	b := make([]float64, d.CoreLen())
	b[3] = 1
	if it := c.Code(ws, b, x, true); it != 0 {
		t.Errorf("%d iterations for a patch whose optimal code is zero", it)
	}
	for i, v := range b {
		if v != 0 {
			t.Fatalf("coefficient %d is %g, want 0", i, v)
		}
	}
}

// TestLearnObjectiveNonIncreasing checks that the learning objective never
// increases over the outer iterations, that every dictionary step alone
// never increases its own objective, and that the atoms stay in the unit
// ball.
func TestLearnObjectiveNonIncreasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	size, atoms := [3]int{3, 3, 4}, [3]int{4, 5, 4}
	const n = 300
	// Patches from a few random separable atoms plus noise, so that
	// learning has something to find.
	truth := randomDictionary(rng, size, atoms)
	tc, _ := NewCoder(truth, 0, 1, 0)
	tws := tc.NewWorkspace()
	x := make([]float64, n*truth.PatchLen())
	b := make([]float64, truth.CoreLen())
	for j := range n {
		clear(b)
		for range 3 {
			b[rng.IntN(len(b))] = 5 * rng.NormFloat64()
		}
		xj := x[j*truth.PatchLen() : (j+1)*truth.PatchLen()]
		tc.Synthesize(tws, xj, b)
		for i := range xj {
			xj[i] += 0.3 * rng.NormFloat64()
		}
	}
	init := randomDictionary(rng, size, atoms)
	res, err := Learn(context.Background(), x, n, init, LearnOptions{Lambda: 0.5, Iters: 8, CodeIters: 20, CodeTol: 1e-4, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("objective %v", res.Objective)
	for i := 1; i < len(res.Objective); i++ {
		if res.Objective[i] > res.Objective[i-1]*(1+1e-12) {
			t.Errorf("objective rose from %.12g to %.12g at iteration %d", res.Objective[i-1], res.Objective[i], i+1)
		}
	}
	if len(res.Objective) < 3 || res.Objective[len(res.Objective)-1] >= res.Objective[0] {
		t.Errorf("learning did not lower the objective: %v", res.Objective)
	}
	for m := range 3 {
		p, r := size[m], atoms[m]
		for k := range r {
			s := 0.0
			for i := range p {
				s += res.Dict.D[m][i*r+k] * res.Dict.D[m][i*r+k]
			}
			if s > 1+1e-12 {
				t.Errorf("mode %d atom %d has squared norm %g", m+1, k, s)
			}
		}
	}

	// The dictionary step alone, from random codes and a random start.
	codes := randomMatrix(rng, n, init.CoreLen())
	d := init.Clone()
	for mode := range 3 {
		st, err := modeSums(context.Background(), x, codes, n, d, mode, 2, func(int) []float64 {
			return make([]float64, d.PatchLen()/d.Size[mode]*d.Atoms[mode])
		})
		if err != nil {
			t.Fatal(err)
		}
		before := st.objective(d.D[mode], 0.5)
		updateMode(d, mode, st)
		after := st.objective(d.D[mode], 0.5)
		if after > before*(1+1e-12) {
			t.Errorf("mode %d: the dictionary step raised its objective from %.12g to %.12g", mode+1, before, after)
		}
		if !(after < before) {
			t.Errorf("mode %d: the dictionary step did not lower its objective (%.12g)", mode+1, after)
		}
		// The quadratic form agrees with the objective computed directly.
		direct := 0.0
		c, _ := NewCoder(d, 0.5, 1, 0)
		ws := c.NewWorkspace()
		rec := make([]float64, d.PatchLen())
		for j := range n {
			c.Synthesize(ws, rec, codes[j*d.CoreLen():(j+1)*d.CoreLen()])
			direct += c.objective(x[j*d.PatchLen():(j+1)*d.PatchLen()], rec, codes[j*d.CoreLen():(j+1)*d.CoreLen()])
		}
		if math.Abs(direct-after) > 1e-9*direct {
			t.Errorf("mode %d: objective from the sums %.12g, direct %.12g", mode+1, after, direct)
		}
	}
}

// smallNoisyCube returns a deterministic smooth 24×21×9 test cube with σ =
// 20 noise.
func smallNoisyCube() (clean, noisy *msi.Cube) {
	clean = msi.NewCube(24, 21, 9)
	for b := range clean.Bands {
		for y := range clean.Height {
			for x := range clean.Width {
				v := 120 + 60*math.Sin(float64(x)/4+float64(b)/5)*math.Cos(float64(y)/5)
				if (x/6+y/6)%2 == 0 {
					v += 40
				}
				clean.Set(y, x, b, v)
			}
		}
	}
	return clean, noise.Add(nil, clean, 20, 3)
}

// TestThreadsBitIdentical checks that the output does not depend on the
// number of workers.
func TestThreadsBitIdentical(t *testing.T) {
	clean, noisy := smallNoisyCube()
	var outs [2]*msi.Cube
	for i, threads := range []int{1, 3} {
		d := &Denoiser{Options: Options{Threads: threads, Samples: 500, Iters: 3}}
		out, _, err := d.Denoise(context.Background(), noisy, 20)
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = out
	}
	for i := range outs[0].Data {
		if math.Float64bits(outs[0].Data[i]) != math.Float64bits(outs[1].Data[i]) {
			t.Fatalf("voxel %d: %v with 1 thread, %v with 3", i, outs[0].Data[i], outs[1].Data[i])
		}
	}
	r, err := metrics.Evaluate(t.Context(), clean, outs[0])
	if err != nil {
		t.Fatal(err)
	}
	rn, _ := metrics.Evaluate(t.Context(), clean, noisy)
	t.Logf("PSNR %.2f → %.2f dB", rn.PSNR, r.PSNR)
	if r.PSNR < rn.PSNR+5 {
		t.Errorf("denoising gained only %.2f dB", r.PSNR-rn.PSNR)
	}
}

// TestCancel checks that a cancelled context stops Denoise with
// context.Canceled.
func TestCancel(t *testing.T) {
	_, noisy := smallNoisyCube()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := (&Denoiser{}).Denoise(ctx, noisy, 20)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// Cancelled between learning and coding.
	o := Options{Samples: 200, Iters: 1}.Resolve(20)
	res, err := Train(context.Background(), noisy, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Reconstruct(ctx, noisy, res.Dict, o, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Reconstruct: got %v, want context.Canceled", err)
	}
}

// TestValidate checks that bad settings name their flag.
func TestValidate(t *testing.T) {
	for _, c := range []struct {
		field string
		o     Options
	}{
		{"patch", Options{Patch: -1}},
		{"depth", Options{Depth: -2}},
		{"stride", Options{Stride: 9}},
		{"atoms", Options{Atoms: [3]int{10, -1, 10}}},
		{"atoms", Options{Atoms: [3]int{100, 100, 100}}},
		{"beta", Options{Beta: math.Inf(1)}},
		{"iters", Options{Iters: -1}},
		{"code-iters", Options{CodeIters: -1}},
		{"samples", Options{Samples: -5}},
	} {
		o := c.o.Resolve(10)
		err := o.Validate(64, 64, 31)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != c.field {
			t.Errorf("%+v: got %v, want an option error for %q", c.o, err, c.field)
		}
	}
	o := Options{}.Resolve(10)
	if err := o.Validate(4, 64, 31); err == nil {
		t.Error("a cube smaller than the patch was accepted")
	}
	if o.Atoms != [3]int{6, 6, 6} {
		t.Errorf("default atoms %v", o.Atoms)
	}
}

// TestAtomsSetting checks the atoms flag's two spellings, one count for
// the three modes or one per mode, from the command line's words to the
// Options, and its errors.
func TestAtomsSetting(t *testing.T) {
	for text, want := range map[string][3]int{"8": {8, 8, 8}, "6, 7,8": {6, 7, 8}, "6,6,4": {6, 6, 4}} {
		v, err := Spec.Parse(map[string]string{"atoms": text})
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		m, err := Spec.New(denoise.Config{Values: v})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.(*Denoiser).Options.Atoms; got != want {
			t.Errorf("%q: atoms %v, want %v", text, got, want)
		}
	}
	for _, s := range []string{"", "1,2", "0", "a,b,c", "1,2,3,4", "6,0,6"} {
		var oe *option.Error
		if _, err := Spec.Parse(map[string]string{"atoms": s}); !errors.As(err, &oe) || oe.Field != "atoms" {
			t.Errorf("%q: got %v", s, err)
		}
	}
}
