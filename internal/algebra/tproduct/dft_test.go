package tproduct

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/mjibson/go-dsp/fft"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/floats"
)

// tube transforms one real tube x (len k) into dst (len ⌊k/2⌋+1): the
// single-tube forward transform that the tests check the batched ones
// against. It panics if the lengths do not match.
func (p *DFT) tube(dst []complex128, x []float64) {
	k := p.k
	if len(x) != k || len(dst) != Stored(k) {
		panic("tsc: DFT tube length mismatch")
	}
	if k > maxStackTube {
		for l := range dst {
			switch {
			case l == 0:
				dst[0] = complex(dotRow(p.fwd, k, 0, x), 0)
			case 2*l == k:
				dst[l] = complex(dotRow(p.fwd, k, k-1, x), 0)
			default:
				dst[l] = complex(dotRow(p.fwd, k, 2*l-1, x), dotRow(p.fwd, k, 2*l, x))
			}
		}
		return
	}
	var s [maxStackTube]float64
	p.ForwardRows(s[:k], 1, x, 1, 1)
	splitToComplex(dst, s[:k])
}

// dotRow returns Σ_t m[c*k+t]·x[t].
func dotRow(m []float64, k, c int, x []float64) float64 {
	row := m[c*k : (c+1)*k]
	var s float64
	for t, v := range x {
		s += row[t] * v
	}
	return s
}

// inverse sets dst to the inverse DFT along mode 3 of src (scaled by 1/k),
// the counterpart of Forward for the round-trip test. The imaginary parts of
// the real slices are ignored. It panics if the sizes differ or the plan's
// length is not src.K.
func (p *DFT) inverse(dst *Tensor, src *FTensor) {
	if dst.M != src.M || dst.N != src.N || dst.K != src.K || src.K != p.k {
		panic("tsc: DFT size mismatch")
	}
	m, n, k := src.M, src.N, src.K
	var s [maxStackTube]float64
	var c [maxStackTube/2 + 1]complex128
	big := k > maxStackTube
	for j := range n {
		col := dst.Lateral(j)
		for i := range m {
			if big {
				for t := range k {
					row := p.inv[t*k : (t+1)*k]
					v := row[0] * real(src.Data[i*n+j])
					for l := 1; l < Stored(k); l++ {
						z := src.Data[(l*m+i)*n+j]
						if 2*l == k {
							v += row[k-1] * real(z)
						} else {
							v += row[2*l-1]*real(z) + row[2*l]*imag(z)
						}
					}
					col[t*m+i] = v
				}
				continue
			}
			spec := c[:Stored(k)]
			for l := range spec {
				spec[l] = src.Data[(l*m+i)*n+j]
			}
			complexToSplit(s[:k], spec)
			p.InverseRows(col[i:], m, s[:k], 1, 1)
		}
	}
}

// spectralInner returns the Frobenius inner product ⟨X, Y⟩ of the real
// tensors whose half-spectra are a and b (of the same size) by Parseval:
// (1/K) Σ_ℓ w_ℓ Re⟨X̂^(ℓ), Ŷ^(ℓ)⟩ with the slice weights of Weight. The
// imaginary parts of the real slices are ignored, as the inverse DFT
// ignores them.
func spectralInner(a, b *FTensor) float64 {
	var s float64
	for l := range Stored(a.K) {
		x, y := a.Slice(l), b.Slice(l)
		var sl float64
		if Weight(l, a.K) == 1 {
			for i, z := range x {
				sl += real(z) * real(y[i])
			}
		} else {
			for i, z := range x {
				sl += 2 * (real(z)*real(y[i]) + imag(z)*imag(y[i]))
			}
		}
		s += sl
	}
	return s / float64(a.K)
}

// dftLengths are the tube lengths the transform tests cover: every hand-
// written length, the generic matrix path (even and odd), the paper's 5 and
// the natural-image 16 and 32, and lengths beyond the stack buffers.
var dftLengths = []int{1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 65, 70}

func TestDFTTubeMatchesGonumFFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range dftLengths {
		p := NewDFT(k)
		fft := fourier.NewFFT(k)
		for range 5 {
			x := make([]float64, k)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			want := fft.Coefficients(nil, x)
			got := make([]complex128, Stored(k))
			p.tube(got, x)
			if len(want) != len(got) {
				t.Fatalf("k=%d: gonum returns %d coefficients, Stored gives %d", k, len(want), len(got))
			}
			for l := range got {
				if cmplx.Abs(got[l]-want[l]) > 1e-12*float64(k) {
					t.Errorf("k=%d ℓ=%d: Tube %v, gonum %v", k, l, got[l], want[l])
				}
			}
			back := make([]float64, k)
			p.InverseTube(back, got)
			// gonum's Sequence is unnormalised: it returns k·x.
			seq := fft.Sequence(nil, want)
			for i := range x {
				if math.Abs(back[i]-x[i]) > 1e-13*float64(k) {
					t.Errorf("k=%d: round trip element %d: %v, want %v", k, i, back[i], x[i])
				}
				if math.Abs(back[i]-seq[i]/float64(k)) > 1e-13*float64(k) {
					t.Errorf("k=%d: InverseTube element %d: %v, gonum %v", k, i, back[i], seq[i]/float64(k))
				}
			}
		}
	}
}

func TestDFTInverseTubeIgnoresImaginaryOfRealSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range dftLengths {
		p := NewDFT(k)
		x := make([]float64, k)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		spec := make([]complex128, Stored(k))
		p.tube(spec, x)
		spec[0] += complex(0, 3)
		if k%2 == 0 {
			spec[k/2] += complex(0, -2)
		}
		back := make([]float64, k)
		p.InverseTube(back, spec)
		for i := range x {
			if math.Abs(back[i]-x[i]) > 1e-13*float64(k) {
				t.Fatalf("k=%d: element %d = %v, want %v", k, i, back[i], x[i])
			}
		}
	}
}

func TestDFTForwardLayoutAndParseval(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	for _, k := range dftLengths {
		m, n := 1+rng.IntN(6), 1+rng.IntN(5)
		p := NewDFT(k)
		x, y := NewTensor(m, n, k), NewTensor(m, n, k)
		for i := range x.Data {
			x.Data[i], y.Data[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		fx, fy := NewFTensor(m, n, k), NewFTensor(m, n, k)
		p.Forward(fx, x)
		p.Forward(fy, y)
		tube := make([]float64, k)
		spec := make([]complex128, Stored(k))
		for j := range n {
			for i := range m {
				for tt := range k {
					tube[tt] = x.At(i, j, tt)
				}
				p.tube(spec, tube)
				for l := range spec {
					if got := fx.Slice(l)[i*n+j]; cmplx.Abs(got-spec[l]) > 1e-12*float64(k) {
						t.Fatalf("k=%d: Forward slice %d (%d,%d) = %v, Tube gives %v", k, l, i, j, got, spec[l])
					}
				}
			}
		}
		xx, yy := floats.Dot(x.Data, x.Data), floats.Dot(y.Data, y.Data)
		if got := spectralInner(fx, fx); math.Abs(got-xx) > 1e-11*xx {
			t.Errorf("k=%d: Parseval: (1/k)Σ w_ℓ‖X̂_ℓ‖² = %v, ‖X‖² = %v", k, got, xx)
		}
		if got, want := spectralInner(fx, fy), floats.Dot(x.Data, y.Data); math.Abs(got-want) > 1e-11*math.Sqrt(xx*yy) {
			t.Errorf("k=%d: spectral ⟨X, Y⟩ = %v, direct %v", k, got, want)
		}
		back := NewTensor(m, n, k)
		p.inverse(back, fx)
		for i, v := range x.Data {
			if math.Abs(back.Data[i]-v) > 1e-12*float64(k) {
				t.Fatalf("k=%d: Inverse(Forward(x)) element %d = %v, want %v", k, i, back.Data[i], v)
			}
		}
	}
}

// TestDFTRowsStrided checks the batched split-form transforms with strides
// larger than the number of tubes against the single-tube transform.
func TestDFTRowsStrided(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 4))
	for _, k := range dftLengths {
		p := NewDFT(k)
		rows := 1 + rng.IntN(9)
		ss, ds := rows+rng.IntN(3), rows+rng.IntN(3)
		src := make([]float64, k*ss)
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		dst := make([]float64, k*ds)
		p.ForwardRows(dst, ds, src, ss, rows)
		tube := make([]float64, k)
		spec := make([]complex128, Stored(k))
		split := make([]float64, k)
		for q := range rows {
			for tt := range k {
				tube[tt] = src[tt*ss+q]
			}
			p.tube(spec, tube)
			complexToSplit(split, spec)
			for c := range k {
				if math.Abs(dst[c*ds+q]-split[c]) > 1e-12*float64(k) {
					t.Fatalf("k=%d: forwardRows component %d of tube %d = %v, want %v", k, c, q, dst[c*ds+q], split[c])
				}
			}
		}
		back := make([]float64, k*ss)
		p.InverseRows(back, ss, dst, ds, rows)
		for q := range rows {
			for tt := range k {
				if math.Abs(back[tt*ss+q]-src[tt*ss+q]) > 1e-12*float64(k) {
					t.Fatalf("k=%d: InverseRows(forwardRows) tube %d element %d = %v, want %v",
						k, q, tt, back[tt*ss+q], src[tt*ss+q])
				}
			}
		}
	}
}

// fftLengths are the lengths of the FFT tests: every length up to 40 (odd,
// prime, powers of 2, and the radices 2, 3, 4, 5 mixed), and longer ones
// with several stages or beyond the stack buffers.
func fftLengths() []int {
	ks := []int{48, 60, 64, 70, 96, 100, 128, 250}
	for k := 1; k <= 40; k++ {
		ks = append(ks, k)
	}
	return ks
}

// TestRFFTPlanCoverage checks which lengths get an FFT plan: exactly the
// even ones whose half has no prime factor above 5.
func TestRFFTPlanCoverage(t *testing.T) {
	for _, k := range fftLengths() {
		h, smooth := k/2, k%2 == 0
		for _, p := range []int{2, 3, 5} {
			for h > 1 && h%p == 0 {
				h /= p
			}
		}
		smooth = smooth && h == 1
		if got := newRFFT(k) != nil; got != smooth {
			t.Errorf("k=%d: plan %v, want %v", k, got, smooth)
		}
		if got, want := NewDFT(k).fast != nil, smooth && k >= minFFT; got != want {
			t.Errorf("k=%d: DFT uses the FFT: %v, want %v", k, got, want)
		}
	}
}

// TestRFFTMatchesGonumAndMatrix checks the FFT on strided blocks of tubes,
// forward against gonum's FFT and the DFT matrix, inverse against gonum's
// inverse and the matrix, and the round trip.
func TestRFFTMatchesGonumAndMatrix(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 6))
	for _, k := range fftLengths() {
		f := newRFFT(k)
		if f == nil {
			continue
		}
		p, fft := NewDFT(k), fourier.NewFFT(k)
		tol := 1e-13 * float64(k)
		for _, rows := range []int{1, 3, 8, 13} {
			ss, ds := rows+rng.IntN(4), rows+rng.IntN(4)
			src := make([]float64, k*ss)
			for i := range src {
				src[i] = rng.NormFloat64()
			}
			orig := append([]float64(nil), src...)
			dst := make([]float64, k*ds)
			for i := range dst {
				dst[i] = math.NaN() // the transform must not read dst
			}
			f.forward(dst, ds, src, ss, rows)
			mat := make([]float64, k*ds)
			applyRows(mat, ds, p.fwd, src, ss, k, rows)
			tube := make([]float64, k)
			split := make([]float64, k)
			for q := range rows {
				for tt := range k {
					tube[tt] = src[tt*ss+q]
				}
				complexToSplit(split, fft.Coefficients(nil, tube))
				for c := range k {
					got := dst[c*ds+q]
					if math.Abs(got-split[c]) > tol || math.Abs(got-mat[c*ds+q]) > tol {
						t.Fatalf("k=%d rows=%d: forward component %d of tube %d = %v, gonum %v, matrix %v",
							k, rows, c, q, got, split[c], mat[c*ds+q])
					}
				}
			}
			for i, v := range orig {
				if src[i] != v {
					t.Fatalf("k=%d: forward changed its input", k)
				}
			}
			spec := append([]float64(nil), dst...)
			back := make([]float64, k*ss)
			for i := range back {
				back[i] = math.NaN()
			}
			f.inverse(back, ss, dst, ds, rows)
			mat = make([]float64, k*ss)
			applyRows(mat, ss, p.inv, dst, ds, k, rows)
			half := make([]complex128, Stored(k))
			for q := range rows {
				for c := range k {
					split[c] = dst[c*ds+q]
				}
				splitToComplex(half, split)
				seq := fft.Sequence(nil, half)
				for tt := range k {
					got := back[tt*ss+q]
					if math.Abs(got-seq[tt]/float64(k)) > tol || math.Abs(got-mat[tt*ss+q]) > tol {
						t.Fatalf("k=%d rows=%d: inverse element %d of tube %d = %v, gonum %v, matrix %v",
							k, rows, tt, q, got, seq[tt]/float64(k), mat[tt*ss+q])
					}
					if math.Abs(got-src[tt*ss+q]) > tol {
						t.Fatalf("k=%d rows=%d: round trip element %d of tube %d = %v, want %v",
							k, rows, tt, q, got, src[tt*ss+q])
					}
				}
			}
			for i, v := range spec {
				if math.Float64bits(dst[i]) != math.Float64bits(v) {
					t.Fatalf("k=%d: inverse changed its input", k)
				}
			}
		}
	}
}

// TestRFFTParseval checks ‖x‖² = (1/k) Σ_ℓ w_ℓ |X̂_ℓ|² for the FFT's split
// spectra, including the ones gonum does not produce (long tubes).
func TestRFFTParseval(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 7))
	for _, k := range append(fftLengths(), 480, 1000) {
		f := newRFFT(k)
		if f == nil {
			continue
		}
		x, s := make([]float64, k), make([]float64, k)
		var want float64
		for i := range x {
			x[i] = rng.NormFloat64()
			want += x[i] * x[i]
		}
		f.forward(s, 1, x, 1, 1)
		got := s[0] * s[0]
		for l := 1; l < Stored(k); l++ {
			if 2*l == k {
				got += s[k-1] * s[k-1]
			} else {
				got += 2 * (s[2*l-1]*s[2*l-1] + s[2*l]*s[2*l])
			}
		}
		if got /= float64(k); math.Abs(got-want) > 1e-12*want {
			t.Errorf("k=%d: (1/k)Σ w_ℓ|X̂_ℓ|² = %v, ‖x‖² = %v", k, got, want)
		}
	}
}

// TestRFFTDeterministic checks that a tube's transform does not depend on
// the other tubes of its block or on the stride, bit for bit.
func TestRFFTDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 8))
	const k, rows = 32, 7
	f := newRFFT(k)
	src := make([]float64, k*rows)
	for i := range src {
		src[i] = rng.NormFloat64()
	}
	all := make([]float64, k*rows)
	f.forward(all, rows, src, rows, rows)
	one := make([]float64, k)
	for q := range rows {
		f.forward(one, 1, src[q:], rows, 1)
		for c, v := range one {
			if math.Float64bits(v) != math.Float64bits(all[c*rows+q]) {
				t.Fatalf("tube %d component %d: alone %v, in a block %v", q, c, v, all[c*rows+q])
			}
		}
	}
}

func TestDFTRowsAllocateNothing(t *testing.T) {
	for _, k := range []int{5, 17, 30, 32} {
		p := NewDFT(k)
		const rows = 8
		src, dst := make([]float64, k*rows), make([]float64, k*rows)
		if a := testing.AllocsPerRun(5, func() {
			p.ForwardRows(dst, rows, src, rows, rows)
			p.InverseRows(src, rows, dst, rows, rows)
		}); a != 0 {
			t.Errorf("k=%d: transforms allocate %v times per call", k, a)
		}
	}
}

// dftBenchLengths are the tube lengths of BenchmarkDFTTubes: the paper's 5,
// the natural-image 8, 16 and 32, the prime 17 (matrix path) and lengths
// around the FFT crossover.
var dftBenchLengths = []int{5, 6, 8, 10, 12, 16, 17, 20, 24, 32}

// BenchmarkDFTTubes measures the split-form transforms of blocks of 32 and
// 64 tubes (the patch and code blocks of the natural-image model) and
// reports ns per tube, for each transform path that a length has.
func BenchmarkDFTTubes(b *testing.B) {
	for _, k := range dftBenchLengths {
		for _, rows := range []int{32, 64} {
			p := NewDFT(k)
			rng := rand.New(rand.NewPCG(1, 5))
			src := make([]float64, rows*k)
			for i := range src {
				src[i] = rng.NormFloat64()
			}
			dst := make([]float64, rows*k)
			paths := map[string][2]func(){
				"auto": {
					func() { p.ForwardRows(dst, rows, src, rows, rows) },
					func() { p.InverseRows(src, rows, dst, rows, rows) },
				},
				"matrix": {
					func() { applyRows(dst, rows, p.fwd, src, rows, k, rows) },
					func() { applyRows(src, rows, p.inv, dst, rows, k, rows) },
				},
			}
			if f := newRFFT(k); f != nil {
				paths["fft"] = [2]func(){
					func() { f.forward(dst, rows, src, rows, rows) },
					func() { f.inverse(src, rows, dst, rows, rows) },
				}
			}
			for _, name := range []string{"auto", "matrix", "fft"} {
				fns, ok := paths[name]
				if !ok {
					continue
				}
				for dir, fn := range map[string]func(){"forward": fns[0], "inverse": fns[1]} {
					b.Run(fmt.Sprintf("k=%d/rows=%d/%s/%s", k, rows, name, dir), func(b *testing.B) {
						for b.Loop() {
							fn()
						}
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/tube")
					})
				}
			}
		}
	}
}

// BenchmarkGoDSPTubes measures why the band-axis transform is this
// package's plan and not go-dsp's fft.FFTReal (which tdsc uses for Welch
// spectra in package noref): both transform a block of 64 length-5 tubes,
// the paper's patch depth, the plan in place with ForwardRows, go-dsp one
// tube at a time (its length-5 transform goes through Bluestein's
// algorithm, padded to 16, and allocates its result and scratch). It
// reports ns per tube and the allocations.
func BenchmarkGoDSPTubes(b *testing.B) {
	const k, rows = 5, 64
	rng := rand.New(rand.NewPCG(1, 6))
	src := make([]float64, rows*k) // tube j is src[j], src[rows+j], …: the rows-strided layout of ForwardRows
	for i := range src {
		src[i] = rng.NormFloat64()
	}
	b.Run("plan", func(b *testing.B) {
		p := NewDFT(k)
		dst := make([]float64, rows*k)
		b.ReportAllocs()
		for b.Loop() {
			p.ForwardRows(dst, rows, src, rows, rows)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/tube")
	})
	b.Run("go-dsp", func(b *testing.B) {
		tube := make([]float64, k)
		b.ReportAllocs()
		for b.Loop() {
			for j := range rows {
				for t := range tube {
					tube[t] = src[t*rows+j]
				}
				fft.FFTReal(tube)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/tube")
	})
}
