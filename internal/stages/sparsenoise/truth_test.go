package sparsenoise

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// truth is the sparse noise of a cube, read off its sparse part s (the
// noisy cube minus the clean cube minus the Gaussian noise): a column of a
// band whose every s is one nonzero value is a stripe; a column of the
// noisy cube that is all 0 where s is nonzero is dead; any other pixel
// with s ≠ 0 is an impulse.
type truth struct {
	sigma   []float64
	stripes [][]float64 // per band, Width offsets or nil
	dead    [][]int     // per band, the dead columns
	impulse []bool      // per voxel
}

// sparseTol is the smallest |s| taken as corruption: the sparse part of a
// float32 cube is exact to about 1e-4 on the [0, 255] scale.
const sparseTol = 1e-2

func truthOf(noisy, sparse []float64, height, width, bands int, sigma []float64) *truth {
	t := &truth{sigma: sigma, stripes: make([][]float64, bands), dead: make([][]int, bands), impulse: make([]bool, len(noisy))}
	n := height * width
	for b := range bands {
		y, s := noisy[b*n:(b+1)*n], sparse[b*n:(b+1)*n]
		for x := range width {
			allZero, constant, changed := true, true, false
			for r := range height {
				i := r*width + x
				allZero = allZero && y[i] == 0
				changed = changed || math.Abs(s[i]) > sparseTol
				constant = constant && math.Abs(s[i]-s[x]) < sparseTol
			}
			switch {
			case allZero && changed:
				t.dead[b] = append(t.dead[b], x)
			case constant && math.Abs(s[x]) > sparseTol:
				if t.stripes[b] == nil {
					t.stripes[b] = make([]float64, width)
				}
				t.stripes[b][x] = s[x]
			default:
				for r := range height {
					if i := r*width + x; math.Abs(s[i]) > sparseTol {
						t.impulse[b*n+i] = true
					}
				}
			}
		}
	}
	return t
}

// scores are the detection rates and estimation errors of a Report
// against the truth.
type scores struct {
	sigmaErr, baselineErr                   float64 // mean |σ̂ − σ| over bands, Detect's and a baseline's
	sigmaMaxErr                             float64
	impulseTPR, impFPR                      float64 // of the impulse mask, per pixel
	impulses                                int     // true impulse pixels
	deadTPR, deadFP                         float64 // dead columns found (share) and false ones (count)
	deadCols                                int
	stripeBandTP, stripeBandFP, stripeBands int
	stripeTPR, stripeFP                     float64 // striped columns found (share), false ones (count)
	stripeCols                              int
	offsetRMSE                              float64 // over the true striped columns that were found
	// clearTPR is the share found of the stripes whose offset is beyond 6
	// standard errors of a stripe-free column's offset estimate: the ones
	// any column-wise detector should find.
	clearTPR float64
}

func score(r *Report, t *truth, baseline []float64) scores {
	var sc scores
	n := r.Height * r.Width
	for b := range r.Bands {
		e := math.Abs(r.Sigma[b] - t.sigma[b])
		sc.sigmaErr += e / float64(r.Bands)
		sc.sigmaMaxErr = max(sc.sigmaMaxErr, e)
		if baseline != nil {
			sc.baselineErr += math.Abs(baseline[b]-t.sigma[b]) / float64(r.Bands)
		}
	}
	var tp, fp, negatives int
	for i, isImpulse := range t.impulse {
		found := r.Mask[i]&Impulse != 0
		switch {
		case isImpulse:
			sc.impulses++
			if found {
				tp++
			}
		case r.Mask[i]&Dead == 0 || !slices.Contains(t.dead[i/n], i%r.Width):
			negatives++
			if found {
				fp++
			}
		}
	}
	sc.impulseTPR = ratio(tp, sc.impulses)
	sc.impFPR = ratio(fp, negatives)
	deadFound := 0
	for b := range r.Bands {
		for _, x := range t.dead[b] {
			sc.deadCols++
			if slices.Contains(r.DeadColumns[b], x) {
				deadFound++
			}
		}
		for _, x := range r.DeadColumns[b] {
			if !slices.Contains(t.dead[b], x) {
				sc.deadFP++
			}
		}
		sc.deadFP += float64(len(r.DeadLines[b]))
	}
	sc.deadTPR = ratio(deadFound, sc.deadCols)
	stripesFound, sumSq, offsetsFound, clear, clearFound := 0, 0.0, 0, 0, 0
	for b := range r.Bands {
		truthStriped, found := t.stripes[b] != nil, r.StripeOffsets[b] != nil
		if truthStriped {
			sc.stripeBands++
			if found {
				sc.stripeBandTP++
			}
		} else if found {
			sc.stripeBandFP++
		}
		for x := range r.Width {
			isStripe := truthStriped && t.stripes[b][x] != 0
			got := found && r.StripeOffsets[b][x] != 0
			if isStripe {
				sc.stripeCols++
				if math.Abs(t.stripes[b][x]) > 6*1.2533*1.13*t.sigma[b]/math.Sqrt(float64(r.Height)) {
					clear++
					if got {
						clearFound++
					}
				}
				if got {
					stripesFound++
					d := r.StripeOffsets[b][x] - t.stripes[b][x]
					sumSq += d * d
					offsetsFound++
				}
			} else if got {
				sc.stripeFP++
			}
		}
	}
	sc.stripeTPR = ratio(stripesFound, sc.stripeCols)
	sc.clearTPR = ratio(clearFound, clear)
	if offsetsFound > 0 {
		sc.offsetRMSE = math.Sqrt(sumSq / float64(offsetsFound))
	}
	return sc
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// row formats scores as a Markdown table row after the given leading cells.
func (sc scores) row(lead ...string) string {
	pct := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%.1f", 100*v)
	}
	cells := append(lead,
		fmt.Sprintf("%.2f", sc.baselineErr), fmt.Sprintf("%.2f (%.1f)", sc.sigmaErr, sc.sigmaMaxErr),
		fmt.Sprintf("%s / %.3f", pct(sc.impulseTPR), 100*sc.impFPR),
		fmt.Sprintf("%s / %g", pct(sc.deadTPR), sc.deadFP),
		fmt.Sprintf("%d/%d, +%d", sc.stripeBandTP, sc.stripeBands, sc.stripeBandFP),
		fmt.Sprintf("%s (%s) / %g", pct(sc.stripeTPR), pct(sc.clearTPR), sc.stripeFP),
	)
	if sc.stripeCols > 0 {
		cells = append(cells, fmt.Sprintf("%.2f", sc.offsetRMSE))
	} else {
		cells = append(cells, "–")
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

// tableHeader is the header of the rows of scores.row.
const tableHeader = `| scene | case | σ err, wavelet MAD | σ err, Detect (max) | impulses TPR % / FPR % | dead columns TPR % / false | striped bands found, false | striped columns TPR % (of clear ones) / false | offset RMSE |
|---|---|---|---|---|---|---|---|---|`
