package gray

import (
	"errors"
	"image"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"
)

// dft2 is the direct 2-D DFT of the h×w row-major array x, by the double
// sum over all pixels for every coefficient: forward
// X(u,v) = Σ x(y,c)·e^{−2πi(uy/h + vc/w)}, or with inverse set the sum with
// e^{+2πi…} divided by h·w.
func dft2(x []complex128, h, w int, inverse bool) []complex128 {
	sign, scale := -1.0, 1.0
	if inverse {
		sign, scale = 1, 1/float64(h*w)
	}
	out := make([]complex128, h*w)
	for u := range h {
		for v := range w {
			var s complex128
			for y := range h {
				for c := range w {
					phase := sign * 2 * math.Pi * (float64(u*y)/float64(h) + float64(v*c)/float64(w))
					s += x[y*w+c] * cmplx.Exp(complex(0, phase))
				}
			}
			out[u*w+v] = s * complex(scale, 0)
		}
	}
	return out
}

// radius returns the spatial frequency, in cycles per pixel, of DFT
// coefficient (u, v) of an h×w image: the distance of (u/h, v/w) to the
// nearest alias of zero frequency.
func radius(u, v, h, w int) float64 {
	fy := float64(min(u, h-u)) / float64(h)
	fx := float64(min(v, w-v)) / float64(w)
	return math.Sqrt(fy*fy + fx*fx)
}

// slowWhiten whitens by the definition of Whiten, with the direct DFT.
func slowWhiten(pix []float64, h, w int) []float64 {
	x := make([]complex128, len(pix))
	for i, v := range pix {
		x[i] = complex(v, 0)
	}
	spec := dft2(x, h, w, false)
	for u := range h {
		for v := range w {
			f := radius(u, v, h, w)
			spec[u*w+v] *= complex(f*math.Exp(-math.Pow(f/0.4, 4)), 0)
		}
	}
	back := dft2(spec, h, w, true)
	out := make([]float64, len(pix))
	var mean, variance float64
	for i, v := range back {
		out[i] = real(v)
		mean += out[i] / float64(len(out))
	}
	for i := range out {
		out[i] -= mean
		variance += out[i] * out[i] / float64(len(out))
	}
	for i := range out {
		out[i] /= math.Sqrt(variance)
	}
	return out
}

func TestWhitenMatchesDirectDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, s := range [][2]int{{1, 6}, {5, 5}, {6, 8}, {7, 9}, {8, 3}, {12, 12}} {
		h, w := s[0], s[1]
		img := &Image{Height: h, Width: w, Pix: make([]float64, h*w)}
		for i := range img.Pix {
			img.Pix[i] = rng.Float64()
		}
		got, err := Whiten(img)
		if err != nil {
			t.Fatalf("%d×%d: %v", h, w, err)
		}
		if got.Height != h || got.Width != w {
			t.Fatalf("%d×%d: whitened image is %d×%d", h, w, got.Height, got.Width)
		}
		want := slowWhiten(img.Pix, h, w)
		for i := range want {
			if math.Abs(got.Pix[i]-want[i]) > 1e-10 {
				t.Fatalf("%d×%d: pixel %d is %v, the direct DFT gives %v", h, w, i, got.Pix[i], want[i])
			}
		}
	}
}

// TestWhitenFlattensOneOverF whitens a synthetic image whose amplitude
// spectrum is exactly 1/f (random phases): its power spectrum must become
// flat up to the roll-off exp(−2(f/f0)⁴), and fall well below that
// near the Nyquist frequency.
func TestWhitenFlattensOneOverF(t *testing.T) {
	const n = 40
	rng := rand.New(rand.NewPCG(23, 24))
	phase := make([]float64, n*n)
	for i := range phase {
		phase[i] = 2 * math.Pi * rng.Float64()
	}
	spec := make([]complex128, n*n)
	for u := range n {
		for v := range n {
			f := radius(u, v, n, n)
			if f == 0 {
				continue
			}
			// An odd phase, φ(−u,−v) = −φ(u,v), makes the image real.
			p := (phase[u*n+v] - phase[((n-u)%n)*n+(n-v)%n]) / 2
			spec[u*n+v] = cmplx.Rect(1/f, p)
		}
	}
	x := dft2(spec, n, n, true)
	img := &Image{Height: n, Width: n, Pix: make([]float64, n*n)}
	for i, v := range x {
		if math.Abs(imag(v)) > 1e-9*cmplx.Abs(v)+1e-12 {
			t.Fatalf("the synthetic image is not real: pixel %d is %v", i, v)
		}
		img.Pix[i] = real(v)
	}
	got, err := Whiten(img)
	if err != nil {
		t.Fatal(err)
	}

	// Mean power in rings of width 0.025 cycles/pixel.
	const ring = 0.025
	power := func(pix []float64) []float64 {
		c := make([]complex128, len(pix))
		for i, v := range pix {
			c[i] = complex(v, 0)
		}
		s := dft2(c, n, n, false)
		sum := make([]float64, int(math.Sqrt(0.5)/ring)+1)
		count := make([]float64, len(sum))
		for u := range n {
			for v := range n {
				b := int(radius(u, v, n, n) / ring)
				a := cmplx.Abs(s[u*n+v])
				sum[b] += a * a
				count[b]++
			}
		}
		for b := range sum {
			sum[b] /= count[b]
		}
		return sum
	}
	spread := func(p []float64, from, to int) float64 {
		lo, hi := math.Inf(1), 0.0
		for _, v := range p[from:to] {
			lo, hi = min(lo, v), max(hi, v)
		}
		return hi / lo
	}
	// Rings 1..7 span f = 0.025..0.2: the 1/f² input power falls by
	// a factor of about 60 there, the whitened power by at most
	// exp(2(0.2/0.4)⁴) ≈ 1.13.
	in, out := power(img.Pix), power(got.Pix)
	if s := spread(in, 1, 8); s < 30 {
		t.Fatalf("the test image is not 1/f: its power varies only %.3g× over f = 0.025..0.2", s)
	}
	if s := spread(out, 1, 8); s > 1.2 {
		t.Errorf("whitened power varies %.3g× over f = 0.025..0.2, want nearly flat (≤ 1.2×)", s)
	}
	// Ring 18 (f = 0.45..0.475) is past f0: power ≈ exp(−2(0.46/0.4)⁴) ≈ 0.03
	// of the flat level.
	if r := out[18] / out[2]; r > 0.1 {
		t.Errorf("whitened power near Nyquist is %.3g of the flat level, want the roll-off below 0.1", r)
	}
}

func TestWhitenScaleAndFlat(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const h, w = 16, 20
	img := &Image{Height: h, Width: w, Pix: make([]float64, h*w)}
	moved := &Image{Height: h, Width: w, Pix: make([]float64, h*w)}
	for i := range img.Pix {
		img.Pix[i] = rng.Float64()
		moved.Pix[i] = 3.5*img.Pix[i] + 100
	}
	a, err := Whiten(img)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Whiten(moved)
	if err != nil {
		t.Fatal(err)
	}
	var mean, variance float64
	for i, v := range a.Pix {
		mean += v / (h * w)
		variance += v * v / (h * w)
		if math.Abs(v-b.Pix[i]) > 1e-9 {
			t.Fatalf("pixel %d: %v whitened, %v after scaling and offsetting the input", i, v, b.Pix[i])
		}
	}
	if math.Abs(mean) > 1e-12 || math.Abs(variance-1) > 1e-12 {
		t.Errorf("whitened mean %v and variance %v, want 0 and 1", mean, variance)
	}
	for i, v := range moved.Pix {
		if v != 3.5*img.Pix[i]+100 {
			t.Fatalf("Whiten changed pixel %d of its input", i)
		}
	}

	for _, level := range []float64{0, 0.7, 1} {
		flat := &Image{Height: 8, Width: 8, Pix: make([]float64, 64)}
		for i := range flat.Pix {
			flat.Pix[i] = level
		}
		if _, err := Whiten(flat); !errors.Is(err, ErrFlat) {
			t.Errorf("constant image %v: err = %v, want ErrFlat", level, err)
		}
	}
}

func TestSampleWhitened(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	dir := t.TempDir()
	const d = 3
	gimg, _ := grayImage(rng, 10, 9)
	path := writePNG(t, dir, "a.png", gimg)
	windows := (10 - d + 1) * (9 - d + 1)
	raw, err := ReadPNG(path, false)
	if err != nil {
		t.Fatal(err)
	}
	white, err := Whiten(raw)
	if err != nil {
		t.Fatal(err)
	}
	l := Layout{Model: Vector, D: d}
	x, err := Sample([]string{path}, l, SampleOptions{Samples: windows, Seed: 1, Whiten: true})
	if err != nil {
		t.Fatal(err)
	}
	j := 0
	for y0 := 0; y0+d <= 10; y0++ {
		for x0 := 0; x0+d <= 9; x0++ {
			want := make([]float64, d*d)
			var mean float64
			for y := range d {
				for c := range d {
					want[y*d+c] = white.Pix[(y0+y)*9+x0+c]
					mean += want[y*d+c] / (d * d)
				}
			}
			for i, g := range x.Lateral(j) {
				if math.Abs(g-(want[i]-mean)) > 1e-12 {
					t.Fatalf("patch %d (y=%d, x=%d) pixel %d is %v, want %v from the whitened image", j, y0, x0, i, g, want[i]-mean)
				}
			}
			j++
		}
	}

	flat := image.NewGray(image.Rect(0, 0, 6, 6))
	for i := range flat.Pix {
		flat.Pix[i] = 9
	}
	fpath := writePNG(t, dir, "flat.png", flat)
	_, err = Sample([]string{path, fpath}, l, SampleOptions{Samples: windows + 16, Seed: 1, Whiten: true})
	if !errors.Is(err, ErrFlat) || !strings.Contains(err.Error(), "flat.png") {
		t.Errorf("a constant image: err = %v, want ErrFlat naming flat.png", err)
	}
}
