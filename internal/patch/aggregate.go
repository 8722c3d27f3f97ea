package patch

import (
	"fmt"
	"math"
	"sync/atomic"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/msi"
)

// Aggregator averages reconstructed patches back into a cube: it keeps, for
// every voxel, the sum of the (weighted) values of all patches added so far
// that cover it, and divides by the number of covering patches (or by the
// sum of their weights) in Result.
//
// Add and AddWeighted may run concurrently only for patches that cover
// disjoint voxels, such as patches of different stripes of one phase of
// Grid.Stripes; Grid.ForEachBatch arranges this and makes the result
// independent of the number of workers (see the package documentation).
type Aggregator struct {
	g   *Grid
	sum []float64
	// weight holds the per-voxel weight sums of a weighted aggregator and
	// is nil otherwise, when counts follow from the grid.
	weight []float64
	added  atomic.Int64
}

// NewAggregator returns an aggregator for plain averaging over grid g:
// every patch counts once. It holds one float64 per voxel.
func NewAggregator(g *Grid) *Aggregator {
	return &Aggregator{g: g, sum: make([]float64, g.height*g.width*g.bands)}
}

// NewWeightedAggregator returns an aggregator for weighted averaging over
// grid g: a voxel's result is Σ wⱼ·vⱼ / Σ wⱼ over the patches j that cover
// it. It holds two float64 per voxel.
func NewWeightedAggregator(g *Grid) *Aggregator {
	a := NewAggregator(g)
	a.weight = make([]float64, len(a.sum))
	return a
}

// Add adds the reconstructions of patches start..start+n−1, n = rec.N, with
// their means added back: voxel (y+i/p, x+i%p, b+t) of patch start+j
// receives rec(i, j, t) + means[j], where (y, x, b) = g.Pos(start+j). On a
// weighted aggregator every patch has weight 1. Add allocates nothing.
//
// Add panics if rec is not (p²)×n×q, if len(means) != n or if the range is
// not within [0, g.Len()).
func (a *Aggregator) Add(rec *tproduct.Tensor, means []float64, start int) {
	a.g.checkBatch("Add", rec, means, start)
	if a.weight == nil {
		a.addPlain(rec, means, start)
	} else {
		a.addWeighted(rec, means, nil, start)
	}
	a.added.Add(int64(rec.N))
}

// AddWeighted is Add with weight weights[j] for patch start+j. It panics if
// the aggregator was made by NewAggregator, if len(weights) != n or if a
// weight is not positive and finite, besides the cases where Add panics.
func (a *Aggregator) AddWeighted(rec *tproduct.Tensor, means, weights []float64, start int) {
	if a.weight == nil {
		panic("patch: AddWeighted on an aggregator made by NewAggregator; use NewWeightedAggregator")
	}
	a.g.checkBatch("AddWeighted", rec, means, start)
	if len(weights) != rec.N {
		panic(fmt.Sprintf("patch: AddWeighted: %d weights for %d patches", len(weights), rec.N))
	}
	for j, w := range weights {
		if !(w > 0) || math.IsInf(w, 1) {
			panic(fmt.Sprintf("patch: AddWeighted: weight %v of patch %d is not positive and finite", w, start+j))
		}
	}
	a.addWeighted(rec, means, weights, start)
	a.added.Add(int64(rec.N))
}

func (a *Aggregator) addPlain(rec *tproduct.Tensor, means []float64, start int) {
	g := a.g
	for j := range rec.N {
		y, x, b := g.Pos(start + j)
		m := means[j]
		sum := a.sum[(b*g.height+y)*g.width+x:]
		src := rec.Lateral(j)[:len(g.offsets)]
		for i, off := range g.offsets {
			sum[off] += src[i] + m
		}
	}
}

// addWeighted adds with weights[j], or with weight 1 when weights is nil.
func (a *Aggregator) addWeighted(rec *tproduct.Tensor, means, weights []float64, start int) {
	g := a.g
	for j := range rec.N {
		y, x, b := g.Pos(start + j)
		m := means[j]
		wj := 1.0
		if weights != nil {
			wj = weights[j]
		}
		base := (b*g.height+y)*g.width + x
		src := rec.Lateral(j)[:len(g.offsets)]
		// A patch is p²·q voxels in rows of p consecutive ones: with the
		// rows sliced once, the p adds of a row need no bounds checks,
		// where a table lookup per voxel needs two (sum and weight).
		for r := 0; r+g.p <= len(src); r += g.p {
			o := base + g.offsets[r]
			s := src[r : r+g.p]
			sum, weight := a.sum[o:o+len(s)], a.weight[o:o+len(s)]
			for i, v := range s {
				sum[i] += wj * (v + m)
				weight[i] += wj
			}
		}
	}
}

// Result writes the average into dst: every voxel becomes the (weighted)
// mean of the values added for it. It leaves dst.Wavelengths alone. Result
// panics if dst is not the size of the grid, or if the patches added so far
// are not exactly Len() in number (an incomplete or repeated pass).
func (a *Aggregator) Result(dst *msi.Cube) {
	g := a.g
	g.checkCube(dst)
	if n := a.added.Load(); n != int64(g.Len()) {
		panic(fmt.Sprintf("patch: Result: %d patches were added but the grid has %d", n, g.Len()))
	}
	if a.weight != nil {
		for i, s := range a.sum {
			dst.Data[i] = s / a.weight[i]
		}
		return
	}
	i := 0
	for b := range g.bands {
		cb := g.coverBand[b]
		for y := range g.height {
			cyb := cb * g.coverRow[y]
			row := dst.Data[i : i+g.width]
			for x, s := range a.sum[i : i+g.width] {
				row[x] = s / float64(cyb*g.coverCol[x])
			}
			i += g.width
		}
	}
}
