// Package repair removes the sparse part of the noise of a cube and then
// its Gaussian part, given what package sparsenoise found.
//
// Model. y = x + n + s on the [0, 255] scale: x the clean scene, n
// Gaussian with a standard deviation σ_b per band b, and s sparse: a
// constant offset u_b(c) added to whole columns c of striped bands, and
// impulse and dead pixels whose value says nothing about x. The detector's
// Report gives σ_b, a mask of the impulse and dead pixels and a first
// estimate of u.
//
// Algorithm. Stripes are an additive offset, so they are subtracted;
// impulse and dead pixels carry no information, so they are treated as
// missing and filled:
//
//  1. z = y − u, with u the detector's offsets; every impulse or dead
//     pixel of z is filled with the median of the unmasked pixels of its
//     band in the smallest square window (radius 1, 2, …) that holds at
//     least fillMinimum of them (a dead column takes its value from the
//     columns beside it, an impulse of a dense band from the few live
//     neighbours); then every missing voxel (no data, which may cover
//     large regions) is filled with the mirror image of the data beside
//     it (fillMissing).
//  2. x̂ = whitened Gaussian denoising of z: every band scaled to the
//     median σ_b, the denoiser run at that level, the bands scaled back
//     (package bandwhiten).
//  3. Alternation (Options.Passes − 1 times): the stripe offsets are
//     estimated again from the residual y − x̂, where each column's mean
//     over its unmasked pixels has standard error σ_b/√H, far below the
//     noisy cube's own spread, so that stripes the detector missed or
//     mis-sized are caught (see reestimateStripes); the masked pixels of z
//     are set to x̂ (a far better guess than their neighbours' median);
//     and z is denoised again. When z comes out unchanged (a cube without
//     sparse noise), the passes left are skipped (they would return x̂
//     again), all but the last when x̂ came from the draft method.
//
// The removed component is ŝ = u on every pixel of a striped column and
// y − x̂ on every masked pixel; elsewhere 0.
//
// The denoiser is passed in, so that any Gaussian method can run inside;
// everything here is deterministic (what runs in parallel is a band's
// own), and linear in the number of voxels besides the denoiser.
package repair

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/stages/bandwhiten"
	"tdsc/internal/stages/sparsenoise"
)

// Method is a denoiser for i.i.d. Gaussian noise of standard deviation
// sigma on the [0, 255] scale (as bandwhiten.Method).
type Method = bandwhiten.Method

// Options are the settings of Remove; the zero value is the default.
type Options struct {
	// Passes is the number of denoising passes (0: DefaultPasses); every
	// pass after the first starts from the stripe offsets re-estimated on
	// the last pass's residual and from its values on the masked pixels.
	Passes int
	// Draft, if not nil, denoises every pass but the last (a cheaper
	// method is enough to re-estimate the stripes and the fill).
	Draft Method
	// KeepStripes leaves stripes alone: no offset is subtracted, none is
	// re-estimated.
	KeepStripes bool
	// KeepMasked leaves the impulse and dead pixels in the cube as they
	// are instead of filling them (missing voxels are filled all the
	// same: they have no value to keep).
	KeepMasked bool
	// NoReestimate keeps the detector's stripe offsets through every pass.
	NoReestimate bool
	// NoWhiten runs the denoiser at the median σ_b on the unscaled cube.
	NoWhiten bool
	// Pivots, if not nil, are the values the whitening scales the bands
	// around (bandwhiten.Options.Pivots; nil: each band's mean in the
	// cube denoised).
	Pivots []float64
}

// DefaultPasses is the default Options.Passes.
const DefaultPasses = 2

const (
	// fillMinimum is the fewest unmasked pixels a fill window must hold.
	fillMinimum = 3
	// stripeZ is how many standard errors σ_b/√n a column's mean residual
	// must lie from 0 to be taken as a stripe in a band the detector did
	// not call striped; bandStripeZ is the same in a band it did call
	// striped (where a stripe is likelier and a missed one costs more).
	stripeZ     = 4.5
	bandStripeZ = 3
)

// Result is what Remove returns.
type Result struct {
	// Estimate is the estimate of the clean cube x.
	Estimate *msi.Cube
	// Sparse is the removed sparse component ŝ (see the package comment).
	Sparse *msi.Cube
	// Mask is the detector's mask: the pixels treated as missing.
	Mask []uint8
	// StripeOffsets[b] is nil for a band without stripes, else the final
	// offset of every column of band b.
	StripeOffsets [][]float64
}

// ErrAllMasked is returned when every pixel of the cube is masked: there
// is nothing to estimate the scene from.
var ErrAllMasked = errors.New("repair: every pixel is missing, an impulse or dead: nothing is left to estimate the scene from")

// Remove estimates x from noisy with the sparse noise det found in it
// (det must be sparsenoise.Detect's report of noisy) and the Gaussian
// denoiser denoise (see the package comment). It returns ErrAllMasked when
// every pixel is masked, an error when every band's σ is 0, and the
// denoiser's error, if any.
func Remove(ctx context.Context, noisy *msi.Cube, det *sparsenoise.Report, denoise Method, o Options) (*Result, error) {
	p, x, err := firstPasses(ctx, noisy, det, denoise, o)
	if err != nil {
		return nil, err
	}
	if x == nil {
		if x, err = LastPass(ctx, p.Next, det.Sigma, denoise, o); err != nil {
			return nil, err
		}
	}
	return &Result{Estimate: x, Sparse: sparsePart(noisy, x, p.Mask, p.Offsets), Mask: p.Mask, StripeOffsets: p.Offsets}, nil
}

// Pending is what the passes of Remove before its last leave for the
// last: the cube it denoises (before any whitening: the stripe offsets
// estimated again subtracted, the masked pixels at the pass before's
// estimate), the mask of the pixels treated as missing and the stripe
// offsets subtracted.
type Pending struct {
	Next    *msi.Cube
	Mask    []uint8
	Offsets [][]float64
}

// FirstPasses runs the passes of Remove before its last (none when
// o.Passes is 1) and returns what they leave for the last, which
// LastPass runs; its errors are Remove's. It needs o.Draft when there is
// more than one pass: without a draft, a pass that leaves the cube as it
// was ends the repair with its own estimate (Remove), and there is no
// last pass to leave.
//
// Why apart: a cube denoised in strips may run every strip's first
// passes, then learn what the last pass shares from the whole cube they
// leave, as a run on the whole cube learns it from its own, and then
// every strip's last pass.
func FirstPasses(ctx context.Context, noisy *msi.Cube, det *sparsenoise.Report, denoise Method, o Options) (*Pending, error) {
	if o.passes() > 1 && o.Draft == nil {
		return nil, errors.New("repair: the first passes alone need a draft method")
	}
	p, _, err := firstPasses(ctx, noisy, det, denoise, o)
	return p, err
}

// passes returns the number of passes o asks for.
func (o Options) passes() int {
	if o.Passes == 0 {
		return DefaultPasses
	}
	return o.Passes
}

// LastPass returns the estimate of the last pass of Remove from the cube
// next it denoises (Pending.Next), as every pass runs (runPass).
func LastPass(ctx context.Context, next *msi.Cube, sigmas []float64, denoise Method, o Options) (*msi.Cube, error) {
	return runPass(ctx, next, sigmas, denoise, o)
}

// runPass returns a pass's estimate of z: method run on z whitened by the
// bands' σ sigmas, or unwhitened at their median with o.NoWhiten.
func runPass(ctx context.Context, z *msi.Cube, sigmas []float64, method Method, o Options) (*msi.Cube, error) {
	if o.NoWhiten {
		return method(ctx, z, bandwhiten.Reference(sigmas, bandwhiten.ReferenceMedian))
	}
	return bandwhiten.Denoise(ctx, method, z, sigmas, bandwhiten.Options{Pivots: o.Pivots})
}

// firstPasses checks Remove's arguments, prepares the cube and runs the
// passes before the last, and returns what they leave; x is not nil when
// a pass that was not a draft left the cube as it was: its estimate x is
// then final (another pass would return it again).
func firstPasses(ctx context.Context, noisy *msi.Cube, det *sparsenoise.Report, denoise Method, o Options) (*Pending, *msi.Cube, error) {
	if err := check(noisy, det, o.passes()); err != nil {
		return nil, nil, err
	}
	z, mask, offsets, err := prepare(noisy, det, o)
	if err != nil {
		return nil, nil, err
	}
	sigmas := det.Sigma
	for range o.passes() - 1 {
		method := denoise
		if o.Draft != nil {
			method = o.Draft
		}
		x, err := runPass(ctx, z, sigmas, method, o)
		if err != nil {
			return nil, nil, err
		}
		if !o.KeepStripes && !o.NoReestimate {
			offsets = reestimateStripes(noisy, x, mask, sigmas, offsets)
		}
		next := SubtractStripes(noisy, offsets)
		for i, m := range mask {
			if m != 0 {
				next.Data[i] = x.Data[i]
			}
		}
		if slices.Equal(next.Data, z.Data) {
			// Nothing to repair: another pass would return x again, so
			// only the last is left to run, if this was a draft.
			if o.Draft == nil {
				return &Pending{Next: z, Mask: mask, Offsets: offsets}, x, nil
			}
			break
		}
		z = next
	}
	return &Pending{Next: z, Mask: mask, Offsets: offsets}, nil, nil
}

// check returns Remove's error for its arguments, if any.
func check(noisy *msi.Cube, det *sparsenoise.Report, passes int) error {
	if det.Height != noisy.Height || det.Width != noisy.Width || det.Bands != noisy.Bands {
		return fmt.Errorf("repair: the noise report is of a %d×%d×%d cube, the cube is %s", det.Height, det.Width, det.Bands, noisy.Size())
	}
	if passes < 1 {
		return fmt.Errorf("repair: passes must be at least 1, got %d", passes)
	}
	if !slices.ContainsFunc(det.Mask, func(m uint8) bool { return m == 0 }) {
		return ErrAllMasked
	}
	if !slices.ContainsFunc(det.Sigma, func(s float64) bool { return s > 0 }) {
		return errors.New("repair: no band has Gaussian noise (every σ is 0): nothing to denoise")
	}
	return nil
}

// Prepare returns the cube the first pass of Remove denoises (before any
// whitening): noisy with the stripe offsets det found subtracted and its
// impulse, dead and missing voxels filled, as o says, and the mask of the
// voxels treated as missing (nonzero: filled; the later passes set them
// to the pass before's estimate). det must be sparsenoise.Detect's report
// of noisy (or DetectWith's). It returns ErrAllMasked when no band has a
// pixel left to fill from.
func Prepare(noisy *msi.Cube, det *sparsenoise.Report, o Options) (*msi.Cube, []uint8, error) {
	z, mask, _, err := prepare(noisy, det, o)
	return z, mask, err
}

// prepare is Prepare, which also returns the mask of the pixels treated
// as missing and the stripe offsets subtracted.
func prepare(noisy *msi.Cube, det *sparsenoise.Report, o Options) (z *msi.Cube, mask []uint8, offsets [][]float64, err error) {
	mask = det.Mask
	if o.KeepMasked {
		mask = make([]uint8, len(det.Mask))
		for i, m := range det.Mask {
			mask[i] = m & sparsenoise.Missing
		}
	}
	offsets = make([][]float64, noisy.Bands)
	if !o.KeepStripes {
		for b, u := range det.StripeOffsets {
			offsets[b] = slices.Clone(u)
		}
	}
	z = SubtractStripes(noisy, offsets)
	if !o.KeepMasked {
		if err := fill(z, mask); err != nil {
			return nil, nil, nil, err
		}
	}
	fillMissing(z, mask)
	return z, mask, offsets, nil
}

// SubtractStripes returns y with offsets[b][c] subtracted from column c of
// band b (nil offsets: none).
func SubtractStripes(y *msi.Cube, offsets [][]float64) *msi.Cube {
	z := y.Clone()
	for b, u := range offsets {
		if u == nil {
			continue
		}
		band := z.Band(b)
		for i := range band {
			band[i] -= u[i%y.Width]
		}
	}
	return z
}

// sparsePart returns ŝ: the offsets on their columns, y − x̂ on the masked
// pixels.
func sparsePart(y, x *msi.Cube, mask []uint8, offsets [][]float64) *msi.Cube {
	s := msi.NewCube(y.Height, y.Width, y.Bands)
	for b, u := range offsets {
		if u == nil {
			continue
		}
		band := s.Band(b)
		for i := range band {
			band[i] = u[i%y.Width]
		}
	}
	for i, m := range mask {
		if m != 0 {
			s.Data[i] = y.Data[i] - x.Data[i]
		}
	}
	return s
}

// fill sets every impulse or dead pixel of c to the median of the
// unmasked pixels of its band in the smallest square window around it, of
// radius 1, 2, …, that holds at least fillMinimum of them (or all of the
// band's, if fewer). A band with no unmasked pixel takes the filled values
// of the nearest band that has some (the lower one on a tie), missing
// voxels aside. It returns ErrAllMasked when no band has an unmasked
// pixel. Missing voxels are left to fillMissing.
func fill(c *msi.Cube, mask []uint8) error {
	n := c.Height * c.Width
	live := make([]int, c.Bands)
	for b := range c.Bands {
		for _, m := range mask[b*n : (b+1)*n] {
			if m == 0 {
				live[b]++
			}
		}
	}
	if !slices.ContainsFunc(live, func(k int) bool { return k > 0 }) {
		return ErrAllMasked
	}
	// Every band with live pixels is filled from its own: the bands run
	// in parallel (strips fill every window of lines of every pass).
	parallel.Each(c.Bands, func(b int) {
		if live[b] == 0 {
			return
		}
		near := make([]float64, 0, 64)
		band, bandMask := c.Band(b), mask[b*n:(b+1)*n]
		want := min(fillMinimum, live[b])
		for y := range c.Height {
			for x := range c.Width {
				if m := bandMask[y*c.Width+x]; m == 0 || m == sparsenoise.Missing {
					continue
				}
				for r := 1; ; r++ {
					near = near[:0]
					for yy := max(0, y-r); yy <= min(c.Height-1, y+r); yy++ {
						for xx := max(0, x-r); xx <= min(c.Width-1, x+r); xx++ {
							if j := yy*c.Width + xx; bandMask[j] == 0 {
								near = append(near, band[j])
							}
						}
					}
					if len(near) >= want {
						break
					}
				}
				band[y*c.Width+x] = sparsenoise.Median(near)
			}
		}
	})
	for b := range c.Bands {
		if live[b] == 0 {
			copyLive(c, mask, b, nearestBand(b, c.Bands, func(s int) bool { return live[s] > 0 }))
		}
	}
	return nil
}

// nearestBand returns the band nearest b, of bands bands, for which has
// holds (the lower one on a tie), or -1 when there is none.
func nearestBand(b, bands int, has func(int) bool) int {
	for d := 1; d < bands; d++ {
		if src := b - d; src >= 0 && has(src) {
			return src
		}
		if src := b + d; src < bands && has(src) {
			return src
		}
	}
	return -1
}

// copyLive copies band src of c into band dst where dst is not missing.
func copyLive(c *msi.Cube, mask []uint8, dst, src int) {
	n := c.Height * c.Width
	to, from, m := c.Band(dst), c.Band(src), mask[dst*n:(dst+1)*n]
	for i := range to {
		if m[i]&sparsenoise.Missing == 0 {
			to[i] = from[i]
		}
	}
}

// FillMissing returns c with its missing (NaN) voxels filled as Remove
// fills them (fillMissing), and which voxels were missing; c itself and
// nil when none is. It returns ErrAllMasked when every voxel is missing.
func FillMissing(c *msi.Cube) (*msi.Cube, []bool, error) {
	switch c.Missing() {
	case 0:
		return c, nil, nil // nothing allocated: strips of a cube without missing voxels
	case len(c.Data):
		return nil, nil, ErrAllMasked
	}
	mask := make([]uint8, len(c.Data))
	missing := make([]bool, len(c.Data))
	for i, v := range c.Data {
		if math.IsNaN(v) {
			mask[i], missing[i] = sparsenoise.Missing, true
		}
	}
	filled := c.Clone()
	fillMissing(filled, mask)
	return filled, missing, nil
}

// fillMissing sets every voxel of c marked Missing in mask to the value
// of its mirror image across the nearest voxel of the band that is not
// missing: p becomes the value at 2q − p, q the nearest known voxel (as
// a breadth-first search over 8-neighbours finds it, ties to the lower
// index), or the value at q itself where 2q − p is outside the band or
// missing too. A missing region so takes the texture and the noise of
// the data beside it, as symmetric padding does at an image's border:
// filled with smooth values instead (each voxel the mean of its known
// neighbours, ring by ring), a 10-column no-data edge of the balloons
// crop made the nonlocal method 10 % worse in RMSE in columns far from
// it, its pilot and groups learning the smooth streaks; mirrored, 0.6 %.
// It takes time linear in the band's size however large the region
// (where the window median of fill would search ever wider windows). A
// band whose every voxel is missing takes the filled values of the
// nearest band that has data (the lower one on a tie). Voxels not marked
// Missing are not changed; a cube without any data is left as it is.
func fillMissing(c *msi.Cube, mask []uint8) {
	n := c.Height * c.Width
	empty := make([]bool, c.Bands)
	source := make([]int32, n)
	for b := range c.Bands {
		empty[b] = !mirrorBand(c.Band(b), mask[b*n:(b+1)*n], c.Height, c.Width, source)
	}
	for b := range c.Bands {
		if !empty[b] {
			continue
		}
		if src := nearestBand(b, c.Bands, func(s int) bool { return !empty[s] }); src >= 0 {
			copy(c.Band(b), c.Band(src))
		}
	}
}

// mirrorBand fills the Missing voxels of a height×width band by their
// mirror images (see fillMissing), with source as scratch for the nearest
// known voxel of every voxel, and reports whether the band has any known
// voxel.
func mirrorBand(band []float64, mask []uint8, height, width int, source []int32) bool {
	missing := func(i int) bool { return mask[i]&sparsenoise.Missing != 0 }
	// Breadth-first search from every known voxel at once, ring by ring
	// in index order: source[i] is the known voxel nearest i.
	var ring []int
	for i := range band {
		source[i] = -1
		if !missing(i) {
			source[i] = int32(i)
		}
	}
	for i := range band {
		if missing(i) && hasSource(source, i, height, width) {
			ring = append(ring, i)
			source[i] = -2 // queued
		}
	}
	if len(ring) == 0 {
		return slices.ContainsFunc(source, func(s int32) bool { return s >= 0 })
	}
	for len(ring) > 0 {
		for _, i := range ring {
			source[i] = nearestSource(source, i, height, width)
		}
		var next []int
		for _, i := range ring {
			y, x := i/width, i%width
			for yy := max(0, y-1); yy <= min(height-1, y+1); yy++ {
				for xx := max(0, x-1); xx <= min(width-1, x+1); xx++ {
					if j := yy*width + xx; source[j] == -1 {
						source[j] = -2
						next = append(next, j)
					}
				}
			}
		}
		slices.Sort(next)
		ring = next
	}
	for i := range band {
		if !missing(i) {
			continue
		}
		q := int(source[i])
		y, x, qy, qx := i/width, i%width, q/width, q%width
		band[i] = band[q]
		if ry, rx := 2*qy-y, 2*qx-x; ry >= 0 && ry < height && rx >= 0 && rx < width && !missing(ry*width+rx) {
			band[i] = band[ry*width+rx]
		}
	}
	return true
}

// hasSource reports whether voxel i of a height×width band has a
// neighbour whose nearest known voxel is found (source ≥ 0).
func hasSource(source []int32, i, height, width int) bool {
	return nearestSource(source, i, height, width) >= 0
}

// nearestSource returns, of the nearest known voxels of the 8 neighbours
// of voxel i that have one, the one nearest i (the lower index on a tie),
// or -1.
func nearestSource(source []int32, i, height, width int) int32 {
	y, x := i/width, i%width
	best, bestDist := int32(-1), 0
	for yy := max(0, y-1); yy <= min(height-1, y+1); yy++ {
		for xx := max(0, x-1); xx <= min(width-1, x+1); xx++ {
			s := source[yy*width+xx]
			if yy*width+xx == i || s < 0 {
				continue
			}
			dy, dx := int(s)/width-y, int(s)%width-x
			if d := dy*dy + dx*dx; best < 0 || d < bestDist || d == bestDist && s < best {
				best, bestDist = s, d
			}
		}
	}
	return best
}

// reestimateStripes returns the stripe offsets read off the residual
// y − x̂: for every column c of band b, the mean m of the residual over
// its n unmasked pixels, whose standard error is σ_b/√n when the column
// holds no stripe (and x̂ is close to x). The offset of a column is m when
// it was striped before (the residual is the better estimate), or when
// |m| exceeds stripeZ standard errors (bandStripeZ in a band already
// striped); otherwise 0. A band with no offset left gets nil.
func reestimateStripes(y, x *msi.Cube, mask []uint8, sigma []float64, old [][]float64) [][]float64 {
	n := y.Height * y.Width
	out := make([][]float64, y.Bands)
	sum := make([]float64, y.Width)
	count := make([]int, y.Width)
	for b := range y.Bands {
		clear(sum)
		clear(count)
		yb, xb, mb := y.Band(b), x.Band(b), mask[b*n:(b+1)*n]
		for i, m := range mb {
			if m == 0 {
				sum[i%y.Width] += yb[i] - xb[i]
				count[i%y.Width]++
			}
		}
		z := stripeZ
		if old[b] != nil {
			z = bandStripeZ
		}
		offsets := make([]float64, y.Width)
		found := false
		for c := range y.Width {
			if count[c] == 0 {
				continue
			}
			mean := sum[c] / float64(count[c])
			wasStriped := old[b] != nil && old[b][c] != 0
			if wasStriped || math.Abs(mean) > z*sigma[b]/math.Sqrt(float64(count[c])) {
				offsets[c] = mean
				found = true
			}
		}
		if found {
			out[b] = offsets
		}
	}
	return out
}
