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
	// as the Wiener filter's 2-D transforms want (gather).
	bandMajor patchLayout = iota
	// pixelMajor puts it at ((j*p + dy)*p + dx)*c + b: a patch row is
	// p·c consecutive values of a pixel-interleaved cube, one copy
	// instead of c (gatherInterleaved). The low-rank estimate does not
	// depend on the order of a patch's values, and its groups are many
	// thin patches (4×4 pixels × up to 31 eigen-images), for which the
	// c copies of p values each cost as much as the matching.
	pixelMajor
)

// collaborate matches groups on feat and aggregates the estimates of every
// group, in the given layout, into a cube of c bands: each voxel is
// Σ ω·v / Σ ω over the group members covering it, ω the weight of their
// group. Voxels covered by no member keep the value of fallback.
//
// Determinism without locks: reference rows are cut into bands of
// consecutive rows tall enough that a band's groups reach only image rows
// that the bands two further on cannot reach (their members lie within
// Window/2 rows of their reference, plus the patch). The even bands run in
// parallel first, then the odd ones, each band in row order, so every voxel
// receives its contributions in the same order whatever the number of
// workers.
func collaborate(ctx context.Context, m *blockmatch.Matcher, o blockmatch.Options, feat *msi.Cube, c int, layout patchLayout,
	fallback *msi.Cube, threads int, newEstimator func() groupEstimator, progress func(rows int)) (*msi.Cube, error) {
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
					if layout == pixelMajor {
						addGroupInterleaved(num, den, wk.est, group, weight, w, c, p)
					} else {
						addGroup(num, den, wk.est, group, weight, h, w, c, p)
					}
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
	for b := range c {
		ob, fb := out.Band(b), fallback.Band(b)
		for i, d := range den {
			switch {
			case d <= 0:
				ob[i] = fb[i]
			case layout == pixelMajor:
				ob[i] = num[i*c+b] / d
			default:
				ob[i] = num[b*h*w+i] / d
			}
		}
	}
	return out, nil
}

// addGroupInterleaved is addGroup for estimates in pixelMajor layout and
// num pixel-interleaved (voxel (y, x, b) at (y*w + x)*c + b).
func addGroupInterleaved(num, den, est []float64, group []int32, weight float64, w, c, p int) {
	row := p * c
	for j, at := range group {
		e := est[j*p*row:]
		for dy := range p {
			dst := num[(int(at)+dy*w)*c:][:row]
			for i, v := range e[dy*row:][:row] {
				dst[i] += weight * v
			}
			d := den[int(at)+dy*w:][:p]
			for i := range d {
				d[i] += weight
			}
		}
	}
}

// interleave returns the values of cube pixel-interleaved: voxel (y, x, b)
// at (y*W + x)*Bands + b, what gatherInterleaved reads.
func interleave(cube *msi.Cube) []float64 {
	hw, c := cube.Height*cube.Width, cube.Bands
	out := make([]float64, hw*c)
	for b := range c {
		for i, v := range cube.Band(b) {
			out[i*c+b] = v
		}
	}
	return out
}

// gatherInterleaved copies the members of a group from the
// pixel-interleaved values of a cube w pixels wide with c bands into dst in
// pixelMajor layout.
func gatherInterleaved(dst, cube []float64, group []int32, w, c, p int) {
	row := p * c
	for j, at := range group {
		d := dst[j*p*row:]
		for dy := range p {
			copy(d[dy*row:][:row], cube[(int(at)+dy*w)*c:][:row])
		}
	}
}

// addGroup adds weight × every member's estimate into num and weight into
// den at every pixel the member covers.
func addGroup(num, den, est []float64, group []int32, weight float64, h, w, c, p int) {
	for j, at := range group {
		y, x := int(at)/w, int(at)%w
		e := est[j*c*p*p:]
		for b := range c {
			for dy := range p {
				row := num[(b*h+y+dy)*w+x:][:p]
				src := e[(b*p+dy)*p:][:p]
				for dx, v := range src {
					row[dx] += weight * v
				}
			}
		}
		for dy := range p {
			row := den[(y+dy)*w+x:][:p]
			for dx := range row {
				row[dx] += weight
			}
		}
	}
}

// gather copies the members of a group from cube into dst in the layout of
// groupEstimator.
func gather(dst []float64, cube *msi.Cube, group []int32, p int) {
	h, w, c := cube.Height, cube.Width, cube.Bands
	for j, at := range group {
		y, x := int(at)/w, int(at)%w
		d := dst[j*c*p*p:]
		for b := range c {
			for dy := range p {
				copy(d[(b*p+dy)*p:][:p], cube.Data[(b*h+y+dy)*w+x:][:p])
			}
		}
	}
}
