package groupwiener

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// TestDCTMatrix checks the DCT-II against its definition through an
// independent route (the real part of a DFT of the mirrored sequence of
// length 2n: X_k = Re(e^{−iπk/2n} Σ_{t<2n} y_t e^{−2πikt/2n}) / 2 for the
// even extension y), gonum's FFT, and its orthonormality. (gonum's DCT is a
// DCT-I, so it is no oracle here.)
func TestDCTMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 6, 8, 31} {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		y := make([]float64, 2*n)
		for i := range n {
			y[i], y[2*n-1-i] = x[i], x[i]
		}
		spec := fourier.NewFFT(2*n).Coefficients(nil, y)
		m := DCTMatrix(n)
		for k := range n {
			got := 0.0
			for t2, v := range x {
				got += m[k*n+t2] * v
			}
			ph := -math.Pi * float64(k) / float64(2*n)
			want := (real(spec[k])*math.Cos(ph) - imag(spec[k])*math.Sin(ph)) / 2
			want *= math.Sqrt(2 / float64(n))
			if k == 0 {
				want /= math.Sqrt2
			}
			if math.Abs(got-want) > 1e-12 {
				t.Fatalf("n = %d, k = %d: %v, want %v", n, k, got, want)
			}
		}
		for a := range n {
			for b := range n {
				d := 0.0
				for t2 := range n {
					d += m[a*n+t2] * m[b*n+t2]
				}
				if want := float64(boolInt(a == b)); math.Abs(d-want) > 1e-12 {
					t.Fatalf("n = %d: row %d · row %d = %v", n, a, b, d)
				}
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// haarMatrix is the orthonormal Haar matrix of size n (a power of two),
// built recursively from its definition: the first half of the rows are the
// pair sums of the half-size matrix's rows, the second half the scaled pair
// differences of the unit vectors.
func haarMatrix(n int) [][]float64 {
	if n == 1 {
		return [][]float64{{1}}
	}
	h := haarMatrix(n / 2)
	out := make([][]float64, n)
	r := 1 / math.Sqrt2
	for i := range n / 2 {
		out[i] = make([]float64, n)
		for j, v := range h[i] {
			out[i][2*j] = v * r
			out[i][2*j+1] = v * r
		}
		out[n/2+i] = make([]float64, n)
		out[n/2+i][2*i] = r
		out[n/2+i][2*i+1] = -r
	}
	return out
}

// explicitForward applies the Kronecker product Haar ⊗ I_c ⊗ D ⊗ D as one
// dense matrix built element by element.
func explicitForward(x []float64, n, c, p int) []float64 {
	d := DCTMatrix(p)
	h := haarMatrix(n)
	out := make([]float64, len(x))
	idx := func(j, b, y, xx int) int { return ((j*c+b)*p+y)*p + xx }
	for j := range n {
		for b := range c {
			for u := range p {
				for v := range p {
					s := 0.0
					for j2 := range n {
						for y := range p {
							for xx := range p {
								s += h[j][j2] * d[u*p+y] * d[v*p+xx] * x[idx(j2, b, y, xx)]
							}
						}
					}
					out[idx(j, b, u, v)] = s
				}
			}
		}
	}
	return out
}

func randomGroup(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64() * 20
	}
	return x
}

func TestForwardAgainstKronecker(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 4, 8} {
		for _, p := range []int{1, 2, 3, 6} {
			for _, c := range []int{1, 3, 5} {
				f, err := New(n, p, c)
				if err != nil {
					t.Fatal(err)
				}
				ws := f.NewWorkspace()
				x := randomGroup(rng, f.Len())
				want := explicitForward(x, n, c, p)
				got := append([]float64(nil), x...)
				f.Forward(got, ws)
				for i := range got {
					if math.Abs(got[i]-want[i]) > 1e-9 {
						t.Fatalf("n=%d p=%d c=%d: coefficient %d = %v, want %v", n, p, c, i, got[i], want[i])
					}
				}
				f.Inverse(got, ws)
				for i := range got {
					if math.Abs(got[i]-x[i]) > 1e-9 {
						t.Fatalf("n=%d p=%d c=%d: round trip %d = %v, want %v", n, p, c, i, got[i], x[i])
					}
				}
			}
		}
	}
}

// TestApplyClosedForm compares Apply with the formula written out on the
// explicit transform: X = Tᵀ(W ⊙ TG), ω = 1/(σ²ΣW²).
func TestApplyClosedForm(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n, p, c, sigma := 4, 3, 2, 7.0
	f, _ := New(n, p, c)
	g, pil := randomGroup(rng, f.Len()), randomGroup(rng, f.Len())
	gh, ph := explicitForward(g, n, c, p), explicitForward(pil, n, c, p)
	sumW2 := 0.0
	for i := range gh {
		w := ph[i] * ph[i] / (ph[i]*ph[i] + sigma*sigma)
		gh[i] *= w
		sumW2 += w * w
	}
	// Tᵀ by the explicit matrix: the transform is orthonormal, so
	// Tᵀy = Σ_i y_i T e_i... computed through the transposed sum.
	want := make([]float64, len(gh))
	for i := range want {
		e := make([]float64, len(gh))
		e[i] = 1
		col := explicitForward(e, n, c, p) // column i of T = row i of Tᵀ
		for k, v := range col {
			want[i] += v * gh[k]
		}
	}
	got := make([]float64, f.Len())
	weight := f.Apply(got, g, pil, sigma, f.NewWorkspace())
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("X[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if w := 1 / (sigma * sigma * sumW2); math.Abs(weight-w) > 1e-12*w {
		t.Errorf("weight %v, want %v", weight, w)
	}
}

func TestApplyLimits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	f, _ := New(8, 4, 3)
	ws := f.NewWorkspace()
	g, pil := randomGroup(rng, f.Len()), randomGroup(rng, f.Len())
	out := make([]float64, f.Len())
	f.Apply(out, g, pil, 1e-9, ws)
	for i := range out {
		if math.Abs(out[i]-g[i]) > 1e-6 {
			t.Fatalf("σ → 0: X[%d] = %v, want the noisy %v", i, out[i], g[i])
		}
	}
	w := f.Apply(out, g, make([]float64, f.Len()), 5, ws)
	for i := range out {
		if out[i] != 0 {
			t.Fatalf("zero pilot: X[%d] = %v, want 0", i, out[i])
		}
	}
	if w != 1/25.0 {
		t.Errorf("zero pilot: weight %v, want 1/σ² = 0.04", w)
	}
	// In place equals out of place.
	want := make([]float64, f.Len())
	f.Apply(want, g, pil, 5, ws)
	f.Apply(g, g, pil, 5, ws)
	for i := range g {
		if g[i] != want[i] {
			t.Fatalf("in place differs at %d", i)
		}
	}
	if a := testing.AllocsPerRun(5, func() { f.Apply(out, want, pil, 5, ws) }); a != 0 {
		t.Errorf("Apply allocates %v times", a)
	}
}

func TestErrorsAndPanics(t *testing.T) {
	for _, c := range []struct{ n, p, b int }{{3, 2, 2}, {0, 2, 2}, {4, 0, 2}, {4, 2, 0}} {
		if _, err := New(c.n, c.p, c.b); err == nil {
			t.Errorf("New(%v) gave no error", c)
		}
	}
	f, _ := New(2, 2, 1)
	defer func() {
		if recover() == nil {
			t.Error("Apply with a short group did not panic")
		}
	}()
	f.Apply(make([]float64, 7), make([]float64, 8), make([]float64, 8), 1, f.NewWorkspace())
}

func BenchmarkApply(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range []struct{ n, p, c int }{{64, 6, 31}, {32, 8, 31}} {
		f, _ := New(s.n, s.p, s.c)
		ws := f.NewWorkspace()
		g, pil := randomGroup(rng, f.Len()), randomGroup(rng, f.Len())
		out := make([]float64, f.Len())
		b.Run("", func(b *testing.B) {
			for b.Loop() {
				f.Apply(out, g, pil, 10, ws)
			}
		})
	}
}
