package patch

import (
	"fmt"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/msi"
)

// Extract copies patches start..start+n−1 of cube c into dst, with n =
// dst.N, and removes their means: means[j] receives the mean of patch
// start+j over its p²·q voxels, and lateral slice j of dst the patch minus
// that mean, in the layout of the package documentation. It allocates
// nothing.
//
// Extract panics if dst is not (p²)×n×q, if len(means) != n, if the range
// is not within [0, g.Len()) or if c is not the size of the grid.
func Extract(dst *tproduct.Tensor, means []float64, c *msi.Cube, g *Grid, start int) {
	g.checkBatch("Extract", dst, means, start)
	g.checkCube(c)
	for j := range dst.N {
		y, x, b := g.Pos(start + j)
		means[j] = g.extractOne(dst.Lateral(j), c, y, x, b)
	}
}

// ExtractIndices is Extract for the patches listed in idx, in that order
// (indices may repeat): lateral slice j of dst and means[j] come from patch
// idx[j]. It allocates nothing, and panics if dst is not (p²)×len(idx)×q, if
// len(means) != len(idx), if an index is out of range or if c is not the
// size of the grid.
func ExtractIndices(dst *tproduct.Tensor, means []float64, c *msi.Cube, g *Grid, idx []int) {
	g.checkTensor("ExtractIndices", dst, means)
	if dst.N != len(idx) {
		panic(fmt.Sprintf("patch: ExtractIndices: %d indices for a tensor of %d patches", len(idx), dst.N))
	}
	g.checkCube(c)
	for j, k := range idx {
		y, x, b := g.Pos(k)
		means[j] = g.extractOne(dst.Lateral(j), c, y, x, b)
	}
}

// ExtractAt copies the patch whose top-left voxel is (y, x, b) into dst
// (p²·q values, in the layout of a tensor's lateral slice), removes its
// mean and returns the mean, as Extract does for the patches of the grid.
// The position need not be one of the grid's: it serves to cut a patch of a
// larger cube from a block of its lines. It panics if c is not the size of
// the grid, if len(dst) != p²·q or if the patch does not lie in the cube.
func (g *Grid) ExtractAt(dst []float64, c *msi.Cube, y, x, b int) float64 {
	g.checkCube(c)
	if len(dst) != len(g.offsets) {
		panic(fmt.Sprintf("patch: ExtractAt: %d values for a patch of %d", len(dst), len(g.offsets)))
	}
	if y < 0 || x < 0 || b < 0 || y > g.height-g.p || x > g.width-g.p || b > g.bands-g.q {
		panic(fmt.Sprintf("patch: ExtractAt: a %d×%d×%d patch at (%d, %d, %d) is outside the %d×%d×%d cube",
			g.p, g.p, g.q, y, x, b, g.height, g.width, g.bands))
	}
	return g.extractOne(dst, c, y, x, b)
}

// extractOne copies the patch whose top-left voxel is (y, x, b) into dst
// (p²·q values, band by band, row-major within the window), subtracts its
// mean and returns the mean.
func (g *Grid) extractOne(dst []float64, c *msi.Cube, y, x, b int) float64 {
	data := c.Data[(b*g.height+y)*g.width+x:]
	dst = dst[:len(g.offsets)]
	for i, off := range g.offsets {
		dst[i] = data[off]
	}
	// Four running sums instead of one shorten the chain of dependent
	// additions, which bounds the speed of a single sum.
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		v := dst[i : i+4]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
	}
	for _, v := range dst[i:] {
		s0 += v
	}
	mean := ((s0 + s1) + (s2 + s3)) / float64(len(dst))
	for i := range dst {
		dst[i] -= mean
	}
	return mean
}

// checkTensor panics unless x is a (p²)×n×q tensor with n = len(means).
func (g *Grid) checkTensor(op string, x *tproduct.Tensor, means []float64) {
	m := g.p * g.p
	if x.M != m || x.K != g.q || len(x.Data) != x.M*x.N*x.K {
		panic(fmt.Sprintf("patch: %s: tensor is %d×%d×%d with %d values, want %d×n×%d for %d×%d×%d patches",
			op, x.M, x.N, x.K, len(x.Data), m, g.q, g.p, g.p, g.q))
	}
	if len(means) != x.N {
		panic(fmt.Sprintf("patch: %s: %d means for %d patches", op, len(means), x.N))
	}
}

// checkBatch is checkTensor plus a check that patches start..start+x.N−1
// exist.
func (g *Grid) checkBatch(op string, x *tproduct.Tensor, means []float64, start int) {
	g.checkTensor(op, x, means)
	if start < 0 || start+x.N > g.Len() {
		panic(fmt.Sprintf("patch: %s: patches [%d, %d) out of range [0, %d)", op, start, start+x.N, g.Len()))
	}
}

// checkCube panics unless c has the grid's size.
func (g *Grid) checkCube(c *msi.Cube) {
	if c.Height != g.height || c.Width != g.width || c.Bands != g.bands || len(c.Data) != g.height*g.width*g.bands {
		panic(fmt.Sprintf("patch: cube is %s with %d values but the grid is for %d×%d×%d", c.Size(), len(c.Data), g.height, g.width, g.bands))
	}
}
