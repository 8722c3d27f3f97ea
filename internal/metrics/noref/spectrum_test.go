package noref

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"tdsc/internal/msi"
)

// bruteWelch is Welch's estimate by its definition: segments of n samples
// at every multiple of n/2 that fits, each times the Hann window
// 0.5·(1 − cos(2πi/(n−1))), its discrete Fourier transform summed term by
// term, |X_k|² averaged over the segments, doubled for 0 < k < n/2, over
// Σ w_i²; and the segments' windowed values.
func bruteWelch(x []float64, n int) (p []float64, segments [][]float64) {
	for off := 0; off+n <= len(x); off += n / 2 {
		s := make([]float64, n)
		for i := range s {
			s[i] = x[off+i] * 0.5 * (1 - math.Cos(2*math.Pi*float64(i)/float64(n-1)))
		}
		segments = append(segments, s)
	}
	var norm float64
	for i := range n {
		w := 0.5 * (1 - math.Cos(2*math.Pi*float64(i)/float64(n-1)))
		norm += w * w
	}
	p = make([]float64, n/2+1)
	for _, s := range segments {
		for k := range p {
			var sum complex128
			for i, v := range s {
				sum += complex(v, 0) * cmplx.Exp(complex(0, -2*math.Pi*float64(k*i)/float64(n)))
			}
			v := real(sum)*real(sum) + imag(sum)*imag(sum)
			if k > 0 && k < n/2 {
				v *= 2
			}
			p[k] += v / float64(len(segments)) / norm
		}
	}
	return p, segments
}

// TestWelchMatchesDefinition: on random signals the spectrum, the
// flatness and the normalised autocorrelation are those computed from
// their definitions: the autocorrelation is the segments' circular
// autocorrelation of the windowed values, summed over segments, over the
// window's own, each relative to lag 0.
func TestWelchMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ length, n int }{{32, 16}, {100, 32}, {257, 128}, {128, 64}, {300, 128}} {
		x := make([]float64, tc.length)
		for i := range x {
			x[i] = rng.NormFloat64() + 3*math.Sin(float64(i)/3)
		}
		if got := segmentLength(tc.length); got != tc.n {
			t.Fatalf("segmentLength(%d) = %d, want %d", tc.length, got, tc.n)
		}
		want, segments := bruteWelch(x, tc.n)
		got := welch(x, tc.n)
		for k := range want {
			if math.Abs(got[k]-want[k]) > 1e-10*want[0]+1e-12 {
				t.Fatalf("length %d: power %d = %v, want %v", tc.length, k, got[k], want[k])
			}
		}
		var logSum, sum float64
		for _, v := range want[1:] {
			logSum += math.Log(v)
			sum += v
		}
		m := float64(len(want) - 1)
		if f, wf := spectralFlatness(got[1:]), math.Exp(logSum/m)/(sum/m); math.Abs(f-wf) > 1e-12 {
			t.Errorf("length %d: flatness %v, want %v", tc.length, f, wf)
		}
		circ := func(s []float64, tau int) float64 {
			v := 0.0
			for i := range s {
				v += s[i] * s[(i+tau)%len(s)]
			}
			return v
		}
		hann := make([]float64, tc.n)
		for i := range hann {
			hann[i] = 0.5 * (1 - math.Cos(2*math.Pi*float64(i)/float64(tc.n-1)))
		}
		acf := func(tau int) float64 {
			v := 0.0
			for _, s := range segments {
				v += circ(s, tau)
			}
			return v / circ(hann, tau)
		}
		r := normalisedAutocorrelation(got, tc.n, tc.n/4+1)
		for tau := range r {
			if want := acf(tau) / acf(0); math.Abs(r[tau]-want) > 1e-9 {
				t.Errorf("length %d: r(%d) = %v, want %v", tc.length, tau, r[tau], want)
			}
		}
	}
}

// removedCube returns the noisy and denoised cubes whose difference in band
// b is removed(b, y, x), the denoised cube a smooth ramp.
func removedCube(h, w, bands int, removed func(b, y, x int) float64) (noisy, denoised *msi.Cube) {
	noisy, denoised = msi.NewCube(h, w, bands), msi.NewCube(h, w, bands)
	for b := range bands {
		for y := range h {
			for x := range w {
				v := 60 + 0.3*float64(y) + 0.2*float64(x) + 2*float64(b)
				denoised.Set(y, x, b, v)
				noisy.Set(y, x, b, v+removed(b, y, x))
			}
		}
	}
	return noisy, denoised
}

// TestPeriodicStripesFound: removed stripes that repeat across the track
// with a known period — each detector of the array its own offset, drawn
// at random, under white noise — give that period in every band, and a
// flatness well below 1.
func TestPeriodicStripesFound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	periods := []int{3, 5, 8, 12, 16}
	const h, w = 64, 200
	offsets := make([][]float64, len(periods))
	for b, p := range periods {
		offsets[b] = make([]float64, p)
		for i := range offsets[b] {
			offsets[b][i] = 8 * (rng.Float64() - 0.5)
		}
	}
	noisy, denoised := removedCube(h, w, len(periods), func(b, y, x int) float64 {
		return offsets[b][x%periods[b]] + 3*rng.NormFloat64()
	})
	r, err := Assess(noisy, denoised, "mad")
	if err != nil {
		t.Fatal(err)
	}
	for b, p := range periods {
		got := r.Bands[b]
		if got.Period != float64(p) {
			t.Errorf("band %d: period %v, want %d", b, got.Period, p)
		}
		s := ColumnMeanSpectrum(residualOf(noisy, denoised, b), h, w)
		if s == nil || s.Period != float64(p) || len(s.Frequency) != len(s.Power) || s.Frequency[len(s.Frequency)-1] != 0.5 {
			t.Errorf("band %d: column-mean spectrum %+v, want one of period %d up to 0.5 cycles per column", b, s, p)
		}
	}
	if r.Min.Period != 3 || r.Max.Period != 16 || r.Mean.Period != 3 {
		t.Errorf("periods over bands: common %v, shortest %v, longest %v; want 3, 3, 16", r.Mean.Period, r.Min.Period, r.Max.Period)
	}
}

// residualOf returns band b of noisy − denoised.
func residualOf(noisy, denoised *msi.Cube, b int) []float64 {
	out := make([]float64, noisy.Height*noisy.Width)
	for i, v := range noisy.Band(b) {
		out[i] = v - denoised.Band(b)[i]
	}
	return out
}

// TestWhiteNoiseFlat: removed white noise has a flatness near 1 and no
// period, on cubes of several sizes and seeds.
func TestWhiteNoiseFlat(t *testing.T) {
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 5))
		for _, sz := range [][2]int{{64, 64}, {40, 128}, {128, 256}} {
			noisy, denoised := removedCube(sz[0], sz[1], 6, func(int, int, int) float64 { return 10 * rng.NormFloat64() })
			r, err := Assess(noisy, denoised, "mad")
			if err != nil {
				t.Fatal(err)
			}
			for b, got := range r.Bands {
				if !(got.Flatness > 0.9 && got.Flatness <= 1) {
					t.Errorf("seed %d, %d×%d band %d: flatness %.3f, want near 1", seed, sz[0], sz[1], b, got.Flatness)
				}
				if !math.IsNaN(got.Period) {
					t.Errorf("seed %d, %d×%d band %d: period %v, want none", seed, sz[0], sz[1], b, got.Period)
				}
			}
			if !math.IsNaN(r.Mean.Period) || !math.IsNaN(r.Min.Period) || !math.IsNaN(r.Max.Period) {
				t.Errorf("seed %d: periods over bands %v %v %v, want none", seed, r.Mean.Period, r.Min.Period, r.Max.Period)
			}
		}
	}
}

// TestRemovedImageNotFlat: a removed part that is image — smooth along the
// lines, here white noise averaged over 9 neighbouring columns and 3 rows —
// has most of its power at low frequencies, so a low flatness, and no
// period: its autocorrelation only falls.
func TestRemovedImageNotFlat(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const h, w, bands = 64, 128, 3
	white := make([]float64, bands*(h+2)*(w+8))
	for i := range white {
		white[i] = rng.NormFloat64()
	}
	noisy, denoised := removedCube(h, w, bands, func(b, y, x int) float64 {
		s := 0.0
		for dy := range 3 {
			for dx := range 9 {
				s += white[(b*(h+2)+y+dy)*(w+8)+x+dx]
			}
		}
		return 5 * s
	})
	r, err := Assess(noisy, denoised, "mad")
	if err != nil {
		t.Fatal(err)
	}
	for b, got := range r.Bands {
		if !(got.Flatness < 0.3) {
			t.Errorf("band %d: flatness %.3f, want low", b, got.Flatness)
		}
		if !math.IsNaN(got.Period) {
			t.Errorf("band %d: period %v, want none", b, got.Period)
		}
	}
}

// TestSpectraOfNarrowBands: bands narrower than two shortest segments have
// no spectrum: NaN flatness and period, and no column-mean spectrum.
func TestSpectraOfNarrowBands(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	noisy, denoised := removedCube(40, 31, 2, func(int, int, int) float64 { return rng.NormFloat64() })
	r, err := Assess(noisy, denoised, "mad")
	if err != nil {
		t.Fatal(err)
	}
	if b := r.Bands[0]; !math.IsNaN(b.Flatness) || !math.IsNaN(b.Period) {
		t.Errorf("31 columns: flatness %v, period %v; want NaN", b.Flatness, b.Period)
	}
	if s := ColumnMeanSpectrum(residualOf(noisy, denoised, 0), 40, 31); s != nil {
		t.Errorf("31 columns: spectrum %+v, want none", s)
	}
}
