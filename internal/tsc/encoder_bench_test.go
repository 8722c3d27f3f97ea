package tsc

import (
	"encoding/binary"
	"flag"
	"fmt"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/testenv"
)

// encBalloonsPatches reads the σ = 20 noisy 96×96×31 crop of the CAVE
// balloons scene (16-bit PNG bands, scaled to [0, 255]) and returns its
// 5×5×5 patches at a 28×28 grid of spatial positions (step 3) and all 27
// band windows, each with its mean removed: 21168 patches of 25×1×5.
func encBalloonsPatches(tb testing.TB) *tproduct.Tensor {
	dir := testenv.Path(tb, "reference", "balloons_crop", "noisy_sigma20")
	const size, bands, p, q, grid, step = 96, 31, 5, 5, 28, 3
	cube := make([]float64, bands*size*size)
	for band := range bands {
		name := filepath.Join(dir, fmt.Sprintf("balloons_ms_%02d.png", band+1))
		f, err := os.Open(name)
		if err != nil {
			tb.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		g, ok := img.(*image.Gray16)
		if !ok || g.Rect.Dx() != size || g.Rect.Dy() != size {
			tb.Fatalf("%s: want a %d×%d 16-bit grayscale PNG", name, size, size)
		}
		for y := range size {
			for x := range size {
				cube[(band*size+y)*size+x] = float64(g.Gray16At(x, y).Y) * 255 / 65535
			}
		}
	}
	windows := bands - q + 1
	pt := tproduct.NewTensor(p*p, grid*grid*windows, q)
	j := 0
	for b0 := range windows {
		for gy := range grid {
			for gx := range grid {
				col := pt.Lateral(j)
				var mean float64
				for t := range q {
					for dy := range p {
						for dx := range p {
							v := cube[((b0+t)*size+gy*step+dy)*size+gx*step+dx]
							col[t*p*p+dy*p+dx] = v
							mean += v
						}
					}
				}
				mean /= float64(len(col))
				for i := range col {
					col[i] -= mean
				}
				j++
			}
		}
	}
	return pt
}

// encPatchDictionary returns r distinct patches of x chosen at random
// (seeded), each scaled to unit Frobenius norm: the initial dictionary of
// learning.
func encPatchDictionary(x *tproduct.Tensor, r int, seed uint64) *tproduct.Tensor {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := tproduct.NewTensor(x.M, r, x.K)
	for q, j := range rng.Perm(x.N)[:r] {
		a := d.Lateral(q)
		copy(a, x.Lateral(j))
		var s float64
		for _, v := range a {
			s += v * v
		}
		for i := range a {
			a[i] /= math.Sqrt(s)
		}
	}
	return d
}

// fourierFlops is the flop count of one dense Fourier-domain iteration for
// one patch: 2r² for each real frequency slice, 8r² for each complex one.
func fourierFlops(r, k int) float64 {
	var f float64
	for l := range tproduct.Stored(k) {
		if tproduct.Weight(l, k) == 1 {
			f += 2 * float64(r*r)
		} else {
			f += 8 * float64(r*r)
		}
	}
	return f
}

// BenchmarkEncodePaper codes the 21168 patches of the balloons crop with a
// 25×30×5 dictionary (normalised patches), 50 FISTA iterations, Tol 0, at
// two β giving realistic sparsity, for each evaluation path and thread
// count. gflops is measured against the Fourier-domain flop count.
//
// Given a folder by -encode-export (after -args), it also writes there
// what an outside implementation needs to solve the same problem and check
// its answer (the numpy baseline of scripts/bench-encode.sh): the patches
// (patches.f64, N×K×M), the dictionary (dictionary.f64, R×K×M) and the
// codes of the default path after the 50 iterations (codes-beta<β>.f64,
// N×K×R, written by the threads=1 runs; the codes are the same for any
// thread count), all little-endian float64 in the Tensor layout, i.e. C
// order with the indices listed.
func BenchmarkEncodePaper(b *testing.B) {
	x := encBalloonsPatches(b)
	d := encPatchDictionary(x, 30, 1)
	if *encodeExport != "" {
		exportFloats(b, "patches.f64", x.Data)
		exportFloats(b, "dictionary.f64", d.Data)
	}
	const iters = 50
	for _, beta := range []float64{50, 100} {
		for _, p := range encPaths {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("beta=%g/%s/threads=%d", beta, p.name, threads), func(b *testing.B) {
					e := encMustEncoder(b, d, EncodeOptions{Beta: beta, MaxIter: iters}, p.path)
					codes := tproduct.NewTensor(30, x.N, 5)
					for b.Loop() {
						e.encodeAll(b.Context(), codes, x, false, threads)
					}
					var nnz int
					for _, v := range codes.Data {
						if v != 0 {
							nnz++
						}
					}
					sec := b.Elapsed().Seconds() / float64(b.N)
					b.ReportMetric(sec, "s/op")
					b.ReportMetric(100*float64(nnz)/float64(len(codes.Data)), "%nonzero")
					b.ReportMetric(fourierFlops(30, 5)*iters*float64(x.N)/sec/1e9, "GFLOP/s-eq")
					if *encodeExport != "" && p.path == pathAuto && threads == 1 {
						exportFloats(b, fmt.Sprintf("codes-beta%g.f64", beta), codes.Data)
					}
				})
			}
		}
	}
}

// encodeExport names the folder BenchmarkEncodePaper writes its problem
// and codes to (the flag -encode-export after -args); empty writes nothing.
var encodeExport = flag.String("encode-export", "", "folder for BenchmarkEncodePaper's raw float64 files")

// exportFloats writes data into the -encode-export folder as the file
// name, little-endian float64.
func exportFloats(b *testing.B, name string, data []float64) {
	buf := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(v))
	}
	if err := os.WriteFile(filepath.Join(*encodeExport, name), buf, 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEncodeNatural codes 2048 synthetic smooth patches of 4×4 pixels
// and 16 bands (the natural-image geometry, m = 16, k = 16) with 64 atoms,
// 50 iterations, Tol 0, on two threads.
func BenchmarkEncodeNatural(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 1))
	x := encSmoothPatches(rng, 4, 16, 2048, 20)
	d := encDictionary(rng, x, 64)
	const iters = 50
	for _, beta := range []float64{100, 400} {
		for _, p := range encPaths {
			b.Run(fmt.Sprintf("beta=%g/%s", beta, p.name), func(b *testing.B) {
				e := encMustEncoder(b, d, EncodeOptions{Beta: beta, MaxIter: iters}, p.path)
				codes := tproduct.NewTensor(64, x.N, 16)
				for b.Loop() {
					e.encodeAll(b.Context(), codes, x, false, 2)
				}
				var nnz int
				for _, v := range codes.Data {
					if v != 0 {
						nnz++
					}
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(sec, "s/op")
				b.ReportMetric(100*float64(nnz)/float64(len(codes.Data)), "%nonzero")
				b.ReportMetric(fourierFlops(64, 16)*iters*float64(x.N)/sec/1e9, "GFLOP/s-eq")
			})
		}
	}
}

// BenchmarkGemm measures the matrix product of the dense step at the paper's
// size: a batch of 218 split spectra times the 60×60 embedding of a complex
// slice.
func BenchmarkGemm(b *testing.B) {
	const n, w = 218, 60
	rng := rand.New(rand.NewPCG(9, 2))
	a, m, c := make([]float64, n*w), make([]float64, w*w), make([]float64, n*w)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	for i := range m {
		m[i] = rng.NormFloat64()
	}
	for b.Loop() {
		tproduct.GemmNT(n, w, w, a, w, m, w, c, w)
	}
	b.ReportMetric(2*n*w*w*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
