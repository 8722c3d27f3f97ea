package patch

import (
	"math"
	"math/rand/v2"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/msi"
	"tdsc/internal/testenv/cubetest"
)

// checkPatch compares lateral slice j of x plus mean with the p×p×q block of
// c whose top-left voxel is pos, indexing the cube directly, and checks that
// mean is the block's mean.
func checkPatch(t *testing.T, sh shape, c *msi.Cube, x *tproduct.Tensor, j int, mean float64, pos [3]int) {
	t.Helper()
	sum := 0.0
	for tb := range sh.q {
		for i := range sh.p * sh.p {
			want := c.At(pos[0]+i/sh.p, pos[1]+i%sh.p, pos[2]+tb)
			sum += want
			if got := x.At(i, j, tb) + mean; math.Abs(got-want) > 1e-12 {
				t.Fatalf("%v: patch at %v, pixel %d band %d: %v + mean %v = %v, cube has %v", sh, pos, i, tb, x.At(i, j, tb), mean, got, want)
			}
		}
	}
	if want := sum / float64(sh.p*sh.p*sh.q); math.Abs(mean-want) > 1e-12 {
		t.Fatalf("%v: patch at %v: mean %v, want %v", sh, pos, mean, want)
	}
}

func TestExtract(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, sh := range shapes {
		g := sh.grid(t)
		c := cubetest.Uniform(rng, sh.h, sh.w, sh.b, 0, 255)
		pos := oraclePositions(sh)
		for range 5 {
			start := rng.IntN(g.Len())
			n := 1 + rng.IntN(g.Len()-start)
			x := g.NewTensor(n)
			means := make([]float64, n)
			Extract(x, means, c, g, start)
			for j := range n {
				checkPatch(t, sh, c, x, j, means[j], pos[start+j])
				dc := 0.0
				for _, v := range x.Lateral(j) {
					dc += v
				}
				if math.Abs(dc) > 1e-9 {
					t.Fatalf("%v: patch %d still sums to %v after mean removal", sh, start+j, dc)
				}
			}
		}
	}
}

func TestExtractIndices(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, sh := range shapes {
		g := sh.grid(t)
		c := cubetest.Uniform(rng, sh.h, sh.w, sh.b, 0, 255)
		pos := oraclePositions(sh)
		idx := make([]int, 1+rng.IntN(40))
		for j := range idx {
			idx[j] = rng.IntN(g.Len())
		}
		idx = append(idx, idx[0]) // a repeated index
		x := g.NewTensor(len(idx))
		means := make([]float64, len(idx))
		ExtractIndices(x, means, c, g, idx)
		for j, k := range idx {
			checkPatch(t, sh, c, x, j, means[j], pos[k])
		}
	}
}

// ExtractAt cuts the block at any position in the cube, on the grid or
// not (every position is tried, against direct indexing).
func TestExtractAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	for _, sh := range shapes {
		g := sh.grid(t)
		c := cubetest.Uniform(rng, sh.h, sh.w, sh.b, 0, 255)
		x := g.NewTensor(1)
		for y := 0; y+sh.p <= sh.h; y++ {
			for xx := 0; xx+sh.p <= sh.w; xx++ {
				for b := 0; b+sh.q <= sh.b; b++ {
					mean := g.ExtractAt(x.Lateral(0), c, y, xx, b)
					checkPatch(t, sh, c, x, 0, mean, [3]int{y, xx, b})
				}
			}
		}
	}
	sh := shape{9, 8, 5, 3, 2, 1}
	g := sh.grid(t)
	c := msi.NewCube(sh.h, sh.w, sh.b)
	dst := make([]float64, 18)
	mustPanic(t, "ExtractAt below the last line", func() { g.ExtractAt(dst, c, 7, 0, 0) })
	mustPanic(t, "ExtractAt past the last band window", func() { g.ExtractAt(dst, c, 0, 0, 4) })
	mustPanic(t, "ExtractAt at a negative column", func() { g.ExtractAt(dst, c, 0, -1, 0) })
	mustPanic(t, "ExtractAt into a short slice", func() { g.ExtractAt(dst[:17], c, 0, 0, 0) })
	mustPanic(t, "ExtractAt from a cube of another size", func() { g.ExtractAt(dst, msi.NewCube(9, 8, 4), 0, 0, 0) })
}

func TestExtractPanics(t *testing.T) {
	sh := shape{9, 8, 5, 3, 2, 1}
	g := sh.grid(t)
	c := msi.NewCube(sh.h, sh.w, sh.b)
	x := g.NewTensor(4)
	means := make([]float64, 4)
	mustPanic(t, "Extract into a tensor of the wrong height", func() { Extract(tproduct.NewTensor(8, 4, 2), means, c, g, 0) })
	mustPanic(t, "Extract into a tensor of the wrong depth", func() { Extract(tproduct.NewTensor(9, 4, 3), means, c, g, 0) })
	mustPanic(t, "Extract with too few means", func() { Extract(x, means[:3], c, g, 0) })
	mustPanic(t, "Extract past the last patch", func() { Extract(x, means, c, g, g.Len()-3) })
	mustPanic(t, "Extract before the first patch", func() { Extract(x, means, c, g, -1) })
	mustPanic(t, "Extract from a cube of another size", func() { Extract(x, means, msi.NewCube(sh.h, sh.w, sh.b+1), g, 0) })
	mustPanic(t, "ExtractIndices with an index out of range", func() { ExtractIndices(x, means, c, g, []int{0, 1, 2, g.Len()}) })
	mustPanic(t, "ExtractIndices with too few indices", func() { ExtractIndices(x, means, c, g, []int{0, 1, 2}) })
}
