package tsc

import (
	"math/rand/v2"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/algebra/tproduct/tproducttest"
	"tdsc/internal/formats/pngstack"
	"tdsc/internal/testenv"
)

// benchBalloonPatches returns n mean-removed 5×5×5 patches (25×1×5 tensors)
// at random positions of the CAVE balloons scene with Gaussian noise of
// standard deviation sigma added on the [0, 255] scale (seeded).
func benchBalloonPatches(b *testing.B, n int, sigma float64) *tproduct.Tensor {
	b.Helper()
	cube, _, err := pngstack.Read(testenv.Path(b, "cave", "balloons_ms"))
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2017, 3))
	for i := range cube.Data {
		cube.Data[i] += sigma * rng.NormFloat64()
	}
	const p, q = 5, 5
	x := tproduct.NewTensor(p*p, n, q)
	for j := range n {
		y0 := rng.IntN(cube.Height - p + 1)
		x0 := rng.IntN(cube.Width - p + 1)
		b0 := rng.IntN(cube.Bands - q + 1)
		col := x.Lateral(j)
		var mean float64
		for t := range q {
			for dy := range p {
				for dx := range p {
					v := cube.At(y0+dy, x0+dx, b0+t)
					col[t*p*p+dy*p+dx] = v
					mean += v
				}
			}
		}
		mean /= float64(len(col))
		for i := range col {
			col[i] -= mean
		}
	}
	return x
}

// dictStatFlops is the flop count of the dictionary step's pass over one
// patch in the Fourier domain: its column of X̂B̂ᴴ (m×r) and of B̂B̂ᴴ (r×r) in
// every stored slice, 2 flops per multiply-add in a real slice and 8 in a
// complex one (the same count as fourierFlops).
func dictStatFlops(m, r, k int) float64 {
	var f float64
	for l := range tproduct.Stored(k) {
		c := 8.0
		if tproduct.Weight(l, k) == 1 {
			c = 2
		}
		f += c * float64(m*r+r*r)
	}
	return f
}

// BenchmarkLearn learns a 25×30×5 dictionary from 20000 noisy (σ = 30)
// balloons patches: 30 outer iterations of 30 FISTA iterations, β = 120.
// Run it with -benchtime=1x.
func BenchmarkLearn(b *testing.B) {
	x := benchBalloonPatches(b, 20000, 30)
	opt := LearnOptions{Atoms: 30, Beta: 120, Iters: 30, InnerIters: 30, Seed: 1}
	var res *LearnResult
	for b.Loop() {
		var err error
		if res, err = Learn(b.Context(), x, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(res.Objective[0], "obj-first")
	b.ReportMetric(res.Objective[len(res.Objective)-1], "obj-last")
	b.ReportMetric(float64(res.Reseeded), "reseeded")
	b.ReportMetric(float64(res.CodesKept), "codes-kept")
	// Every run does the same iterations: the count of the last one holds.
	perPatch := float64(opt.InnerIters)*fourierFlops(opt.Atoms, x.K) + dictStatFlops(x.M, opt.Atoms, x.K)
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(res.Iterations)*float64(x.N)*perPatch/sec/1e9, "GFLOP/s-eq")
}

// BenchmarkDictUpdate times the dictionary step alone for 20000 patches of
// 25×1×5 and 30 atoms, with codes of about 4 active atoms per patch as
// FISTA gives them at the paper's settings.
func BenchmarkDictUpdate(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	m, r, k, n := 25, 30, 5, 20000
	d := tproducttest.UnitAtoms(rng, m, r, k)
	codes := tproduct.NewTensor(r, n, k)
	for j := range n {
		for range 4 {
			q := rng.IntN(r)
			for t := range k {
				codes.Set(q, j, t, 20*rng.NormFloat64())
			}
		}
	}
	x := dictNaiveProduct(d, codes)
	for i := range x.Data {
		x.Data[i] += 30 * rng.NormFloat64()
	}
	for _, threads := range []int{1, 2} {
		b.Run(map[int]string{1: "threads=1", 2: "threads=2"}[threads], func(b *testing.B) {
			u := newDictUpdater(m, r, k, threads)
			work := tproduct.NewTensor(m, r, k)
			var st dictStats
			st.init(m, r, k)
			var newton int
			for b.Loop() {
				copy(work.Data, d.Data)
				if err := u.accumulate(b.Context(), &st, x, codes); err != nil {
					b.Fatal(err)
				}
				info, err := u.solve(b.Context(), work, &st, x, codes)
				if err != nil {
					b.Fatal(err)
				}
				newton = info.NewtonIterations
			}
			b.ReportMetric(float64(newton), "newton-steps")
			b.ReportMetric(float64(n)*dictStatFlops(m, r, k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s-eq")
		})
	}
}
