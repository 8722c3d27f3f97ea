package ksvd

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/patch"
)

// DenoiseOptions are the settings of Reconstruct.
type DenoiseOptions struct {
	Patch    int // window side p in pixels
	Depth    int // window depth d in bands (1: grey patches)
	Step     int // spatial step between patch positions (1: every position)
	BandStep int // spectral step between patch positions

	Epsilon2 float64 // squared residual ‖Rᵢy − Dαᵢ‖² at which coding a patch stops
	MaxAtoms int     // most atoms per patch
	Lambda   float64 // weight λ of the noisy image in the average
	Threads  int     // worker goroutines (0: GOMAXPROCS); the output does not depend on it

	// Progress, if not nil, is called now and then with the number of rows
	// of patch positions done and their total, from one goroutine at a time.
	Progress func(done, total int)
}

// blockRows is the number of rows of patch positions coded between two
// merges into the image sums. It is fixed, not derived from the number of
// workers, and the merges go in row order, so the sums are bit-identical
// for any thread count.
const blockRows = 16

// positions returns the starts of the windows of length p on an axis of
// length n with step s: 0, s, 2s, … and always n − p, so that every index
// is covered (Step ≤ p).
func positions(n, p, s int) []int {
	var out []int
	for x := 0; x+p <= n; x += s {
		out = append(out, x)
	}
	if out[len(out)-1] != n-p {
		out = append(out, n-p)
	}
	return out
}

// coverage returns, for every index of an axis of length n, the number of
// windows of length p starting at starts that cover it.
func coverage(n, p int, starts []int) []float64 {
	c := make([]float64, n)
	for _, s := range starts {
		for i := s; i < s+p; i++ {
			c[i]++
		}
	}
	return c
}

// check reports options that Reconstruct cannot use on a cube of size
// h×w×b with a dictionary of atoms of length dim.
func (o *DenoiseOptions) check(h, w, b, dim int) error {
	switch {
	case o.Patch < 1 || o.Depth < 1:
		return fmt.Errorf("ksvd: patch %d×%d×%d", o.Patch, o.Patch, o.Depth)
	case o.Patch > h || o.Patch > w || o.Depth > b:
		return fmt.Errorf("ksvd: %d×%d×%d patches do not fit a %d×%d×%d cube", o.Patch, o.Patch, o.Depth, h, w, b)
	case o.Patch*o.Patch*o.Depth != dim:
		return fmt.Errorf("ksvd: %d×%d×%d patches for atoms of length %d", o.Patch, o.Patch, o.Depth, dim)
	case o.Step < 1 || o.Step > o.Patch || o.BandStep < 1 || o.BandStep > o.Depth:
		return fmt.Errorf("ksvd: steps %d and %d for %d×%d×%d patches leave pixels uncovered", o.Step, o.BandStep, o.Patch, o.Patch, o.Depth)
	case o.MaxAtoms < 1 || !(o.Lambda >= 0) || !(o.Epsilon2 >= 0):
		return fmt.Errorf("ksvd: MaxAtoms %d, Lambda %g, Epsilon2 %g", o.MaxAtoms, o.Lambda, o.Epsilon2)
	}
	return nil
}

// Reconstruct writes to dst the K-SVD estimate of the clean cube from
// noisy: every patch position of the grid (steps Step and BandStep, the
// last window of each axis always included) is coded over d with its mean
// removed (Batch-OMP to Epsilon2 or MaxAtoms atoms), and every voxel is
//
//	x̂ = (λ·y + Σᵢ RᵢᵀDαᵢ) / (λ + Σᵢ RᵢᵀRᵢ),
//
// the sum over the patches i that cover it, RᵢᵀDαᵢ including the patch's
// mean. The patches are streamed row by row of positions (one band window
// and one pixel row of window starts at a time), each worker with its own
// scratch, so memory is the cube, dst and a few rows of windows. dst must
// have noisy's size and must not be noisy. It stops with ctx.Err() when
// ctx is cancelled (dst then holds partial sums).
func Reconstruct(ctx context.Context, dst, noisy *msi.Cube, d *Dictionary, o DenoiseOptions) error {
	h, w, nb := noisy.Height, noisy.Width, noisy.Bands
	if !dst.SameSize(noisy) {
		return fmt.Errorf("ksvd: Reconstruct: destination %s, input %s", dst.Size(), noisy.Size())
	}
	if err := o.check(h, w, nb, d.Dim); err != nil {
		return err
	}
	p, depth, n, k := o.Patch, o.Depth, d.Dim, d.Size
	ys, xs, bs := positions(h, p, o.Step), positions(w, p, o.Step), positions(nb, depth, o.BandStep)
	rows := len(bs) * len(ys)
	gram := d.Gram(nil)
	maxAtoms := min(o.MaxAtoms, k)

	type scratch struct {
		coder   *Coder
		x, corr []float64 // the row's patches (len(xs)×n) and Dᵀx (len(xs)×k)
		means   []float64
		rec     []float64
		idx     []int
		coef    []float64
	}
	slabLen := depth * p * w
	slabs := make([][]float64, blockRows)
	for i := range slabs {
		slabs[i] = make([]float64, slabLen)
	}
	workers := parallel.Workers(o.Threads)
	ws := make([]*scratch, workers)
	codeRow := func(worker, r int, slab []float64) {
		s := ws[worker]
		if s == nil {
			s = &scratch{
				coder: NewCoder(gram, k, maxAtoms),
				x:     make([]float64, len(xs)*n), corr: make([]float64, len(xs)*k),
				means: make([]float64, len(xs)), rec: make([]float64, n),
				idx: make([]int, maxAtoms), coef: make([]float64, maxAtoms),
			}
			ws[worker] = s
		}
		b0, y0 := bs[r/len(ys)], ys[r%len(ys)]
		for i, x0 := range xs {
			v := s.x[i*n : (i+1)*n]
			for b := range depth {
				for y := range p {
					src := noisy.Data[((b0+b)*h+y0+y)*w+x0:]
					copy(v[(b*p+y)*p:(b*p+y+1)*p], src[:p])
				}
			}
			mean := floats.Sum(v) / float64(n)
			floats.AddConst(-mean, v)
			s.means[i] = mean
		}
		d.Correlate(s.corr, s.x, len(xs))
		for i, x0 := range xs {
			v := s.x[i*n : (i+1)*n]
			na, _ := s.coder.Code(s.idx, s.coef, s.corr[i*k:(i+1)*k], floats.Dot(v, v), o.Epsilon2)
			rec := s.rec
			for j := range rec {
				rec[j] = s.means[i]
			}
			for j := range na {
				floats.AddScaled(rec, s.coef[j], d.Atom(s.idx[j]))
			}
			for b := range depth {
				for y := range p {
					dstRow := slab[(b*p+y)*w+x0 : (b*p+y)*w+x0+p]
					floats.Add(dstRow, rec[(b*p+y)*p:(b*p+y+1)*p])
				}
			}
		}
	}

	sum := dst.Data
	clear(sum)
	for first := 0; first < rows; first += blockRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		last := min(first+blockRows, rows)
		err := parallel.For(ctx, last-first, o.Threads, func(worker, i int) error {
			codeRow(worker, first+i, slabs[i])
			return nil
		})
		if err != nil {
			return err
		}
		for r := first; r < last; r++ {
			slab := slabs[r-first]
			b0, y0 := bs[r/len(ys)], ys[r%len(ys)]
			for b := range depth {
				for y := range p {
					floats.Add(sum[((b0+b)*h+y0+y)*w:][:w], slab[(b*p+y)*w:(b*p+y+1)*w])
				}
			}
			clear(slab)
		}
		if o.Progress != nil {
			o.Progress(last, rows)
		}
	}
	cy, cx, cb := coverage(h, p, ys), coverage(w, p, xs), coverage(nb, depth, bs)
	for b := range nb {
		for y := range h {
			row := (b*h + y) * w
			for x := range w {
				sum[row+x] = (o.Lambda*noisy.Data[row+x] + sum[row+x]) / (o.Lambda + cb[b]*cy[y]*cx[x])
			}
		}
	}
	return nil
}

// sampleStream is the second PCG seed word of SamplePatches.
const sampleStream = 0x6b73_7664_5f73_6d70

// SamplePatches returns count patches of size p×p×depth drawn without
// replacement, uniformly among all positions of c with step 1 (all of them
// when count exceeds their number), by a PCG generator seeded with seed,
// each with its mean removed, as the rows of a count×(p·p·depth) matrix in
// increasing order of position (band window, then row, then column).
func SamplePatches(c *msi.Cube, p, depth, count int, seed uint64) []float64 {
	ny, nx, nbw := c.Height-p+1, c.Width-p+1, c.Bands-depth+1
	total := ny * nx * nbw
	count = min(count, total)
	picks := patch.Choose(total, count, rand.NewPCG(seed, sampleStream))
	n := p * p * depth
	out := make([]float64, count*n)
	for i, pos := range picks {
		b0, y0, x0 := pos/(ny*nx), pos/nx%ny, pos%nx
		v := out[i*n : (i+1)*n]
		for b := range depth {
			for y := range p {
				copy(v[(b*p+y)*p:(b*p+y+1)*p], c.Data[((b0+b)*c.Height+y0+y)*c.Width+x0:][:p])
			}
		}
		floats.AddConst(-floats.Sum(v)/float64(n), v)
	}
	return out
}
