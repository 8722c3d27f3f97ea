// Package blockmatch finds groups of similar patches in an image: for
// every reference patch on a grid, the K most similar patches in a search
// window around it (the grouping of BM3D, BM4D and NGmeet).
//
// Conventions. Patches are p×p windows of a feature cube F with C bands (of
// any kind: spectral eigen-images, bands of a pilot estimate), named by the
// flat index y*W + x of their top-left pixel. References sit at rows 0, s,
// 2s, … and always H−p (and likewise for columns: the positions of
// patch.Grid), indexed row-major. The candidates of the reference (y, x) are
// the positions (y', x') with |y'−y| ≤ w/2 and |x'−x| ≤ w/2 inside the image
// (the window is clipped at the border, not shifted). The distance of two
// patches is the sum over their p×p×C voxels of the squared difference of F.
// A group lists the K candidates of least distance in increasing order of
// distance, ties broken by the smaller flat index, with the reference
// itself always first.
//
// Algorithm. One row of references is matched at a time. For every offset
// (dy, dx) of the window, the squared differences between the reference
// row's p image rows and the rows dy lower, shifted by dx, are summed over
// the p rows and the C bands into one value per column, and p consecutive
// column sums give the distance of every reference in the row at that
// offset: O((w²)·p·W·C) per reference row instead of O(refs·w²·p²·C).
// Each reference then keeps its K best by sorting its candidates.
package blockmatch

import (
	"fmt"
	"slices"

	"tdsc/internal/msi"
)

// Options are the settings of block matching.
type Options struct {
	Patch  int // p: patch side in pixels
	Step   int // s: step between references, 1..p
	Window int // w: odd side of the search window of top-left positions
	K      int // patches per group (clamped to the fewest candidates)
}

// Matcher is the plan of block matching on H×W images. It is immutable
// and safe for concurrent use.
type Matcher struct {
	h, w       int
	o          Options
	rowPos     []int // top-left row of every reference row
	colPos     []int // top-left column of every reference column
	k          int
	radius     int
	candidates int // the most candidates a reference can have
}

// New returns the plan for H×W images. It is an error if a setting is out
// of range or the image is smaller than a patch.
func New(height, width int, o Options) (*Matcher, error) {
	switch {
	case o.Patch < 1:
		return nil, fmt.Errorf("blockmatch: patch size %d is not positive", o.Patch)
	case o.Step < 1 || o.Step > o.Patch:
		return nil, fmt.Errorf("blockmatch: step %d is not in 1..%d (the patch size)", o.Step, o.Patch)
	case o.Window < 1 || o.Window%2 == 0:
		return nil, fmt.Errorf("blockmatch: search window %d is not a positive odd number", o.Window)
	case o.K < 1:
		return nil, fmt.Errorf("blockmatch: group size %d is not positive", o.K)
	case height < o.Patch || width < o.Patch:
		return nil, fmt.Errorf("blockmatch: image %d×%d is smaller than the %d×%d patch", height, width, o.Patch, o.Patch)
	}
	m := &Matcher{h: height, w: width, o: o, radius: o.Window / 2,
		rowPos: positions(height, o.Patch, o.Step), colPos: positions(width, o.Patch, o.Step)}
	// The fewest candidates: a window clipped by the image on both sides
	// as much as it can be.
	fewest := func(n int, pos []int) int {
		least := n
		for _, y := range pos {
			least = min(least, min(n-o.Patch, y+m.radius)-max(0, y-m.radius)+1)
		}
		return least
	}
	m.k = min(o.K, fewest(height, m.rowPos)*fewest(width, m.colPos))
	m.candidates = o.Window * o.Window
	return m, nil
}

// positions returns min(k·s, n−p) for k = 0, 1, … up to n−p.
func positions(n, p, s int) []int {
	var out []int
	for y := 0; ; y += s {
		if y >= n-p {
			return append(out, n-p)
		}
		out = append(out, y)
	}
}

// Refs returns the number of reference rows and columns.
func (m *Matcher) Refs() (rows, cols int) { return len(m.rowPos), len(m.colPos) }

// K returns the group size: Options.K, or fewer when some window holds
// fewer candidates.
func (m *Matcher) K() int { return m.k }

// Workspace holds the scratch memory of one goroutine's MatchRow.
type Workspace struct {
	colSum []float64 // per-column sums of squared differences over p rows
	cands  [][]cand  // candidates of every reference of the row
}

type cand struct {
	d   float64
	pos int32
}

// NewWorkspace returns a workspace for MatchRow.
func (m *Matcher) NewWorkspace() *Workspace {
	ws := &Workspace{colSum: make([]float64, m.w), cands: make([][]cand, len(m.colPos))}
	for i := range ws.cands {
		ws.cands[i] = make([]cand, 0, m.candidates)
	}
	return ws
}

// MatchRow matches the references of reference row r on f: dst[j*K+i]
// receives the flat index of the i-th member of the group of the row's j-th
// reference, and dist (if not nil) its distance. It panics if f is not H×W,
// r is out of range or dst or dist is not cols×K long.
func (m *Matcher) MatchRow(dst []int32, dist []float64, f *msi.Cube, r int, ws *Workspace) {
	cols := len(m.colPos)
	if f.Height != m.h || f.Width != m.w {
		panic(fmt.Sprintf("blockmatch: MatchRow: image %d×%d, plan for %d×%d", f.Height, f.Width, m.h, m.w))
	}
	if r < 0 || r >= len(m.rowPos) || len(dst) != cols*m.k || (dist != nil && len(dist) != cols*m.k) {
		panic(fmt.Sprintf("blockmatch: MatchRow: row %d of %d, dst %d and dist %d long for %d×%d", r, len(m.rowPos), len(dst), len(dist), cols, m.k))
	}
	p, w, h := m.o.Patch, m.w, m.h
	y0 := m.rowPos[r]
	for j := range ws.cands {
		ws.cands[j] = ws.cands[j][:0]
	}
	for y1 := max(0, y0-m.radius); y1 <= min(h-p, y0+m.radius); y1++ {
		for dx := -m.radius; dx <= m.radius; dx++ {
			// Columns x whose patch and shifted patch both fit.
			lo, hi := max(0, -dx), min(w-p, w-p-dx) // top-left x range
			if lo > hi {
				continue
			}
			cs := ws.colSum[:hi+p]
			clear(cs[lo:])
			for b := range f.Bands {
				for i := range p {
					a := f.Data[(b*h+y0+i)*w:][:w]
					c := f.Data[(b*h+y1+i)*w:][:w]
					for x := lo; x < hi+p; x++ {
						d := a[x] - c[x+dx]
						cs[x] += d * d
					}
				}
			}
			// The distance of a reference is the sum of p column sums;
			// references whose shifted patch leaves the image skip this
			// offset.
			for j, x := range m.colPos {
				if x < lo || x > hi {
					continue
				}
				s := 0.0
				for _, v := range cs[x : x+p] {
					s += v
				}
				if y1 == y0 && dx == 0 {
					s = -1 // the reference comes first
				}
				ws.cands[j] = append(ws.cands[j], cand{d: s, pos: int32(y1*w + x + dx)})
			}
		}
	}
	k := m.k
	for j := range cols {
		c := ws.cands[j]
		// The K nearest, in the order of a full sort: the candidates'
		// order (distance, then position) is total, so selecting the K
		// smallest and sorting those gives the same group for a fraction
		// of the work (K is a quarter of the 961 candidates or less).
		selectSmallest(c, k)
		slices.SortFunc(c[:k], compareCand)
		for i := range k {
			dst[j*k+i] = c[i].pos
			if dist != nil {
				dist[j*k+i] = max(c[i].d, 0)
			}
		}
	}
}

// compareCand orders candidates by distance, then by position.
func compareCand(a, b cand) int {
	switch {
	case a.d < b.d:
		return -1
	case a.d > b.d:
		return 1
	}
	return int(a.pos - b.pos)
}

// selectSmallest reorders c so that its k smallest candidates (by
// compareCand) come first, in no particular order: quickselect, with the
// median of three as the pivot. It needs 0 < k ≤ len(c).
func selectSmallest(c []cand, k int) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// The median of c[lo], c[mid], c[hi] to c[hi], the pivot.
		if compareCand(c[mid], c[lo]) < 0 {
			c[mid], c[lo] = c[lo], c[mid]
		}
		if compareCand(c[hi], c[lo]) < 0 {
			c[hi], c[lo] = c[lo], c[hi]
		}
		if compareCand(c[mid], c[hi]) < 0 {
			c[mid], c[hi] = c[hi], c[mid]
		}
		pivot := c[hi]
		store := lo
		for i := lo; i < hi; i++ {
			if compareCand(c[i], pivot) < 0 {
				c[i], c[store] = c[store], c[i]
				store++
			}
		}
		c[store], c[hi] = c[hi], c[store]
		switch {
		case store == k-1 || store == k:
			return
		case store < k-1:
			lo = store + 1
		default:
			hi = store - 1
		}
	}
}
