// Package sparsenoise finds the sparse part of the noise of a cube.
//
// Model. A noisy cube is y = x + n + s on the [0, 255] scale: x the clean
// scene, n Gaussian with a standard deviation σ_b per band b, and s sparse:
// impulses (single pixels replaced, salt-and-pepper 0 and 255 or hot and
// cold pixels), dead columns or lines (a whole column or line of a band
// stuck at one value, typically 0), and stripes (a constant offset added to
// whole columns of some bands, as push-broom detectors with a
// miscalibrated element make). Detect estimates every part: σ_b not
// inflated by s, a mask of the impulse and dead pixels, the dead columns and
// lines, and the offset of every striped column.
//
// Order. The parts are found one after another, each with the others'
// pixels left out: dead columns and lines first (whole columns stuck at one
// value), then stuck-value impulses (values repeated far more often than
// any continuous value is), then σ_b (the robust Haar estimator over the
// pixels that are left, which whole-column stripes cannot reach), then
// stripes (column medians of a row-wise residual, with a threshold from
// σ_b), then the remaining impulses (outliers against a local prediction
// that the neighbouring bands do not share).
//
// Missing voxels (NaN: no data) are marked Missing before anything else
// and left out of every statistic, as the parts already found are.
//
// A cube read in windows of lines (larger than memory, denoised in strips)
// has its model fitted by Fit: what belongs to the whole cube (σ_b, the
// stripes, the dead columns) from statistics merged over the windows, so
// that a weak stripe is judged on the whole column; what is local found
// in any window by DetectWith, with that model (see model.go).
//
// Everything is deterministic and runs band by band in time linear in the
// number of voxels (up to small fixed-size sorts): about a second for a
// 512×512×31 cube on one core.
package sparsenoise

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/parallel"
)

// The mask bits of Report.Mask.
const (
	// Impulse marks a pixel replaced by an impulse.
	Impulse uint8 = 1 << iota
	// Dead marks a pixel of a dead column or line.
	Dead
	// Missing marks a voxel without data (NaN in the cube: a no-data
	// value or NaN in the file, or a voxel a mask file marks).
	Missing
)

// Thresholds of the detectors. They are fixed, not fitted to a cube, so
// that every cube is judged by the same rule.
const (
	// deadShare is the share of a column's (line's) pixels that must hold
	// one value for it to be dead: a few pixels may differ (an impulse or a
	// partly working detector).
	deadShare = 0.9
	// flatShare is the share of a neighbouring live column's (line's)
	// pixels that hold the same value when the value is the scene's own (a
	// flat or clipped region) rather than a defect; stuckFlatShare is the
	// least share of a stuck pixel's 5×5 neighbours that does the same
	// (the edge of a clipped region has about half).
	flatShare      = 0.5
	stuckFlatShare = 0.25
	// scatterMargin is how much more often than the band as a whole the
	// neighbours of a stuck value's pixels may hold it for the value to be
	// scattered impulses rather than a region of the scene.
	scatterMargin = 0.2
	// flatTol is how close on the [0, 255] scale a neighbour's value must
	// be to a stuck value to count as the same flat region.
	flatTol = 0.5
	// stuckMinCount and stuckMinShare bound from below how often a value
	// must occur in a band to be a stuck (impulse) value; stuckRatio is how
	// many times more often than either value next to it it must occur.
	stuckMinCount = 8
	stuckMinShare = 0.001
	stuckRatio    = 20
	// minHaar is the fewest Haar coefficients σ is estimated from before
	// the estimator falls back to vertical differences.
	minHaar = 200
	// stripeZ is the threshold of a column's offset in standard errors of
	// the offset of a stripe-free column; minStripes is the fewest such
	// columns a band needs to be called striped.
	stripeZ    = 4.5
	minStripes = 2
	// stripeReach is how many columns on each side predict a pixel in the
	// stripe residual.
	stripeReach = 3
	// outlierZ is how far, in units of the band's noise, an impulse lies
	// beyond the range of its 3×3 neighbours; outlierShare is how much larger its
	// residual must be than the residual of the same pixel in the nearest
	// bands (an edge of the scene is in every band, an impulse in one).
	outlierZ     = 8
	outlierShare = 3
	// impulseBandShare is the share of a band's pixels (at least
	// impulseBandMin) that must be impulses for the summary to call it an
	// impulse band.
	impulseBandShare = 0.001
	impulseBandMin   = 5
)

// normalQuartile is Φ⁻¹(0.75): the median of |Z| for standard normal Z.
const normalQuartile = 0.6744897501960817

// Report is what Detect found in a cube of Height×Width×Bands.
type Report struct {
	Height, Width, Bands int
	// Sigma is the standard deviation of the Gaussian noise of every band,
	// with the sparse part left out (see Detect).
	Sigma []float64
	// Mask has one entry per voxel, in the cube's Data order: 0 for a pixel
	// of y = x + n (+ a stripe offset), else the bits Impulse and Dead.
	Mask []uint8
	// DeadColumns[b] and DeadLines[b] list the dead columns and lines of
	// band b, ascending; nil when it has none.
	DeadColumns, DeadLines [][]int
	// Impulses[b] is the number of impulse pixels of band b.
	Impulses []int
	// Missing is the number of missing voxels (marked Missing).
	Missing int
	// StripeOffsets[b] is nil for a band without stripes, else the offset of
	// every column of band b (Width values, 0 for a column without a
	// stripe): the estimate of s in that column.
	StripeOffsets [][]float64
}

// StripedBands, DeadBands and ImpulseBands list the 0-based bands with
// stripes, with dead columns or lines, and with impulses (at least 0.1 % of
// the pixels and 5 of them: a few isolated outliers do not make an impulse
// band).
func (r *Report) StripedBands() []int {
	return r.bandsWhere(func(b int) bool { return r.StripeOffsets[b] != nil })
}

// DeadBands lists the bands with dead columns or lines.
func (r *Report) DeadBands() []int {
	return r.bandsWhere(func(b int) bool { return len(r.DeadColumns[b])+len(r.DeadLines[b]) > 0 })
}

// ImpulseBands lists the bands with impulses (see StripedBands).
func (r *Report) ImpulseBands() []int {
	least := max(impulseBandMin, int(math.Ceil(impulseBandShare*float64(r.Height*r.Width))))
	return r.bandsWhere(func(b int) bool { return r.Impulses[b] >= least })
}

// StripedColumns returns the number of striped columns of band b.
func (r *Report) StripedColumns(b int) int {
	n := 0
	for _, u := range r.StripeOffsets[b] {
		if u != 0 {
			n++
		}
	}
	return n
}

func (r *Report) bandsWhere(f func(b int) bool) []int {
	var bands []int
	for b := range r.Bands {
		if f(b) {
			bands = append(bands, b)
		}
	}
	return bands
}

// Summary says what was found in a few lines (no trailing newline), with
// 1-based band numbers, for example
//
//	noise σ 9.8–71.2 over 31 bands (median 48.3)
//	stripes in 10 bands: 2 3 12 13 19 22 26 27 28 29 (112 columns)
//	dead columns or lines in 10 bands: 5 6 10 15 16 18 20 23 24 25 (128 columns, 0 lines)
//	impulses in 10 bands: 1 4 7 8 9 11 17 21 30 31 (43211 pixels)
//
// A part that was not found is said as "no stripes" and so on.
func (r *Report) Summary() string {
	sorted := slices.Sorted(slices.Values(r.Sigma))
	var b strings.Builder
	fmt.Fprintf(&b, "noise σ %.1f–%.1f over %d bands (median %.1f)", sorted[0], sorted[len(sorted)-1], r.Bands, Median(sorted))
	list := func(bands []int) string {
		parts := make([]string, len(bands))
		for i, band := range bands {
			parts[i] = fmt.Sprint(band + 1)
		}
		return fmt.Sprintf("%d band%s: %s", len(bands), plural(len(bands)), strings.Join(parts, " "))
	}
	if bands := r.StripedBands(); len(bands) > 0 {
		cols := 0
		for _, band := range bands {
			cols += r.StripedColumns(band)
		}
		fmt.Fprintf(&b, "\nstripes in %s (%d columns)", list(bands), cols)
	} else {
		b.WriteString("\nno stripes")
	}
	if bands := r.DeadBands(); len(bands) > 0 {
		cols, lines := 0, 0
		for _, band := range bands {
			cols += len(r.DeadColumns[band])
			lines += len(r.DeadLines[band])
		}
		fmt.Fprintf(&b, "\ndead columns or lines in %s (%d columns, %d lines)", list(bands), cols, lines)
	} else {
		b.WriteString("\nno dead columns or lines")
	}
	if bands := r.ImpulseBands(); len(bands) > 0 {
		pixels := 0
		for _, band := range bands {
			pixels += r.Impulses[band]
		}
		fmt.Fprintf(&b, "\nimpulses in %s (%d pixels)", list(bands), pixels)
	} else {
		b.WriteString("\nno impulses")
	}
	if r.Missing > 0 {
		fmt.Fprintf(&b, "\n%d missing voxels (no data), left out of all of the above", r.Missing)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// CropMask returns the entries of mask, one per voxel of c in c's order
// (a Report's Mask), of c's lines y0 to y0+n−1, in the same order. It
// panics if those lines are not all in c.
func CropMask(mask []uint8, c *msi.Cube, y0, n int) []uint8 {
	out := make([]uint8, 0, n*c.Width*c.Bands)
	plane := c.Height * c.Width
	for b := range c.Bands {
		out = append(out, mask[b*plane+y0*c.Width:b*plane+(y0+n)*c.Width]...)
	}
	return out
}

// Detect finds the sparse noise of c and the σ of its Gaussian noise, band
// by band, with the methods of detectDead, detectStuck, estimateSigma,
// detectStripes and detectOutliers, in that order (see the package
// comment), its missing voxels left out. It panics for a cube smaller
// than 2×2 pixels.
func Detect(c *msi.Cube) *Report {
	r := newReport(c)
	n := c.Height * c.Width
	detectDead(c, r)
	parallel.Each(c.Bands, func(b int) {
		band, mask := c.Band(b), r.Mask[b*n:(b+1)*n]
		r.Impulses[b] = detectStuck(band, mask, c.Height, c.Width)
		r.Sigma[b] = estimateSigma(band, mask, c.Height, c.Width)
	})
	detectStripes(c, r)
	addOutliers(c, r)
	return r
}

// MissingOnly returns the report of c with nothing looked for but its
// missing voxels (marked Missing) and the σ of every band, estimated from
// the other voxels as Detect estimates it before any part is found: what
// a cube with missing voxels needs when the sparse noise is not looked
// for. It panics for a cube smaller than 2×2 pixels.
func MissingOnly(c *msi.Cube) *Report {
	r := newReport(c)
	n := c.Height * c.Width
	for b := range c.Bands {
		r.Sigma[b] = estimateSigma(c.Band(b), r.Mask[b*n:(b+1)*n], c.Height, c.Width)
	}
	return r
}

// newReport returns an empty report of c with its missing voxels marked.
// It panics for a cube smaller than 2×2 pixels.
func newReport(c *msi.Cube) *Report {
	if c.Height < 2 || c.Width < 2 {
		panic(fmt.Sprintf("sparsenoise: a %s cube is too small to find noise in", c.Size()))
	}
	r := &Report{
		Height: c.Height, Width: c.Width, Bands: c.Bands,
		Sigma:         make([]float64, c.Bands),
		Mask:          make([]uint8, len(c.Data)),
		DeadColumns:   make([][]int, c.Bands),
		DeadLines:     make([][]int, c.Bands),
		Impulses:      make([]int, c.Bands),
		StripeOffsets: make([][]float64, c.Bands),
	}
	for i, v := range c.Data {
		if math.IsNaN(v) {
			r.Mask[i] = Missing
			r.Missing++
		}
	}
	return r
}

// detectDead finds the dead columns and lines of every band of c and marks
// their pixels Dead in r.Mask.
//
// A column is stuck when at least 90 % of its pixels hold one value v
// (typically 0, or a stuck reading); Gaussian noise makes two equal values
// improbable, so a noisy live column never is. A stuck column is dead
// unless the scene explains it: when the nearest columns on either side
// that are not stuck mostly (≥ 50 %) hold v too (a flat or clipped region),
// or when the same column is stuck in every band within 2 of it, at least 2
// bands (a border or a no-data area of the scene is in all bands, a dead
// detector element in one; asking for 2 bands keeps the first and last band
// from being judged by one neighbour's dead column). A band whose every column is stuck has no neighbour to compare with
// and is dead throughout, unless its neighbours are too. Lines are found the
// same way, after the dead columns.
func detectDead(c *msi.Cube, r *Report) {
	detectDeadLines(c, r, true)
	detectDeadLines(c, r, false)
}

// detectDeadLines finds, as detectDead, the dead columns (columns true)
// or the dead lines (false) of every band of c and marks their pixels
// Dead in r.Mask.
func detectDeadLines(c *msi.Cube, r *Report, columns bool) {
	n := c.Height * c.Width
	count, length, lineStep, pixelStep := c.Width, c.Height, 1, c.Width
	if !columns {
		count, length, lineStep, pixelStep = c.Height, c.Width, c.Width, 1
	}
	stuck := make([][]bool, c.Bands)
	values := make([][]float64, c.Bands)
	for b := range c.Bands {
		stuck[b], values[b] = stuckLines(c.Band(b), r.Mask[b*n:(b+1)*n], count, length, lineStep, pixelStep)
	}
	for b := range c.Bands {
		band, mask := c.Band(b), r.Mask[b*n:(b+1)*n]
		share := func(i int, v float64) float64 {
			same, total := 0, 0
			for j := range length {
				if k := i*lineStep + j*pixelStep; mask[k] == 0 {
					total++
					if band[k] == v {
						same++
					}
				}
			}
			return float64(same) / float64(max(total, 1))
		}
		var dead []int
		before, after := nearestLive(stuck[b])
		for i := range count {
			if !stuck[b][i] {
				continue
			}
			// Scene borders are in all bands: stuck in every band
			// within 2, at least 2 of them.
			inScene := c.Bands > 2
			for bb := max(0, b-2); bb <= min(c.Bands-1, b+2); bb++ {
				if bb != b && !stuck[bb][i] {
					inScene = false
				}
			}
			for _, j := range [2]int{before[i], after[i]} {
				if j >= 0 && share(j, values[b][i]) >= flatShare {
					inScene = true
				}
			}
			if !inScene {
				dead = append(dead, i)
			}
		}
		for _, i := range dead {
			for j := range length {
				mask[i*lineStep+j*pixelStep] |= Dead
			}
		}
		if columns {
			r.DeadColumns[b] = dead
		} else {
			r.DeadLines[b] = dead
		}
	}
}

// nearestLive returns, for every line i, the nearest line before it and
// the nearest after it that is not stuck (-1: none), found in one sweep
// each way: a search outward from every stuck line costs count² on a band
// stuck throughout (a window of zeros 20 000 columns wide took 8 s).
func nearestLive(stuck []bool) (before, after []int) {
	before, after = make([]int, len(stuck)), make([]int, len(stuck))
	last := -1
	for i, s := range stuck {
		before[i] = last
		if !s {
			last = i
		}
	}
	last = -1
	for i := len(stuck) - 1; i >= 0; i-- {
		after[i] = last
		if !stuck[i] {
			last = i
		}
	}
	return before, after
}

// stuckLines tells which of count lines of length pixels (line i's pixel j
// at band[i*lineStep+j*pixelStep]) hold one value in at least 90 % of their
// unmasked pixels, and that value.
func stuckLines(band []float64, mask []uint8, count, length, lineStep, pixelStep int) (stuck []bool, value []float64) {
	values := make([]float64, 0, length)
	stuck, value = make([]bool, count), make([]float64, count)
	for i := range count {
		values = values[:0]
		for j := range length {
			if k := i*lineStep + j*pixelStep; mask[k] == 0 {
				values = append(values, band[k])
			}
		}
		if len(values) == 0 || !mayBeStuck(values) {
			continue
		}
		v, run := mode(values)
		if float64(run) >= deadShare*float64(len(values)) {
			stuck[i], value[i] = true, v
		}
	}
	return stuck, value
}

// mayBeStuck reports whether 90 % of values could be equal: then at least
// 80 % of the adjacent pairs are, which is cheap to count and rules out
// every noisy line without sorting it.
func mayBeStuck(values []float64) bool {
	equal := 0
	for j := 1; j < len(values); j++ {
		if values[j] == values[j-1] {
			equal++
		}
	}
	return float64(equal) >= (2*deadShare-1)*float64(len(values)-1)
}

// mode returns the most frequent value of v and how often it occurs (the
// smallest such value on a tie), reordering v.
func mode(v []float64) (value float64, count int) {
	slices.Sort(v)
	for i := 0; i < len(v); {
		j := i + 1
		for j < len(v) && v[j] == v[i] {
			j++
		}
		if j-i > count {
			value, count = v[i], j-i
		}
		i = j
	}
	return value, count
}

// detectStuck marks as Impulse the pixels of a band that hold a stuck
// value, and returns how many it marked.
//
// Salt-and-pepper noise replaces pixels by a few fixed values (0 and 255,
// or a sensor's floor and ceiling), which therefore occur far more often
// than any value of a continuous signal plus Gaussian noise, where two equal
// values are improbable. A value is stuck when it occurs at least
// max(8, 0.1 % of the pixels) times and 20 times more often than either
// of the values next to it in the band's sorted distinct values: a stuck
// value is a spike of the histogram. (Integer data repeats every value,
// and the values near its histogram's mode each occur far more often than
// most; their neighbours occur about as often, so they are no spike. A
// real 17-band uint16 scene had a tenth to a half of some bands marked as
// impulses when a value was compared with the band's median count
// instead.) stuckValues finds these values without sorting the band.
// Whether the pixels holding v are scattered
// impulses or a flat or clipped region of the scene (whose values may
// differ a little, as CAVE's saturated areas do) is told by their 5×5
// neighbours: scattered ones have, on average, about the band's share f of
// values within 0.5 of v among their neighbours (impulses are independent
// of each other), a region far more. When the mean share is below f + 0.2,
// every pixel of v is an impulse; otherwise only those of its pixels with
// fewer than a quarter of such neighbours are (salt outside a saturated
// area). Dead pixels are left out.
func detectStuck(band []float64, mask []uint8, height, width int) int {
	stuck, frequency := stuckValues(band, mask)
	if len(stuck) == 0 {
		return 0
	}
	return markStuck(band, mask, height, width, stuck, frequency)
}

// stuckValues returns, in increasing order, the stuck values of a band's
// unmasked pixels (see detectStuck), and the share of those pixels whose
// value lies within flatTol of each: frequency[j] is the share of the
// values x with v − flatTol ≤ x < Nextafter(v + flatTol, +∞) for v =
// stuck[j]. Values are equal as == says: −0 and +0 are one value, and
// every NaN is a value of its own (NaNs sort below every other value, so
// the smallest value has a neighbour occurring once when the band holds a
// NaN).
//
// Strips run it on every band of every window of lines in each of their
// passes, where sorting the band (with a binary search for every f) was a
// quarter of the CPU of denoising a 256×256×224 cube with impulses in
// strips of 128 lines. It instead counts, in time linear in the number of
// pixels: only a value counted at least least = max(8, 0.1 % of the
// pixels) times can be stuck. A first pass counts the values by buckets
// of their hash, in a table small enough to stay in cache; only the
// values of a bucket counted least times or more (none in a band of noise
// alone, where values do not repeat; the few stuck ones in a band with
// impulses) are counted exactly, in a map. The candidates, those counted
// least times or more, are at most 1000. A last pass finds each candidate's nearest smaller and
// larger values (its neighbours in sorted order) with their counts, and,
// with a running count in a difference array, each f, by binary searches
// among the sorted candidates only.
func stuckValues(band []float64, mask []uint8) (stuck, frequency []float64) {
	n := 0
	for _, m := range mask {
		if m == 0 {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	least := int32(math.Ceil(max(float64(stuckMinCount), stuckMinShare*float64(n))))
	// The buckets: more than the values, up to 2¹⁵ (128 KiB, in a core's
	// cache); a bucket then holds on average at most an eighth of least
	// values (n/2¹⁵ ≤ least/32 beyond), so that in a band of noise alone
	// next to none reaches least.
	buckets := make([]int32, min(1<<15, 1<<bits.Len(uint(n))))
	bucketShift := uint(64 - bits.TrailingZeros(uint(len(buckets))))
	hasNaN := false
	for i, v := range band {
		if mask[i] != 0 {
			continue
		}
		if math.IsNaN(v) {
			hasNaN = true
			continue
		}
		buckets[valueHash(v)>>bucketShift]++
	}
	if slices.Max(buckets) < least {
		return nil, nil
	}
	// Go's map keys −0 and +0 alike, as == does.
	counts := map[float64]int32{}
	var candidates []float64
	for i, v := range band {
		if mask[i] != 0 || math.IsNaN(v) || buckets[valueHash(v)>>bucketShift] < least {
			continue
		}
		counts[v]++
		if counts[v] == least {
			candidates = append(candidates, v)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	slices.Sort(candidates)
	k := len(candidates)
	// below[j] and above[j] are the nearest values smaller and larger than
	// candidate j, and belowCount[j], aboveCount[j] their counts (0 while
	// none is known). lo[j] ≤ x < hi[j] for the values x within flatTol of
	// it; both bounds increase with j, so the candidates j with x within
	// flatTol are countAtMost(hi, x) ≤ j < countAtMost(lo, x), which near
	// counts as a difference array.
	below, above := make([]float64, k), make([]float64, k)
	belowCount, aboveCount := make([]int32, k), make([]int32, k)
	lo, hi := make([]float64, k), make([]float64, k)
	for j, v := range candidates {
		lo[j], hi[j] = v-flatTol, math.Nextafter(v+flatTol, math.Inf(1))
		// Until a value between them turns up, the next candidate is the
		// nearest larger value.
		if j+1 < k {
			above[j], aboveCount[j] = candidates[j+1], counts[candidates[j+1]]
			below[j+1], belowCount[j+1] = v, counts[v]
		}
	}
	near := make([]int, k+1)
	for i, x := range band {
		if mask[i] != 0 || math.IsNaN(x) {
			continue
		}
		// x lies between candidates p−1 and p unless it is candidate p−1.
		if p := countAtMost(candidates, x); p == 0 || candidates[p-1] != x {
			if j := p - 1; j >= 0 {
				if aboveCount[j] == 0 || x < above[j] {
					above[j], aboveCount[j] = x, 1
				} else if x == above[j] {
					aboveCount[j]++
				}
			}
			if j := p; j < k {
				if belowCount[j] == 0 || x > below[j] {
					below[j], belowCount[j] = x, 1
				} else if x == below[j] {
					belowCount[j]++
				}
			}
		}
		if x >= lo[0] && x < hi[k-1] {
			near[countAtMost(hi, x)]++
			near[countAtMost(lo, x)]--
		}
	}
	if belowCount[0] == 0 && hasNaN {
		belowCount[0] = 1
	}
	within := 0
	for j, v := range candidates {
		within += near[j]
		if float64(counts[v]) >= stuckRatio*float64(max(belowCount[j], aboveCount[j])) {
			stuck = append(stuck, v)
			frequency = append(frequency, float64(within)/float64(n))
		}
	}
	return stuck, frequency
}

// countAtMost returns how many of the increasing values are at most x.
func countAtMost(increasing []float64, x float64) int {
	lo, hi := 0, len(increasing)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if increasing[mid] <= x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// valueHash returns a hash of v (not a NaN), the same for −0 and +0:
// its bits mixed by the finalizer of MurmurHash3, so that the high bits
// that stuckValues buckets by depend on every bit of v.
func valueHash(v float64) uint64 {
	h := math.Float64bits(v)
	if v == 0 {
		h = 0
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// nearShare returns the share of the 5×5 neighbours of pixel (y, x) of a
// band, those not Dead or Missing, that hold a value within flatTol of
// its own; 0 without such neighbours.
func nearShare(band []float64, mask []uint8, height, width, y, x int) float64 {
	i := y*width + x
	same, total := 0, 0
	for yy := max(0, y-2); yy <= min(height-1, y+2); yy++ {
		for xx := max(0, x-2); xx <= min(width-1, x+2); xx++ {
			if j := yy*width + xx; j != i && mask[j]&(Dead|Missing) == 0 {
				total++
				if math.Abs(band[j]-band[i]) <= flatTol {
					same++
				}
			}
		}
	}
	return float64(same) / float64(max(total, 1))
}

// markStuck marks as Impulse the unmasked pixels of a band holding one of
// the stuck values that are scattered or, for a value also of a flat
// region, that have few neighbours near it (see detectStuck), and returns
// how many it marked; stuck and frequency are stuckValues'.
func markStuck(band []float64, mask []uint8, height, width int, stuck, frequency []float64) int {
	// The pixels holding a stuck value, each with the share of its 5×5
	// neighbours that hold a value within flatTol of it, and that share's
	// sum and count per stuck value (indexed as stuck: a map by value cost
	// as much as the rest). Listing them once spares the marking a second
	// search of every pixel among the stuck values.
	type stuckPixel struct {
		i, value int
		share    float64
	}
	var pixels []stuckPixel
	sumShare, count := make([]float64, len(stuck)), make([]int, len(stuck))
	for y := range height {
		for x := range width {
			i := y*width + x
			if mask[i] != 0 {
				continue
			}
			v := slices.Index(stuck, band[i])
			if v < 0 {
				continue
			}
			share := nearShare(band, mask, height, width, y, x)
			pixels = append(pixels, stuckPixel{i, v, share})
			sumShare[v] += share
			count[v]++
		}
	}
	marked := 0
	for _, p := range pixels {
		// Scattered impulses of value v have about the band's share f of
		// values near v among their neighbours; a region of the scene
		// holding v has far more. When v is scattered, every pixel of it
		// is an impulse; when v is also a region's, only the pixels with
		// few such neighbours are.
		v := p.value
		scattered := sumShare[v]/float64(count[v]) < frequency[v]+scatterMargin
		if scattered || p.share < stuckFlatShare {
			mask[p.i] |= Impulse
			marked++
		}
	}
	return marked
}

// estimateSigma returns the standard deviation of the Gaussian noise of a
// band from its unmasked pixels, 0 when the band's noise is below
// detection.
//
// It is the robust estimator of Donoho and Johnstone that
// noise.EstimateBand uses: the median absolute Haar diagonal detail
// (a − b − c + d)/2 of 2×2 blocks [[a, b], [c, d]], divided by Φ⁻¹(0.75),
// here over every 2×2 position (not only even ones) whose four pixels are
// unmasked, so that a band with many impulses keeps enough blocks. A
// stripe adds the same offset to a and c (and to b and d), so whole-column
// stripes cancel in every coefficient and need no removal first. As there,
// exact zeros (flat or clipped regions) are left out, and a band with too
// few coefficients inside regions that vary (noise.Details,
// noise.Detectable) — constant, piecewise constant — has noise below
// detection. With fewer than 200 nonzero coefficients (impulse
// densities above about 0.6), it uses the vertical
// differences (y(r, x) − y(r′, x))/√2 of the nearest unmasked pixels
// r < r′ ≤ r + 2 of a column instead, by the same rule, which stripes
// cancel as well but which horizontal edges of the scene inflate somewhat.
// It returns 0 when nothing is left.
func estimateSigma(band []float64, mask []uint8, height, width int) float64 {
	coef, inside, present := haarDetails(nil, band, mask, height, width)
	if len(coef) < minHaar {
		coef, inside, present = verticalDetails(coef[:0], band, mask, height, width)
	}
	if !noise.Detectable(inside, present) {
		return 0
	}
	return Median(coef) / normalQuartile
}

// haarDetails appends to dst the absolute nonzero Haar diagonal details of
// every 2×2 position of a band whose four pixels are unmasked, and counts
// them as noise.Details does (see estimateSigma).
func haarDetails(dst, band []float64, mask []uint8, height, width int) (coef []float64, inside, present int) {
	rows, cols := height-1, width-1
	grid := make([]float64, rows*cols)
	for y := range rows {
		for x := range cols {
			i := y*width + x
			if mask[i]|mask[i+1]|mask[i+width]|mask[i+width+1] != 0 {
				grid[y*cols+x] = math.NaN()
				continue
			}
			grid[y*cols+x] = (band[i] - band[i+1] - band[i+width] + band[i+width+1]) / 2
		}
	}
	return noise.Details(dst, grid, rows, cols)
}

// verticalDetails appends to dst the absolute nonzero vertical differences
// of the nearest unmasked pixels of a band's columns (see estimateSigma),
// and counts them as noise.Details does.
func verticalDetails(dst, band []float64, mask []uint8, height, width int) (coef []float64, inside, present int) {
	grid := make([]float64, height*width)
	for y := range height {
		for x := range width {
			i, d := y*width+x, math.NaN()
			if mask[i] == 0 {
				for next := y + 1; next <= min(y+2, height-1); next++ {
					if j := next*width + x; mask[j] == 0 {
						d = (band[i] - band[j]) / math.Sqrt2
						break
					}
				}
			}
			grid[i] = d
		}
	}
	return noise.Details(dst, grid, height, width)
}

// detectStripes sets r.StripeOffsets: the offset of every column of the
// bands of c with at least 2 striped columns.
//
// Every unmasked pixel is compared with the median of the unmasked pixels
// of its line up to 3 columns away on either side: the residual holds the
// column's offset minus (mostly) nothing, since stripes are sparse and the
// median ignores the few striped neighbours, plus noise and the scene's
// horizontal detail. The median of a column's residuals is its offset
// estimate v(x). A stripe-free column has |v(x)| within a few standard
// errors se(x) = 1.2533 · 1.13 σ_b / √(pixels) (the median's efficiency
// times the residual's spread for a 6-pixel median). The scene moves v too,
// where a vertical edge runs down much of the column; that is allowed for
// twice: the threshold is 4.5 times the larger of se(x) and the robust
// spread of v over the band's columns (1.4826 times its median absolute
// value), and a column is not striped when the bands b ± 1 and b ± 2
// show its offset too (an edge is in every band, a stripe in one): a band
// shows it with the same sign at that column, at least half the size and
// beyond 3 of its own standard errors; two of them must, or one where
// fewer than two could show it, and one is enough in the first two and
// last two bands and the border columns (see sharedOffset). Then the
// offsets of the striped columns are estimated again against the nearest
// columns not found striped, so that a neighbouring stripe does not bias
// them.
func detectStripes(c *msi.Cube, r *Report) {
	if c.Width < 2*stripeReach+1 {
		return
	}
	n := c.Height * c.Width
	profiles := make([][]columnOffset, c.Bands)
	parallel.Each(c.Bands, func(b int) {
		profiles[b] = columnResiduals(c.Band(b), r.Mask[b*n:(b+1)*n], c.Height, c.Width, nil)
	})
	for b, striped := range stripedColumns(profiles, r.Sigma) {
		if striped == nil {
			continue
		}
		refined := columnResiduals(c.Band(b), r.Mask[b*n:(b+1)*n], c.Height, c.Width, striped)
		r.StripeOffsets[b] = stripeOffsets(refined, striped)
	}
}

// sharedOffset is how many of the bands b ± 1 and b ± 2 must show a
// column's offset in band b for stripedColumns to take it as the scene's,
// of those that could show it (fewer: all of them, and at least one),
// where band b has two bands on either side and the column's residuals
// their columns on either side (stripeReach); elsewhere one is enough.
//
// Why two: one is a stripe of its own as often as not. QRNN3D's stripes
// (cases 2 and 5) fall on about a tenth of the columns of a third of the
// bands, each band's drawn apart, so some stripes share their column and
// sign with a stripe a band or two away; with one band enough, Detect left
// those in the cube, 5 σ and more on the stabilised Poisson-Gaussian crop
// of 224 bands (docs/results.md). A scene's edge down a column shows in
// the bands near b that could show it. Two of those that could found up
// to 8 points more of the stripes beyond 6 standard errors of the balloons
// scene (512×512 and 128×128 at 31 bands, 256×256 at 31 and 224; cases 2
// and 5, three seeds), with at most two false columns more; two of any
// neighbours, whatever their noise or data, called edges stripes where
// the neighbours were noisier or dead.
//
// Why one at the ends: there the evidence is one-sided. An edge whose
// contrast fades with the wavelength shows, in a band with two bands on
// either side, in the two on the side it grows to; the first two bands
// lack one of those, and the band after the next may not show it;
// a border column's residuals are taken against columns on one side, so
// the scene's slope towards the border is an offset in every band, its
// size the band's. Two everywhere took such edges of the clean CAVE
// scenes for stripes, 9 to 15 columns on each of three full scenes, all
// in the first two or the last band or at the border columns.
const sharedOffset = 2

// stripedColumns decides, from every band's column offsets and σ, which
// columns are striped (see detectStripes): nil for a band with fewer than
// minStripes of them.
func stripedColumns(profiles [][]columnOffset, sigma []float64) [][]bool {
	standardError := func(b, x int) float64 {
		return 1.2533 * 1.13 * sigma[b] / math.Sqrt(float64(profiles[b][x].count))
	}
	out := make([][]bool, len(profiles))
	for b, profile := range profiles {
		if sigma[b] == 0 {
			continue // noise below detection: no σ to judge an offset by
		}
		var spread []float64
		for _, p := range profile {
			if !math.IsNaN(p.offset) {
				spread = append(spread, math.Abs(p.offset))
			}
		}
		if len(spread) < 2*minStripes {
			continue
		}
		textureSpread := 1.4826 * Median(spread)
		striped := make([]bool, len(profile))
		nStriped := 0
		for x, p := range profile {
			if math.IsNaN(p.offset) || !(math.Abs(p.offset) > stripeZ*max(standardError(b, x), textureSpread)) {
				continue
			}
			// agree: the bands that show the offset; able: those whose
			// noise and data would show it at half its size.
			agree, able, needed := 0, 0, 1
			if b >= 2 && b < len(profiles)-2 && x >= stripeReach && x < len(profile)-stripeReach {
				needed = sharedOffset
			}
			for bb := max(0, b-2); bb <= min(len(profiles)-1, b+2); bb++ {
				q := profiles[bb][x].offset
				if bb == b || math.IsNaN(q) {
					continue
				}
				if 0.5*math.Abs(p.offset) > 3*standardError(bb, x) {
					able++
				}
				if q*p.offset > 0 && math.Abs(q) >= 0.5*math.Abs(p.offset) && math.Abs(q) > 3*standardError(bb, x) {
					agree++
				}
			}
			if shared := agree > 0 && agree >= min(needed, able); !shared {
				striped[x] = true
				nStriped++
			}
		}
		if nStriped >= minStripes {
			out[b] = striped
		}
	}
	return out
}

// stripeOffsets returns the offsets of a band's striped columns from its
// refined profile, 0 elsewhere (and where a column has no residual).
func stripeOffsets(refined []columnOffset, striped []bool) []float64 {
	offsets := make([]float64, len(refined))
	for x, p := range refined {
		if striped[x] && !math.IsNaN(p.offset) {
			offsets[x] = p.offset
		}
	}
	return offsets
}

// columnOffset is a column's offset estimate and the number of residuals
// it is the median of (NaN and 0 for a column with none).
type columnOffset struct {
	offset float64
	count  int
}

// columnResiduals returns, for every column, the median over its unmasked
// pixels of the pixel minus the median of the unmasked pixels of its line
// up to stripeReach columns away on either side, leaving out the columns
// that exclude marks (nil: none) from the predictions.
func columnResiduals(band []float64, mask []uint8, height, width int, exclude []bool) []columnOffset {
	residuals := make([][]float64, width)
	eachColumnResidual(band, mask, height, width, exclude, func(x int, r float64) {
		residuals[x] = append(residuals[x], r)
	})
	out := make([]columnOffset, width)
	for x, r := range residuals {
		if len(r) == 0 {
			out[x] = columnOffset{math.NaN(), 0}
			continue
		}
		out[x] = columnOffset{Median(r), len(r)}
	}
	return out
}

// eachColumnResidual calls add(x, residual) for every unmasked pixel of a
// band, line by line, with the residual columnResiduals takes the median
// of: the pixel minus the median of the unmasked pixels of its line up to
// stripeReach columns away on either side, leaving out the columns that
// exclude marks (nil: none). Pixels with no such neighbour are skipped.
func eachColumnResidual(band []float64, mask []uint8, height, width int, exclude []bool, add func(x int, residual float64)) {
	near := make([]float64, 0, 2*stripeReach)
	for y := range height {
		line, lineMask := band[y*width:(y+1)*width], mask[y*width:(y+1)*width]
		for x := range width {
			if lineMask[x] != 0 {
				continue
			}
			if x >= stripeReach && x+stripeReach < width && usableAround(lineMask, exclude, x) {
				// Most pixels: their neighbours are the stripeReach
				// columns on each side, whose median is medianOfSix's.
				add(x, line[x]-medianOfSix(line[x-3], line[x-2], line[x-1], line[x+1], line[x+2], line[x+3]))
				continue
			}
			near = near[:0]
			// The nearest usable columns on each side, up to stripeReach
			// each, looking a little further when some are excluded.
			for _, step := range []int{-1, 1} {
				found := 0
				for xx := x + step; xx >= 0 && xx < width && found < stripeReach && abs(xx-x) <= 3*stripeReach; xx += step {
					if lineMask[xx] == 0 && (exclude == nil || !exclude[xx]) {
						near = append(near, line[xx])
						found++
					}
				}
			}
			if len(near) == 0 {
				continue
			}
			add(x, line[x]-Median(near))
		}
	}
}

// medianOfSix's neighbours are eachColumnResidual's when they are all
// usable: stripeReach on either side (a compile-time check).
var _ [0]struct{} = [2*stripeReach - 6]struct{}{}

// usableAround says whether the stripeReach columns on either side of
// column x of a line (its mask; exclude, nil for none, marks columns left
// out) are all unmasked and not excluded; they must lie inside the line.
func usableAround(lineMask []uint8, exclude []bool, x int) bool {
	for xx := x - stripeReach; xx <= x+stripeReach; xx++ {
		if xx != x && (lineMask[xx] != 0 || exclude != nil && exclude[xx]) {
			return false
		}
	}
	return true
}

// medianOfSix returns the median of six values, the mean of the third and
// fourth smallest, as Median does (whose insertion sort puts the same two
// values there), by a sorting network of 12 compare-exchanges in 5
// layers (Knuth, TAOCP vol. 3, §5.3.4). It is the stripe residual of
// almost every pixel, in every pass of the noise model over a cube, where
// the insertion sort's unpredictable branches made it the model's largest
// cost (BenchmarkFit512). The values must not be NaN.
func medianOfSix(a, b, c, d, e, f float64) float64 {
	a, f = min(a, f), max(a, f)
	b, d = min(b, d), max(b, d)
	c, e = min(c, e), max(c, e)

	b, c = min(b, c), max(b, c)
	d, e = min(d, e), max(d, e)

	a, d = min(a, d), max(a, d)
	c, f = min(c, f), max(c, f)

	// Of the fourth layer's (0,1), (2,3), (4,5) and the fifth's (1,2),
	// (3,4), what reaches the middle two.
	b = max(a, b)
	c, d = min(c, d), max(c, d)
	e = min(e, f)

	c, d = max(b, c), min(d, e)
	return (c + d) / 2
}

// detectOutliers marks as Impulse, and counts per band, the unmasked
// pixels that stand out from their neighbourhood in their own band but not
// in the nearest bands.
//
// For every pixel, the residual is how far its value lies outside the range
// of its unmasked 3×3 neighbours in its band (stripe offsets removed), or 0
// when that is less than the range itself: a pixel on an edge of the scene
// lies within the values around it, a pixel of a textured area not far
// beyond them, an impulse far beyond all of them. A Gaussian pixel exceeds the
// largest of its 8 neighbours by more than a few σ_b with a vanishing
// probability; the threshold is 8 σ_b. A thin bright or dark feature of the
// scene (a highlight, a line one pixel wide) exceeds it too in a band with
// little noise, but such a feature is in every band at the same place,
// while an impulse is in one: a pixel is an impulse only if its residual is
// also more than 3 times the largest absolute residual of the same pixel in
// the bands b ± 1 and b ± 2.
func detectOutliers(c *msi.Cube, r *Report) []int {
	n := c.Height * c.Width
	residual := make([]float64, len(c.Data))
	// Every band's residuals, then every band's marks, are its own: the
	// bands run in parallel (strips run this on every window of lines of
	// every pass, where it was a tenth of the CPU, serial).
	parallel.Each(c.Bands, func(b int) {
		band := c.Band(b)
		if offsets := r.StripeOffsets[b]; offsets != nil {
			band = withoutOffsets(band, offsets, c.Width)
		}
		outlierResiduals(residual[b*n:(b+1)*n], band, r.Mask[b*n:(b+1)*n], c.Height, c.Width)
	})
	found := make([]int, c.Bands)
	parallel.Each(c.Bands, func(b int) {
		limit := outlierZ * r.Sigma[b]
		if limit == 0 {
			return
		}
		res, mask := residual[b*n:(b+1)*n], r.Mask[b*n:(b+1)*n]
		for i, e := range res {
			if !(math.Abs(e) > limit) {
				continue
			}
			shared := 0.0
			for bb := max(0, b-2); bb <= min(c.Bands-1, b+2); bb++ {
				if other := residual[bb*n+i]; bb != b && !math.IsNaN(other) {
					shared = max(shared, math.Abs(other))
				}
			}
			if math.Abs(e) > outlierShare*shared {
				mask[i] |= Impulse
				found[b]++
			}
		}
	})
	return found
}

// withoutOffsets returns a copy of the band of lines of the given width
// with the stripe offset of every column subtracted.
func withoutOffsets(band, offsets []float64, width int) []float64 {
	out := make([]float64, len(band))
	for i, v := range band {
		out[i] = v - offsets[i%width]
	}
	return out
}

// outlierResiduals sets res, for a band of height×width values and its
// mask, to detectOutliers' residual of every pixel: NaN for a masked
// pixel or one with fewer than 3 unmasked 3×3 neighbours, else how far it
// lies outside the range [lo, hi] of those neighbours when that is more
// than the range, 0 otherwise (a NaN among the neighbours makes the range
// NaN and the residual 0).
//
// The min and max run over the neighbours as they are read, in raster
// order. Gathering them into a slice first and taking slices.Min and
// slices.Max of it, as this did at first, does the same operations in
// the same order, so gives the same values, in 1.6 to 1.8 times the time
// on a band of noise (BenchmarkOutlierResiduals); strips pay for this
// test in every window of lines of every pass over the cube.
func outlierResiduals(res, band []float64, mask []uint8, height, width int) {
	for y := range height {
		y0, y1 := max(0, y-1), min(height-1, y+1)
		for x := range width {
			i := y*width + x
			if mask[i] != 0 {
				res[i] = math.NaN()
				continue
			}
			x0, x1 := max(0, x-1), min(width-1, x+1)
			lo, hi := math.Inf(1), math.Inf(-1)
			count := 0
			for yy := y0; yy <= y1; yy++ {
				row := yy * width
				for j := row + x0; j <= row+x1; j++ {
					if j != i && mask[j] == 0 {
						lo, hi = min(lo, band[j]), max(hi, band[j])
						count++
					}
				}
			}
			if count < 3 {
				res[i] = math.NaN()
				continue
			}
			switch v := band[i]; {
			case v > hi && v-hi > hi-lo:
				res[i] = v - hi
			case v < lo && lo-v > hi-lo:
				res[i] = v - lo
			default:
				res[i] = 0
			}
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Median returns the median of v (the mean of the two middle values when
// len(v) is even), reordering v. It selects rather than sorts: linear time
// on average.
func Median(v []float64) float64 {
	k := len(v)
	if k <= 8 {
		// Insertion sort: the few-neighbour medians of the detectors.
		for i := 1; i < k; i++ {
			for j := i; j > 0 && v[j] < v[j-1]; j-- {
				v[j], v[j-1] = v[j-1], v[j]
			}
		}
	} else {
		nthElement(v, k/2)
		if k%2 == 0 {
			// The lower middle is the largest of the lower half.
			return (slices.Max(v[:k/2]) + v[k/2]) / 2
		}
		return v[k/2]
	}
	if k%2 == 1 {
		return v[k/2]
	}
	return (v[k/2-1] + v[k/2]) / 2
}

// nthElement reorders v so that v[n] is the value a sort would put there,
// with no larger value before it and no smaller one after it (Hoare's
// selection with a median-of-three pivot; deterministic).
func nthElement(v []float64, n int) {
	lo, hi := 0, len(v)-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		if v[mid] < v[lo] {
			v[mid], v[lo] = v[lo], v[mid]
		}
		if v[hi] < v[lo] {
			v[hi], v[lo] = v[lo], v[hi]
		}
		if v[hi] < v[mid] {
			v[hi], v[mid] = v[mid], v[hi]
		}
		pivot := v[mid]
		i, j := lo, hi
		for i <= j {
			for v[i] < pivot {
				i++
			}
			for v[j] > pivot {
				j--
			}
			if i <= j {
				v[i], v[j] = v[j], v[i]
				i++
				j--
			}
		}
		switch {
		case n <= j:
			hi = j
		case n >= i:
			lo = i
		default:
			return
		}
	}
}
