package gray

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/tsc"
)

// randomPatch returns a d×d row-major patch of standard normal values.
func randomPatch(rng *rand.Rand, d int) []float64 {
	p := make([]float64, d*d)
	for i := range p {
		p[i] = rng.NormFloat64()
	}
	return p
}

// shiftColumns returns the d×d patch p shifted circularly by s columns to
// the right: out(y, x) = p(y, (x−s) mod d).
func shiftColumns(p []float64, d, s int) []float64 {
	out := make([]float64, d*d)
	for y := range d {
		for x := range d {
			out[y*d+x] = p[y*d+((x-s)%d+d)%d]
		}
	}
	return out
}

func TestLayoutPackUnpack(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{1, 2, 5, 8} {
		p := randomPatch(rng, d)
		for _, model := range []Model{TwoD, Vector} {
			l := Layout{Model: model, D: d}
			m, k := l.Dims()
			x := tproduct.NewTensor(m, 3, k)
			l.Pack(x.Lateral(1), p)
			for y := range d {
				for c := range d {
					var got float64
					if model == TwoD {
						got = x.At(y, 1, c) // row on mode 1, column on mode 3
					} else {
						got = x.At(y*d+c, 1, 0)
					}
					if got != p[y*d+c] {
						t.Fatalf("%v d=%d: pixel (row %d, column %d) packed as %v, want %v", model, d, y, c, got, p[y*d+c])
					}
				}
			}
			if back := l.Unpack(x.Lateral(1)); !slices.Equal(back, p) {
				t.Fatalf("%v d=%d: Unpack(Pack(p)) ≠ p", model, d)
			}
		}
	}
}

// TestTwoDProductShiftsColumns checks the meaning of the 2DSC layout: the
// t-product D*B of atoms A_q with coefficient tubes b_q is the image
// Σ_q Σ_s b_q(s)·A_q shifted circularly by s columns.
func TestTwoDProductShiftsColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range []int{2, 5, 6} {
		const r = 3
		l := Layout{Model: TwoD, D: d}
		atoms := make([][]float64, r)
		dict := tproduct.NewTensor(d, r, d)
		codes := tproduct.NewTensor(r, 1, d)
		want := make([]float64, d*d)
		for q := range r {
			atoms[q] = randomPatch(rng, d)
			l.Pack(dict.Lateral(q), atoms[q])
			for s := range d {
				b := rng.NormFloat64()
				codes.Set(q, 0, s, b)
				for i, v := range shiftColumns(atoms[q], d, s) {
					want[i] += b * v
				}
			}
		}
		x := tproduct.NewTensor(d, 1, d)
		tproduct.Product(x, dict, codes)
		got := l.Unpack(x.Lateral(0))
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("d=%d: pixel %d of D*B is %v, the sum of shifted atoms %v", d, i, got[i], want[i])
			}
		}
	}
}

// TestVectorLayoutIsSparseCoding checks that with the Vector layout the 2DSC
// objective is the one of ordinary sparse coding of the patches as
// vectors, ½‖p − Σ_q b_q a_q‖² + β Σ|b_q|, computed here on the images.
func TestVectorLayoutIsSparseCoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const d, r, n, beta = 4, 5, 6, 0.3
	l := Layout{Model: Vector, D: d}
	dict := tproduct.NewTensor(d*d, r, 1)
	atoms := make([][]float64, r)
	for q := range r {
		atoms[q] = randomPatch(rng, d)
		l.Pack(dict.Lateral(q), atoms[q])
	}
	x := tproduct.NewTensor(d*d, n, 1)
	codes := tproduct.NewTensor(r, n, 1)
	var want float64
	for j := range n {
		p := randomPatch(rng, d)
		l.Pack(x.Lateral(j), p)
		res := slices.Clone(p)
		for q := range r {
			b := rng.NormFloat64()
			codes.Set(q, j, 0, b)
			want += beta * math.Abs(b)
			for i, a := range atoms[q] {
				res[i] -= b * a
			}
		}
		for _, v := range res {
			want += v * v / 2
		}
	}
	rec := tproduct.NewTensor(d*d, n, 1)
	tproduct.Product(rec, dict, codes)
	var got float64
	for i, v := range x.Data {
		got += (v - rec.Data[i]) * (v - rec.Data[i]) / 2
	}
	for _, b := range codes.Data {
		got += beta * math.Abs(b)
	}
	if math.Abs(got-want) > 1e-12*want {
		t.Errorf("objective %v, sparse coding of the vectors %v", got, want)
	}
}

// unitAtom returns a zero-mean d×d patch of unit norm whose circular column
// shifts are far from each other: its normalised circular autocorrelation
// along the columns stays below 0.7 at every non-zero shift.
func unitAtom(t *testing.T, rng *rand.Rand, d int) []float64 {
	for range 100 {
		a := randomPatch(rng, d)
		var mean, n2 float64
		for _, v := range a {
			mean += v / float64(len(a))
		}
		for i := range a {
			a[i] -= mean
			n2 += a[i] * a[i]
		}
		for i := range a {
			a[i] /= math.Sqrt(n2)
		}
		if maxShiftCorrelation(a, a, d, false) < 0.7 {
			return a
		}
	}
	t.Fatal("no random atom with a low autocorrelation")
	return nil
}

// maxShiftCorrelation returns the largest |⟨a, shift_s(b)⟩| / (‖a‖‖b‖) over
// the circular column shifts s (s = 0 included only when withZero).
func maxShiftCorrelation(a, b []float64, d int, withZero bool) float64 {
	var na, nb float64
	for i := range a {
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	best := 0.0
	for s := range d {
		if s == 0 && !withZero {
			continue
		}
		var dot float64
		for i, v := range shiftColumns(b, d, s) {
			dot += a[i] * v
		}
		best = max(best, math.Abs(dot)/math.Sqrt(na*nb))
	}
	return best
}

// TestShiftedPatchesCodedByOneAtom is Theorem 1's shift invariance: a patch
// that is an atom shifted circularly by s columns and scaled by a > β is
// coded by 2DSC with that one atom and the single coefficient B(0,j,s) =
// a − β (the lasso solution when the other shifts correlate less than 1
// with it), so the residual is β times the shifted atom. Ordinary sparse
// coding with the same single atom cannot represent the shifts.
func TestShiftedPatchesCodedByOneAtom(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const d, beta = 12, 0.05
	atom := unitAtom(t, rng, d)
	amp := make([]float64, d)
	patches := make([][]float64, d)
	for s := range d {
		amp[s] = 0.5 + rng.Float64()
		patches[s] = shiftColumns(atom, d, s)
		for i := range patches[s] {
			patches[s][i] *= amp[s]
		}
	}

	l := Layout{Model: TwoD, D: d}
	dict := tproduct.NewTensor(d, 1, d)
	l.Pack(dict.Lateral(0), atom)
	x := tproduct.NewTensor(d, d, d)
	for s, p := range patches {
		l.Pack(x.Lateral(s), p)
	}
	enc, err := tsc.NewEncoder(dict, tsc.EncodeOptions{Beta: beta, MaxIter: 3000})
	if err != nil {
		t.Fatal(err)
	}
	codes := tproduct.NewTensor(1, d, d)
	enc.Encode(enc.NewWorkspace(d), codes, x, false)
	rec := tproduct.NewTensor(d, d, d)
	tproduct.Product(rec, dict, codes)
	for s := range d {
		for u := range d {
			want := 0.0
			if u == s {
				want = amp[s] - beta
			}
			if got := codes.At(0, s, u); math.Abs(got-want) > 1e-9 {
				t.Errorf("patch shifted by %d: coefficient at shift %d is %v, want %v", s, u, got, want)
			}
		}
		var res2, x2 float64
		for i, v := range x.Lateral(s) {
			res2 += (v - rec.Lateral(s)[i]) * (v - rec.Lateral(s)[i])
			x2 += v * v
		}
		if rel, want := math.Sqrt(res2/x2), beta/amp[s]; math.Abs(rel-want) > 1e-8 {
			t.Errorf("patch shifted by %d: relative residual %v, want β/a = %v", s, rel, want)
		}
	}

	// Ordinary sparse coding with the same atom: only the unshifted patch
	// is represented; the others keep most of their energy in the residual.
	v := Layout{Model: Vector, D: d}
	vdict := tproduct.NewTensor(d*d, 1, 1)
	v.Pack(vdict.Lateral(0), atom)
	for s := 1; s < d; s++ {
		var dot float64
		for i, a := range atom {
			dot += a * patches[s][i]
		}
		// The best single-atom fit leaves 1 − cos² of the energy.
		if cos := math.Abs(dot) / amp[s]; 1-cos*cos < 0.5 {
			t.Errorf("shift %d: sparse coding fits the shifted atom with cos %v", s, cos)
		}
	}
}

// TestLearnShiftedPatches learns one 2DSC atom from noisy patches that are
// random circular column shifts of one atom with random amplitudes: the
// learned atom is a shift of the true one (up to sign), every patch is
// reconstructed to about the noise level, and its code is one tube with
// one non-zero per shifted copy. The initial atom is one training patch
// (with this seed one that holds two shifts, correlation 0.80 with the
// truth); learning must find the atom itself.
func TestLearnShiftedPatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	const d, n, noise, beta = 10, 300, 0.02, 0.08
	atom := unitAtom(t, rng, d)
	l := Layout{Model: TwoD, D: d}
	x := tproduct.NewTensor(d, n, d)
	clean := tproduct.NewTensor(d, n, d)
	shifts := 0
	for j := range n {
		// One shift, or two distinct ones for a third of the patches.
		p := make([]float64, d*d)
		s0 := rng.IntN(d)
		for s := range 1 + min(1, rng.IntN(3)/2) {
			a := (1 + rng.Float64()) * float64(1-2*rng.IntN(2))
			for i, v := range shiftColumns(atom, d, (s0+s*(1+rng.IntN(d-1)))%d) {
				p[i] += a * v
			}
			shifts++
		}
		l.Pack(clean.Lateral(j), p)
		for i := range p {
			p[i] += noise * rng.NormFloat64()
		}
		l.Pack(x.Lateral(j), p)
	}
	res, err := tsc.Learn(t.Context(), x, tsc.LearnOptions{Atoms: 1, Beta: beta, Iters: 20, InnerIters: 200, Seed: 5, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	learned := l.Unpack(res.Dict.Lateral(0))
	if c := maxShiftCorrelation(learned, atom, d, true); c < 0.999 {
		t.Errorf("the learned atom matches a shift of the true one with correlation %v only", c)
	}

	rec := tproduct.NewTensor(d, n, d)
	tproduct.Product(rec, res.Dict, res.Codes)
	var nnz int
	for j := range n {
		var res2, c2 float64
		for i, v := range clean.Lateral(j) {
			res2 += (v - rec.Lateral(j)[i]) * (v - rec.Lateral(j)[i])
			c2 += v * v
		}
		if rel := math.Sqrt(res2 / c2); rel > 0.15 {
			t.Errorf("patch %d reconstructed with relative error %v against the clean patch", j, rel)
		}
		for _, b := range res.Codes.Lateral(j) {
			if math.Abs(b) > 1e-3 {
				nnz++
			}
		}
	}
	if nnz > shifts+shifts/10 {
		t.Errorf("%d coefficients above 1e−3 for %d shifted atoms in the patches", nnz, shifts)
	}
}

// grayImage returns an h×w 8-bit gray image of random pixels and their
// values on [0, 1].
func grayImage(rng *rand.Rand, h, w int) (*image.Gray, []float64) {
	img := image.NewGray(image.Rect(0, 0, w, h))
	v := make([]float64, w*h)
	for i := range v {
		g := uint8(rng.IntN(256))
		img.SetGray(i%w, i/w, color.Gray{Y: g})
		v[i] = float64(g) / 255
	}
	return img, v
}

func TestSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	dir := t.TempDir()
	const d = 4
	sizes := [][2]int{{9, 7}, {4, 4}, {12, 10}} // height, width
	var files []string
	var pix [][]float64
	for f, s := range sizes {
		img, v := grayImage(rng, s[0], s[1])
		files = append(files, writePNG(t, dir, string(rune('a'+f))+".png", img))
		pix = append(pix, v)
	}
	windows := 0
	for _, s := range sizes {
		windows += (s[0] - d + 1) * (s[1] - d + 1)
	}
	for _, model := range []Model{TwoD, Vector} {
		l := Layout{Model: model, D: d}
		x, err := Sample(files, l, SampleOptions{Samples: windows, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		// Every window exactly once, in file then row-major order, with
		// its mean removed.
		j := 0
		for f, s := range sizes {
			for y0 := 0; y0+d <= s[0]; y0++ {
				for x0 := 0; x0+d <= s[1]; x0++ {
					want := make([]float64, d*d)
					var mean float64
					for y := range d {
						for c := range d {
							want[y*d+c] = pix[f][(y0+y)*s[1]+x0+c]
							mean += want[y*d+c] / (d * d)
						}
					}
					got := l.Unpack(x.Lateral(j))
					for i := range want {
						if math.Abs(got[i]-(want[i]-mean)) > 1e-12 {
							t.Fatalf("%v: patch %d (file %d, y=%d, x=%d) pixel %d is %v, want %v", model, j, f, y0, x0, i, got[i], want[i]-mean)
						}
					}
					j++
				}
			}
		}
	}

	// A sample is reproducible, depends on the seed and has no repeats.
	l := Layout{Model: TwoD, D: d}
	a, err := Sample(files, l, SampleOptions{Samples: 20, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Sample(files, l, SampleOptions{Samples: 20, Seed: 2})
	c, _ := Sample(files, l, SampleOptions{Samples: 20, Seed: 3})
	if !slices.Equal(a.Data, b.Data) || slices.Equal(a.Data, c.Data) {
		t.Error("the sample is not a function of the seed")
	}
	for j := 1; j < a.N; j++ {
		if slices.Equal(a.Lateral(j), a.Lateral(j-1)) {
			t.Errorf("patches %d and %d are equal", j-1, j)
		}
	}

	for _, c := range []struct {
		files []string
		d, n  int
		want  string
	}{
		{files, 5, 1, files[1] + ": the image is 4×4 pixels (width×height), smaller than the 5×5 patch"},
		{files, d, windows + 1, "fewer than the"},
		{[]string{dir + "/missing.png"}, d, 1, "missing.png"},
	} {
		if _, err := Sample(c.files, Layout{Model: Vector, D: c.d}, SampleOptions{Samples: c.n}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Sample(d=%d, n=%d): err = %v, want %q", c.d, c.n, err, c.want)
		}
	}
}
