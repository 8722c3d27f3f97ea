package nonlocal

import (
	"context"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/stages/blockmatch"
)

// groupEstimator turns one group into its estimate. It is given the flat
// top-left positions (y*W + x) of the group's K members and fills est with
// K patches of c bands × p×p pixels, element (j, b, dy, dx) at
// ((j*c + b)*p + dy)*p + dx, returning the group's aggregation weight. One
// estimator serves one goroutine.
type groupEstimator func(pos []int32, est []float64) (weight float64)

// collaborate matches groups on feat and aggregates the estimates of every
// group into a cube of c bands: each voxel is Σ ω·v / Σ ω over the group
// members covering it, ω the weight of their group. Voxels covered by no
// member keep the value of fallback.
//
// Determinism without locks: reference rows are cut into bands of
// consecutive rows tall enough that a band's groups reach only image rows
// that the bands two further on cannot reach (their members lie within
// Window/2 rows of their reference, plus the patch). The even bands run in
// parallel first, then the odd ones, each band in row order, so every voxel
// receives its contributions in the same order whatever the number of
// workers.
func collaborate(ctx context.Context, m *blockmatch.Matcher, o blockmatch.Options, feat *msi.Cube, c int,
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
					addGroup(num, den, wk.est, group, weight, h, w, c, p)
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
		nb := num[b*h*w : (b+1)*h*w]
		for i, d := range den {
			if d > 0 {
				ob[i] = nb[i] / d
			} else {
				ob[i] = fb[i]
			}
		}
	}
	return out, nil
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
