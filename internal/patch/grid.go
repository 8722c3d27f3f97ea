package patch

import (
	"context"
	"fmt"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/parallel"
)

// Grid lists the positions of all p×p×q patches of an H×W×B cube at spatial
// step s and spectral step 1 (see the package documentation for the
// positions, the index order and the stripes). A Grid is immutable and safe
// for concurrent use.
type Grid struct {
	height, width, bands int
	p, q, step           int

	// Number of row positions, column positions and band windows.
	rows, cols, windows int
	// Stripe height in image rows (a multiple of step, at least p).
	stripe int
	// How many row positions cover each image row, column positions each
	// column and band windows each band; the product is a voxel's count.
	coverRow, coverCol, coverBand []int
	// offsets[i] is the cube offset of element i of a patch (in the order
	// of a tensor's lateral slice) from the patch's top-left voxel: one
	// table lookup per voxel is cheaper than nested loops over rows of p.
	offsets []int
}

// NewGrid returns the grid of p×p×q patches of an h×w×b cube at spatial step
// step. It returns an error if a size is not positive, if step exceeds p
// (rows and columns between windows would not be covered), or if the cube is
// smaller than a patch.
func NewGrid(h, w, b, p, q, step int) (*Grid, error) {
	switch {
	case h < 1 || w < 1 || b < 1:
		return nil, fmt.Errorf("patch: image size %d×%d×%d is not positive", h, w, b)
	case p < 1:
		return nil, fmt.Errorf("patch: patch size p = %d must be at least 1", p)
	case q < 1:
		return nil, fmt.Errorf("patch: patch band count q = %d must be at least 1", q)
	case step < 1:
		return nil, fmt.Errorf("patch: step %d must be at least 1", step)
	case step > p:
		return nil, fmt.Errorf("patch: step %d is larger than the patch size %d: rows and columns between patches would not be covered", step, p)
	case h < p || w < p || b < q:
		return nil, fmt.Errorf("patch: image is %d×%d×%d but the patch is %d×%d×%d", h, w, b, p, p, q)
	}
	g := &Grid{
		height: h, width: w, bands: b,
		p: p, q: q, step: step,
		rows:    positions(h, p, step),
		cols:    positions(w, p, step),
		windows: b - q + 1,
		stripe:  StripeHeight(p, step),
	}
	g.coverRow = coverage(g.rows, h, p, func(k int) int { return g.rowAt(k) })
	g.coverCol = coverage(g.cols, w, p, func(k int) int { return g.colAt(k) })
	g.coverBand = coverage(g.windows, b, q, func(k int) int { return k })
	g.offsets = make([]int, 0, p*p*q)
	for t := range q {
		for dy := range p {
			for dx := range p {
				g.offsets = append(g.offsets, (t*h+dy)*w+dx)
			}
		}
	}
	return g, nil
}

// StripeHeight returns the height in image rows of the stripes that
// Stripes cuts for p×p patches at spatial step step: the smallest multiple
// of step that is at least p, so that patches of stripes two apart never
// share a row.
func StripeHeight(p, step int) int { return step * ((p + step - 1) / step) }

// positions returns how many windows of size p fit at step s in n, counting
// the forced last window n−p.
func positions(n, p, s int) int {
	k := (n-p)/s + 1
	if (n-p)%s != 0 {
		k++
	}
	return k
}

// coverage counts, for every coordinate 0..n−1, the windows of size p that
// cover it, where the k-th of count windows starts at start(k).
func coverage(count, n, p int, start func(int) int) []int {
	c := make([]int, n)
	for k := range count {
		s := start(k)
		for i := s; i < s+p; i++ {
			c[i]++
		}
	}
	return c
}

func (g *Grid) rowAt(k int) int { return min(k*g.step, g.height-g.p) }
func (g *Grid) colAt(k int) int { return min(k*g.step, g.width-g.p) }

// Len returns the number of patches.
func (g *Grid) Len() int { return g.rows * g.windows * g.cols }

// Pos returns the top-left voxel (row y, column x, first band b) of patch
// idx. It panics if idx is not in [0, Len()).
func (g *Grid) Pos(idx int) (y, x, b int) {
	if idx < 0 || idx >= g.Len() {
		panic(fmt.Sprintf("patch: patch index %d out of range [0, %d)", idx, g.Len()))
	}
	plane := g.windows * g.cols
	r := idx % plane
	return g.rowAt(idx / plane), g.colAt(r % g.cols), r / g.cols
}

// NewTensor returns a zero (p²)×n×q tensor for a batch of n patches. It
// panics if n < 1.
func (g *Grid) NewTensor(n int) *tproduct.Tensor { return tproduct.NewTensor(g.p*g.p, n, g.q) }

// Range is the half-open range [Start, End) of patch indices.
type Range struct{ Start, End int }

// Stripes returns the patch indices cut into row stripes, as two phases of
// non-empty index ranges in increasing order. Together the ranges cover
// [0, Len()) exactly once. Two stripes of the same phase never cover a common
// voxel, so their patches may be aggregated concurrently; processing phase 0
// before phase 1 and each stripe in index order gives an aggregate that does
// not depend on how stripes are shared among workers (see the package
// documentation).
func (g *Grid) Stripes() [2][]Range {
	var phases [2][]Range
	plane := g.windows * g.cols
	k := 0 // first row position of the current stripe
	for k < g.rows {
		stripe := g.rowAt(k) / g.stripe
		end := k + 1
		for end < g.rows && g.rowAt(end)/g.stripe == stripe {
			end++
		}
		phases[stripe%2] = append(phases[stripe%2], Range{k * plane, end * plane})
		k = end
	}
	return phases
}

// ForEachBatch calls fn(worker, start, end) for consecutive batches of at
// most batch patches that together cover every patch exactly once, from
// workers goroutines; worker is in [0, workers) and no two concurrent calls
// share it, so it can select per-worker buffers. Calls are ordered by
// Stripes: all of phase 0, then all of phase 1, each stripe walked in index
// order by one worker. fn may therefore Add its batch to an Aggregator, and
// the aggregate is bit-identical for every number of workers and every
// batch size.
//
// The first error returned by fn, or ctx.Err() once ctx is done, stops the
// handing out of batches; ForEachBatch waits for the calls in progress and
// returns that error. It panics if workers or batch is less than 1.
func (g *Grid) ForEachBatch(ctx context.Context, workers, batch int, fn func(worker, start, end int) error) error {
	if workers < 1 || batch < 1 {
		panic(fmt.Sprintf("patch: ForEachBatch needs workers ≥ 1 and batch ≥ 1, got %d workers and batch %d", workers, batch))
	}
	for _, stripes := range g.Stripes() {
		err := parallel.For(ctx, len(stripes), workers, func(worker, i int) error {
			r := stripes[i]
			// A stripe holds many batches: look at ctx before each.
			for start := r.Start; start < r.End; start += batch {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := fn(worker, start, min(start+batch, r.End)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
