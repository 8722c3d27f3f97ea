package repair

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/stages/bandwhiten"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/testenv/cubetest"
)

// smoothCube returns a cube whose band b is the plane 40 + 2y + 3x + 5b.
func smoothCube(height, width, bands int) *msi.Cube {
	c := msi.NewCube(height, width, bands)
	for b := range bands {
		for y := range height {
			for x := range width {
				c.Set(y, x, b, 40+2*float64(y)+3*float64(x)+5*float64(b))
			}
		}
	}
	return c
}

// TestFillRestoresSmoothCube punches scattered holes, a dead column and a
// whole band into a smooth cube: every filled pixel must come back within
// the slope of a window radius or two, the unmasked ones untouched, and the
// empty band must take its nearest band's values.
func TestFillRestoresSmoothCube(t *testing.T) {
	const h, w, bands = 30, 40, 4
	clean := smoothCube(h, w, bands)
	c := clean.Clone()
	mask := make([]uint8, len(c.Data))
	rng := rand.New(rand.NewPCG(1, 2))
	n := h * w
	for i := range n {
		if rng.Float64() < 0.5 { // band 0: half the pixels are impulses
			mask[i] = sparsenoise.Impulse
		}
	}
	for y := range h { // band 1: a dead column
		mask[n+y*w+17] = sparsenoise.Dead
	}
	for i := 3 * n; i < 4*n; i++ { // band 3: nothing left
		mask[i] = sparsenoise.Dead
	}
	for i, m := range mask {
		if m != 0 {
			c.Data[i] = 255
		}
	}
	if err := fill(c, mask); err != nil {
		t.Fatal(err)
	}
	for b := range 3 {
		for i := range n {
			k := b*n + i
			got, want := c.Data[k], clean.Data[k]
			if mask[k] == 0 && got != want {
				t.Fatalf("band %d pixel %d: unmasked value changed from %g to %g", b, i, want, got)
			}
			// A window of radius r centred on the pixel misses a plane's
			// value by at most the slope sum (2 + 3)·r; the holes make r
			// 1 or 2.
			if math.Abs(got-want) > 10 {
				t.Errorf("band %d pixel (%d, %d): filled %g, clean %g", b, i/w, i%w, got, want)
			}
		}
	}
	// The dead column lies between two live ones: its fill is exact away
	// from the top and bottom rows (where the window is lopsided).
	for y := 1; y < h-1; y++ {
		if got, want := c.At(y, 17, 1), clean.At(y, 17, 1); got != want {
			t.Errorf("dead column row %d: filled %g, clean %g", y, got, want)
		}
	}
	if !slices.Equal(c.Band(3), c.Band(2)) {
		t.Error("the band with no unmasked pixel did not take its nearest band's values")
	}
}

// TestReestimateStripesFindsSyntheticOffsets adds known offsets to some
// columns of a noisy cube and reads them back off the residual against the
// clean cube (a perfect denoiser): every offset beyond 6 standard errors is
// found, each within 4 standard errors, columns and bands without stripes
// stay at 0, and the detector's columns keep an offset.
func TestReestimateStripesFindsSyntheticOffsets(t *testing.T) {
	const h, w, bands = 100, 80, 6
	sigma := []float64{30, 10, 50, 10, 30, 70}
	clean := smoothCube(h, w, bands)
	y := clean.Clone()
	rng := rand.New(rand.NewPCG(3, 4))
	for b := range bands {
		band := y.Band(b)
		for i := range band {
			band[i] += sigma[b] * rng.NormFloat64()
		}
	}
	truth := make([][]float64, bands)
	for _, b := range []int{1, 3, 4} {
		truth[b] = make([]float64, w)
		for x := range w {
			if rng.Float64() < 0.15 {
				truth[b][x] = (2*rng.Float64() - 1) * 63.75
			}
		}
		band := y.Band(b)
		for i := range band {
			band[i] += truth[b][i%w]
		}
	}
	// The detector found band 3 with one of its columns only, and a false
	// column in band 5.
	old := make([][]float64, bands)
	old[3] = make([]float64, w)
	first := slices.IndexFunc(truth[3], func(u float64) bool { return u != 0 })
	old[3][first] = 1
	old[5] = make([]float64, w)
	old[5][7] = 1
	mask := make([]uint8, len(y.Data))
	got := reestimateStripes(y, clean, mask, sigma, old)
	sumSq, found := 0.0, 0 // of the error of the found offsets, in standard errors
	for b := range bands {
		se := sigma[b] / math.Sqrt(h)
		for x := range w {
			var est, want float64
			if got[b] != nil {
				est = got[b][x]
			}
			if truth[b] != nil {
				want = truth[b][x]
			}
			switch {
			case want == 0 && est != 0 && !(b == 5 && x == 7):
				t.Errorf("band %d column %d: false stripe %.2f", b, x, est)
			case math.Abs(want) > 6*se && math.Abs(est-want) > 4*se:
				t.Errorf("band %d column %d: offset %.2f, true %.2f (standard error %.2f)", b, x, est, want, se)
			}
			if want != 0 && est != 0 {
				sumSq += (est - want) * (est - want) / (se * se)
				found++
			}
		}
	}
	// The mean of H residuals has an error of one standard error.
	if rms := math.Sqrt(sumSq / float64(found)); rms > 1.5 {
		t.Errorf("the found offsets are off by %.2f standard errors (RMS)", rms)
	}
	if got[5] == nil || got[5][7] == 0 {
		t.Error("the detector's column lost its offset")
	}
	for _, b := range []int{0, 2} {
		if got[b] != nil {
			t.Errorf("band %d has no stripes but got offsets", b)
		}
	}
}

// TestRemoveAllCorrupt: a cube whose every pixel the report masks as
// impulse or dead gets ErrAllMasked, and so does an all-zero cube, whose
// one value Detect finds stuck everywhere; never a NaN.
func TestRemoveAllCorrupt(t *testing.T) {
	const h, w, bands = 24, 24, 5
	c := msi.NewCube(h, w, bands)
	for _, bit := range []uint8{sparsenoise.Impulse, sparsenoise.Dead} {
		all := &sparsenoise.Report{Height: h, Width: w, Bands: bands, Sigma: []float64{10, 10, 10, 10, 10},
			Mask: slices.Repeat([]uint8{bit}, len(c.Data)), StripeOffsets: make([][]float64, bands)}
		if _, err := Remove(context.Background(), c, all, boxBlur, Options{}); !errors.Is(err, ErrAllMasked) {
			t.Errorf("mask all %d: got %v, want ErrAllMasked", bit, err)
		}
	}
	if _, err := Remove(context.Background(), c, sparsenoise.Detect(c), boxBlur, Options{}); !errors.Is(err, ErrAllMasked) {
		t.Errorf("all-zero cube: got %v, want ErrAllMasked", err)
	}
}

// boxBlur is a stand-in denoiser: the mean of every pixel's 3×3
// neighbourhood in its band.
func boxBlur(_ context.Context, c *msi.Cube, _ float64) (*msi.Cube, error) {
	out := msi.NewCube(c.Height, c.Width, c.Bands)
	for b := range c.Bands {
		for y := range c.Height {
			for x := range c.Width {
				s, k := 0.0, 0
				for yy := max(0, y-1); yy <= min(c.Height-1, y+1); yy++ {
					for xx := max(0, x-1); xx <= min(c.Width-1, x+1); xx++ {
						s += c.At(yy, xx, b)
						k++
					}
				}
				out.Set(y, x, b, s/float64(k))
			}
		}
	}
	return out, nil
}

// TestRemoveSparsePart checks the removed component: the final offsets on
// their columns, y − x̂ on the masked pixels, 0 elsewhere; and the estimate
// of a cube with stripes and impulses is far closer to the clean cube than
// the same denoiser's without the repair.
func TestRemoveSparsePart(t *testing.T) {
	clean := smoothCube(48, 48, 6)
	noisy, _, err := noise.SimulateCase(nil, clean, noise.CaseMixture, 2)
	if err != nil {
		t.Fatal(err)
	}
	det := sparsenoise.Detect(noisy)
	r, err := Remove(context.Background(), noisy, det, boxBlur, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := noisy.Height * noisy.Width
	for i, s := range r.Sparse.Data {
		want := 0.0
		if u := r.StripeOffsets[i/n]; u != nil {
			want = u[i%noisy.Width]
		}
		if r.Mask[i] != 0 {
			want = noisy.Data[i] - r.Estimate.Data[i]
		}
		if s != want {
			t.Fatalf("voxel %d: removed %g, want %g", i, s, want)
		}
	}
	plain, _ := boxBlur(context.Background(), noisy, 0)
	if e, p := cubetest.RMSE(clean, r.Estimate), cubetest.RMSE(clean, plain); !(e < 0.7*p) {
		t.Errorf("RMSE with the repair %.2f, without %.2f: want less than 70 %%", e, p)
	}
}

// TestRemoveOnePassSubtractsAndFills runs one pass with a denoiser that
// returns its input: the estimate must be the noisy cube minus the
// detector's offsets, with the masked pixels filled, and the denoiser must
// see every band whitened to one level.
func TestRemoveOnePassSubtractsAndFills(t *testing.T) {
	clean := smoothCube(48, 48, 6)
	noisy, _, err := noise.SimulateCase(nil, clean, noise.CaseMixture, 2)
	if err != nil {
		t.Fatal(err)
	}
	det := sparsenoise.Detect(noisy)
	if len(det.StripedBands()) == 0 || len(det.DeadBands())+len(det.ImpulseBands()) == 0 {
		t.Fatalf("the test cube needs stripes and masked pixels; the detector found:\n%s", det.Summary())
	}
	identity := func(_ context.Context, c *msi.Cube, _ float64) (*msi.Cube, error) { return c.Clone(), nil }
	r, err := Remove(context.Background(), noisy, det, identity, Options{Passes: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := SubtractStripes(noisy, det.StripeOffsets)
	if err := fill(want, det.Mask); err != nil {
		t.Fatal(err)
	}
	for i, v := range r.Estimate.Data {
		if math.Abs(v-want.Data[i]) > 1e-9 {
			t.Fatalf("voxel %d: estimate %g, want %g", i, v, want.Data[i])
		}
	}
}

// TestFillMissing: missing voxels (NaN) of a smooth cube, a large block
// and a whole band, are filled from the data around them: a voxel on the
// block's border takes the value of its mirror image across its nearest
// known voxel (on a plane, within twice the step to it), the voxels inside
// values of the data, the empty band its nearest band's, and no other
// voxel changes. A cube without missing voxels is
// returned as it is, one with nothing else is ErrAllMasked.
func TestFillMissing(t *testing.T) {
	c := smoothCube(60, 50, 3)
	in := c.Clone()
	for y := 10; y < 50; y++ {
		for x := range 30 {
			in.Set(y, x, 0, math.NaN())
		}
	}
	for i := range in.Band(2) {
		in.Band(2)[i] = math.NaN()
	}
	filled, missing, err := FillMissing(in)
	if err != nil {
		t.Fatal(err)
	}
	known := map[float64]bool{}
	for _, v := range in.Band(0) {
		known[v] = v == v
	}
	for i, v := range filled.Data {
		b, y, x := i/(60*50), i/50%60, i%50
		switch {
		case missing[i] != math.IsNaN(in.Data[i]):
			t.Fatalf("voxel %d: missing %v, value %v", i, missing[i], in.Data[i])
		case !missing[i] && v != in.Data[i]:
			t.Fatalf("voxel %d was not missing but changed from %v to %v", i, in.Data[i], v)
		case b == 2 && v != filled.Band(1)[i%(60*50)]:
			t.Fatalf("empty band, voxel %d: %v, band 1 has %v", i, v, filled.Band(1)[i%(60*50)])
		case b == 0 && missing[i] && x == 29 && y > 10 && y < 49 && v != c.At(y, 31, 0):
			t.Fatalf("border voxel (%d, 29): %v, want its mirror image across column 30, %v", y, v, c.At(y, 31, 0))
		case b == 0 && missing[i] && (x == 29 || y == 10 || y == 49) && math.Abs(v-c.Data[i]) > 2*(2+3):
			t.Fatalf("border voxel (%d, %d): %v, want near %v", y, x, v, c.Data[i])
		case b == 0 && missing[i] && !known[v]:
			t.Fatalf("voxel (%d, %d): %v is no value of the band's data", y, x, v)
		}
	}
	same, none, err := FillMissing(c)
	if same != c || none != nil || err != nil {
		t.Errorf("a cube without missing voxels: %p (%p), %v, %v", same, c, none, err)
	}
	for i := range in.Data {
		in.Data[i] = math.NaN()
	}
	if _, _, err := FillMissing(in); !errors.Is(err, ErrAllMasked) {
		t.Errorf("all missing: %v", err)
	}
}

// TestFillMissingLinear: a missing region of a million voxels, which the
// window median of fill would search ever wider windows for, is filled in
// time linear in its size (well under a second here).
func TestFillMissingLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 1100×1000 band")
	}
	c := smoothCube(1100, 1000, 1)
	for i := range c.Data[:1000*1000] {
		c.Data[i] = math.NaN()
	}
	start := time.Now()
	filled, _, err := FillMissing(c)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("filling took %v", took)
	}
	if v := filled.Data[0]; math.IsNaN(v) {
		t.Error("the far corner is not filled")
	}
}

// TestRemoveWithMissing: Remove fills missing voxels as well as impulses,
// and the denoiser never sees a NaN; KeepMasked keeps the impulses but
// still fills the missing voxels.
func TestRemoveWithMissing(t *testing.T) {
	clean := smoothCube(40, 40, 4)
	noisy := noise.Add(nil, clean, 5, 1)
	for y := range 40 {
		for x := range 8 {
			noisy.Set(y, x, 1, math.NaN())
		}
	}
	noisy.Set(20, 20, 2, 255)
	det := sparsenoise.Detect(noisy)
	sawNaN := false
	check := func(ctx context.Context, c *msi.Cube, s float64) (*msi.Cube, error) {
		sawNaN = sawNaN || c.Missing() > 0
		return boxBlur(ctx, c, s)
	}
	for _, o := range []Options{{}, {KeepMasked: true}} {
		r, err := Remove(context.Background(), noisy, det, check, o)
		if err != nil {
			t.Fatal(err)
		}
		if sawNaN || r.Estimate.Missing() > 0 {
			t.Fatalf("%+v: the denoiser saw a NaN (%v) or the estimate has one", o, sawNaN)
		}
	}
}

// TestFirstPassesThenLastPass: the first passes' cube denoised by
// LastPass, and Remove, give the estimate of the passes run one after
// the other as the package comment states them (passesOracle), bit for
// bit, with a draft that differs from the method (so that a pass run by
// the wrong one shows), for two and three passes; without a draft
// FirstPasses refuses more than one pass.
func TestFirstPassesThenLastPass(t *testing.T) {
	clean := smoothCube(48, 48, 6)
	noisy, _, err := noise.SimulateCase(nil, clean, noise.CaseMixture, 2)
	if err != nil {
		t.Fatal(err)
	}
	det := sparsenoise.Detect(noisy)
	ctx := context.Background()
	draft := func(ctx context.Context, c *msi.Cube, sigma float64) (*msi.Cube, error) {
		x, err := boxBlur(ctx, c, sigma)
		if err == nil {
			x.Data[0]++ // a draft not the method's result
		}
		return x, err
	}
	for _, passes := range []int{2, 3} {
		o := Options{Passes: passes, Draft: draft}
		want := passesOracle(t, noisy, det, boxBlur, o)
		whole, err := Remove(ctx, noisy, det, boxBlur, o)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(whole.Estimate.Data, want.Data) {
			t.Errorf("%d passes: Remove's estimate is not the passes' (RMS difference %.3g)", passes, cubetest.RMSE(whole.Estimate, want))
		}
		p, err := FirstPasses(ctx, noisy, det, boxBlur, o)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Mask, det.Mask) {
			t.Errorf("%d passes: the first passes' mask is not the detector's", passes)
		}
		x, err := LastPass(ctx, p.Next, det.Sigma, boxBlur, o)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(x.Data, want.Data) {
			t.Errorf("%d passes: the last pass on the first passes' cube is not the passes' estimate (RMS difference %.3g)", passes, cubetest.RMSE(x, want))
		}
	}
	if _, err := FirstPasses(ctx, noisy, det, boxBlur, Options{}); err == nil {
		t.Error("FirstPasses ran two passes without a draft")
	}
}

// passesOracle runs the passes of a repair with a draft on a cube whose
// every pass changes it, step by step as the package comment states them.
func passesOracle(t *testing.T, noisy *msi.Cube, det *sparsenoise.Report, method Method, o Options) *msi.Cube {
	t.Helper()
	z, _, err := Prepare(noisy, det, o)
	if err != nil {
		t.Fatal(err)
	}
	offsets := det.StripeOffsets
	for pass := range o.Passes {
		run := o.Draft
		if pass == o.Passes-1 {
			run = method
		}
		x, err := bandwhiten.Denoise(context.Background(), run, z, det.Sigma, bandwhiten.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if pass == o.Passes-1 {
			return x
		}
		offsets = reestimateStripes(noisy, x, det.Mask, det.Sigma, offsets)
		z = SubtractStripes(noisy, offsets)
		for i, m := range det.Mask {
			if m != 0 {
				z.Data[i] = x.Data[i]
			}
		}
	}
	return nil
}
