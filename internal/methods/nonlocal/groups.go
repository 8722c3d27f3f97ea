package nonlocal

import (
	"context"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/stages/blockmatch"
)

// groupEstimator turns one group into its estimate. It is given the flat
// top-left positions (y*W + x) of the group's K members and fills est with
// K patches of c bands × p×p pixels in the layout collaborate was given,
// returning the group's aggregation weight. One estimator serves one
// goroutine.
type groupEstimator func(pos []int32, est []float64) (weight float64)

// patchLayout is the order of the values of a group's patches.
type patchLayout int

const (
	// bandMajor puts element (j, b, dy, dx) of member j at
	// ((j*c + b)*p + dy)*p + dx: each band of a patch is a p×p block,
	// as the Wiener filter's 2-D transforms want.
	bandMajor patchLayout = iota
	// pixelMajor puts it at ((j*p + dy)*p + dx)*c + b: a patch row is
	// p·c consecutive values of a pixelCube, one copy. The low-rank
	// estimate does not depend on the order of a patch's values.
	pixelMajor
)

// pixelCube is a cube of h×w pixels and c bands stored pixel-interleaved:
// voxel (y, x, b) at (y*w + x)*c + b. Groups are gathered from it and
// aggregated into it because a patch row is then p·c consecutive values,
// where a band-sequential cube scatters it over c planes of h·w: gathering
// a Wiener group (64 patches of 6×6 × 31 bands) took 40 % less time.
type pixelCube struct {
	h, w, c int
	data    []float64
}

// interleave returns cube as a pixelCube.
func interleave(cube *msi.Cube) *pixelCube {
	pc := newPixelCube(cube)
	c := pc.c
	eachPixelBlock(pc, func(p0, p1 int, dst []float64) {
		for b := range c {
			for i, v := range cube.Band(b)[p0:p1] {
				dst[i*c+b] = v
			}
		}
	})
	return pc
}

// newPixelCube returns a zero pixelCube of cube's size.
func newPixelCube(cube *msi.Cube) *pixelCube {
	return &pixelCube{h: cube.Height, w: cube.Width, c: cube.Bands, data: make([]float64, cube.Height*cube.Width*cube.Bands)}
}

// eachPixelBlock calls fill for consecutive blocks of pc's pixels
// [p0, p1), with dst their spectra, the blocks on every core. Each block's
// spectra are written by one goroutine: cores writing the bands of the
// same pixels would share every cache line.
func eachPixelBlock(pc *pixelCube, fill func(p0, p1 int, dst []float64)) {
	const block = 2048
	hw := pc.h * pc.w
	parallel.Each((hw+block-1)/block, func(bi int) {
		p0, p1 := bi*block, min(hw, (bi+1)*block)
		fill(p0, p1, pc.data[p0*pc.c:p1*pc.c])
	})
}

// at returns the value of voxel (pixel, band), pixel the flat index y*w + x.
func (pc *pixelCube) at(pixel, band int) float64 { return pc.data[pixel*pc.c+band] }

// gather copies the members of a group (flat top-left positions y*w + x)
// of p×p pixels into dst in the given layout.
func (pc *pixelCube) gather(dst []float64, group []int32, p int, layout patchLayout) {
	w, c := pc.w, pc.c
	row, pp := p*c, p*p
	for j, at := range group {
		d := dst[j*pp*c:][:pp*c]
		for dy := range p {
			src := pc.data[(int(at)+dy*w)*c:][:row]
			if layout == pixelMajor {
				copy(d[dy*row:][:row], src)
				continue
			}
			for dx := range p {
				o := dy*p + dx
				for b, v := range src[dx*c:][:c] {
					d[b*pp+o] = v
				}
			}
		}
	}
}

// collaborate matches groups on feat and aggregates the estimates of every
// group, in the given layout, into a cube of c bands: each voxel is
// Σ ω·v / Σ ω over the group members covering it, ω the weight of their
// group. Voxels covered by no member take the value fallback gives for
// their pixel (flat index y*W + x) and band. The sums are kept
// pixel-interleaved, for the reason of pixelCube.
//
// Determinism without locks: reference rows are cut into bands of
// consecutive rows tall enough that a band's groups reach only image rows
// that the bands two further on cannot reach (their members lie within
// Window/2 rows of their reference, plus the patch). The even bands run in
// parallel first, then the odd ones, each band in row order, so every voxel
// receives its contributions in the same order whatever the number of
// workers.
func collaborate(ctx context.Context, m *blockmatch.Matcher, o blockmatch.Options, feat *msi.Cube, c int, layout patchLayout,
	fallback func(pixel, band int) float64, threads int, newEstimator func() groupEstimator, progress func(rows int)) (*msi.Cube, error) {
	h, w, p := feat.Height, feat.Width, o.Patch
	rows, cols := m.Refs()
	k := m.K()
	span := 2*(o.Window/2) + p
	bandRows := max(1, (span+o.Step-1)/o.Step)
	var bands [2][][2]int
	for i, r0 := 0, 0; r0 < rows; i, r0 = i+1, r0+bandRows {
		bands[i%2] = append(bands[i%2], [2]int{r0, min(rows, r0+bandRows)})
	}
	num := make([]float64, h*w*c)
	den := make([]float64, h*w)
	type worker struct {
		ws   *blockmatch.Workspace
		pos  []int32
		est  []float64
		eval groupEstimator
	}
	workers := parallel.Workers(threads)
	ws := make([]*worker, workers)
	for _, phase := range bands {
		err := parallel.For(ctx, len(phase), workers, func(wi, bi int) error {
			if ws[wi] == nil {
				ws[wi] = &worker{
					ws:   m.NewWorkspace(),
					pos:  make([]int32, cols*k),
					est:  make([]float64, k*c*p*p),
					eval: newEstimator(),
				}
			}
			wk := ws[wi]
			for r := phase[bi][0]; r < phase[bi][1]; r++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				m.MatchRow(wk.pos, nil, feat, r, wk.ws)
				for j := range cols {
					group := wk.pos[j*k : (j+1)*k]
					weight := wk.eval(group, wk.est)
					addGroup(num, den, wk.est, group, weight, w, c, p, layout)
				}
				if progress != nil {
					progress(1)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := msi.NewCube(h, w, c)
	parallel.Each(c, func(b int) {
		ob := out.Band(b)
		for i, d := range den {
			if d > 0 {
				ob[i] = num[i*c+b] / d
			} else {
				ob[i] = fallback(i, b)
			}
		}
	})
	return out, nil
}

// addGroup adds weight × every member's estimate (in the given layout) into
// the pixel-interleaved sums num (c bands, w pixels a row) and weight into
// den at every pixel the member covers.
func addGroup(num, den, est []float64, group []int32, weight float64, w, c, p int, layout patchLayout) {
	row, pp := p*c, p*p
	for j, at := range group {
		e := est[j*pp*c:][:pp*c]
		for dy := range p {
			dst := num[(int(at)+dy*w)*c:][:row]
			if layout == pixelMajor {
				for i, v := range e[dy*row:][:row] {
					dst[i] += weight * v
				}
			} else {
				for dx := range p {
					o := dy*p + dx
					px := dst[dx*c:][:c]
					for b := range px {
						px[b] += weight * e[b*pp+o]
					}
				}
			}
			d := den[int(at)+dy*w:][:p]
			for i := range d {
				d[i] += weight
			}
		}
	}
}
