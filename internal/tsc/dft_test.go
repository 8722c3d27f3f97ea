package tsc

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// dftLengths are the tube lengths the transform tests cover: every hand-
// written length, the generic matrix path (even and odd), the paper's 5 and
// the natural-image 16 and 32, and lengths beyond the stack buffers.
var dftLengths = []int{1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 65, 70}

func tpRandTensor(rng *rand.Rand, m, n, k int) *Tensor {
	x := NewTensor(m, n, k)
	for i := range x.Data {
		x.Data[i] = rng.NormFloat64()
	}
	return x
}

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
			p.Tube(got, x)
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
		p.Tube(spec, x)
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
		x := tpRandTensor(rng, m, n, k)
		y := tpRandTensor(rng, m, n, k)
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
				p.Tube(spec, tube)
				for l := range spec {
					if got := fx.Slice(l)[i*n+j]; cmplx.Abs(got-spec[l]) > 1e-12*float64(k) {
						t.Fatalf("k=%d: Forward slice %d (%d,%d) = %v, Tube gives %v", k, l, i, j, got, spec[l])
					}
				}
			}
		}
		if got, want := FNorm2(fx), Norm2(x); math.Abs(got-want) > 1e-11*want {
			t.Errorf("k=%d: Parseval: (1/k)Σ w_ℓ‖X̂_ℓ‖² = %v, ‖X‖² = %v", k, got, want)
		}
		if got, want := FInner(fx, fy), Inner(x, y); math.Abs(got-want) > 1e-11*math.Sqrt(Norm2(x)*Norm2(y)) {
			t.Errorf("k=%d: FInner = %v, Inner = %v", k, got, want)
		}
		back := NewTensor(m, n, k)
		p.Inverse(back, fx)
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
		p.forwardRows(dst, ds, src, ss, rows)
		tube := make([]float64, k)
		spec := make([]complex128, Stored(k))
		split := make([]float64, k)
		for q := range rows {
			for tt := range k {
				tube[tt] = src[tt*ss+q]
			}
			p.Tube(spec, tube)
			complexToSplit(split, spec)
			for c := range k {
				if math.Abs(dst[c*ds+q]-split[c]) > 1e-12*float64(k) {
					t.Fatalf("k=%d: forwardRows component %d of tube %d = %v, want %v", k, c, q, dst[c*ds+q], split[c])
				}
			}
		}
		back := make([]float64, k*ss)
		p.inverseRows(back, ss, dst, ds, rows)
		for q := range rows {
			for tt := range k {
				if math.Abs(back[tt*ss+q]-src[tt*ss+q]) > 1e-12*float64(k) {
					t.Fatalf("k=%d: inverseRows(forwardRows) tube %d element %d = %v, want %v",
						k, q, tt, back[tt*ss+q], src[tt*ss+q])
				}
			}
		}
	}
}

// BenchmarkDFTTubes measures the split-form transforms of 30 tubes (one
// code block of the paper's dictionary) and reports ns per tube.
func BenchmarkDFTTubes(b *testing.B) {
	for _, k := range []int{5, 16, 32} {
		const rows = 30
		p := NewDFT(k)
		rng := rand.New(rand.NewPCG(1, 5))
		src := make([]float64, rows*k)
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		dst := make([]float64, rows*k)
		b.Run(fmt.Sprintf("forward/k=%d", k), func(b *testing.B) {
			for b.Loop() {
				p.forwardRows(dst, rows, src, rows, rows)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/tube")
		})
		b.Run(fmt.Sprintf("inverse/k=%d", k), func(b *testing.B) {
			for b.Loop() {
				p.inverseRows(src, rows, dst, rows, rows)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/tube")
		})
	}
}
