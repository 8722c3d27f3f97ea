package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/report"
	"tdsc/internal/stages/noiselevel"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/stages/vst"
	"tdsc/internal/tile/tiletest"
)

// TestStabilisedPath checks the path of signal-dependent noise: the method
// runs once on the stabilised cube, at its noise σ, and the result is the
// unbiased inverse of its output; the residual is in the input's units.
func TestStabilisedPath(t *testing.T) {
	dir := t.TempDir()
	clean := scene(64, 64, 6)
	levels := []noise.Level{{A: 2, B: 16}, {A: 3, B: 4}, {A: 1, B: 25}, {A: 2, B: 16}, {A: 4, B: 1}, {A: 0.5, B: 36}}
	noisy, _, err := noise.Simulate(nil, clean, noise.Spec{PoissonGaussian: levels, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	in := writeInput(t, dir, noisy)
	read, err := formats.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	var sigmas []float64
	j := job(in, dir, &sigmas)
	j.Noise.Params = levels
	j.SaveResidual = filepath.Join(dir, "residual.hdr")
	out, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != PathStabilised || out.Stabilised == nil || len(sigmas) != 1 {
		t.Fatalf("path %q, transform %v, method runs %v", out.Path, out.Stabilised, sigmas)
	}
	a, b := make([]float64, len(levels)), make([]float64, len(levels))
	for i, l := range levels {
		a[i], b[i] = l.A, l.B
	}
	tr := vst.New(read, a, b)
	// The method ran at the stabilised noise's σ (estimated, so within
	// the estimator's error of the transform's).
	if r := sigmas[0] / tr.Scale; r < 0.9 || r > 1.15 {
		t.Errorf("the method ran at σ = %.3f, the stabilised noise has %.3f", sigmas[0], tr.Scale)
	}
	denoised, _, _ := smoother{}.Denoise(context.Background(), tr.Forward(nil, read), sigmas[0])
	want := tr.Inverse(nil, denoised)
	if !slices.Equal(out.Result.Data, want.Data) {
		t.Error("the result is not the inverse of the method's output on the stabilised cube")
	}
	if !strings.Contains(out.Result.Processing, "signal-dependent noise: variance stabilised with the given a and b of every band") {
		t.Errorf("processing %q does not say the variance was stabilised", out.Result.Processing)
	}
	residual, err := formats.Open(j.SaveResidual)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range residual.Data {
		if want := out.Noisy.Data[i] - out.Result.Data[i]; math.Abs(v-want) > 1e-4*math.Max(1, math.Abs(want)) {
			t.Fatalf("residual voxel %d is %v, want %v", i, v, want)
		}
	}
	// Without the parameters the fit finds the noise signal-dependent and
	// stabilises with its own functions.
	j = job(in, dir, nil)
	j.Force = true
	if out, err = Run(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if out.Path != PathStabilised || !strings.Contains(out.Result.Processing, "with the fitted a and b") {
		t.Errorf("fitted: path %q", out.Path)
	}
}

// Impulses and dead pixels of the stabilised cube are the input's, its σ
// and stripes its model's.
func TestWithNoiseOf(t *testing.T) {
	c := scene(20, 20, 3)
	model := sparsenoise.MissingOnly(c)
	input := sparsenoise.MissingOnly(c)
	model.Mask[3], model.Impulses[0] = sparsenoise.Impulse, 1
	model.Sigma = []float64{1, 2, 3}
	model.StripeOffsets[2] = make([]float64, 20)
	input.Mask[5], input.Mask[400] = sparsenoise.Impulse, sparsenoise.Dead
	input.Impulses[0], input.DeadColumns[1] = 1, []int{0}
	input.Mask[7] = sparsenoise.Missing
	inputSigma := slices.Clone(input.Sigma)
	got := withNoiseOf(input, model)
	if got.Mask[3] != 0 || got.Mask[5] != sparsenoise.Impulse || got.Mask[400] != sparsenoise.Dead || got.Mask[7] != sparsenoise.Missing {
		t.Errorf("mask %v %v %v %v", got.Mask[3], got.Mask[5], got.Mask[400], got.Mask[7])
	}
	if !slices.Equal(got.DeadColumns[1], []int{0}) || !slices.Equal(got.Impulses, input.Impulses) {
		t.Error("dead columns or impulses not the input's")
	}
	if !slices.Equal(got.Sigma, model.Sigma) || got.StripeOffsets[2] == nil || got.StripeOffsets[1] != nil {
		t.Errorf("σ %v and stripes not the model's", got.Sigma)
	}
	if got.Sigma[0] = -1; model.Sigma[0] != 1 || !slices.Equal(input.Sigma, inputSigma) || input.StripeOffsets[2] != nil {
		t.Error("a report changed")
	}
}

// Stripes found in the input are subtracted before the transform, where
// they are one offset per column: none is left for the stabilised cube's
// detector to find.
func TestStabilisedStripes(t *testing.T) {
	dir := t.TempDir()
	clean := scene(96, 96, 6)
	levels := []noise.Level{{A: 2, B: 16}}
	noisy, _, err := noise.Simulate(nil, clean, noise.Spec{PoissonGaussian: levels, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []int{10, 11, 40, 70} {
		for y := range noisy.Height {
			noisy.Set(y, x, 2, noisy.At(y, x, 2)+60)
		}
	}
	in := writeInput(t, dir, noisy)
	j := job(in, dir, nil)
	j.Noise.Params = levels
	out, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != PathStabilised {
		t.Fatalf("path %q", out.Path)
	}
	if striped := out.Found.StripedBands(); len(striped) != 0 {
		t.Errorf("stripes left in bands %v of the stabilised cube", striped)
	}
	// The stripes are gone from the result: its column means in band 2
	// follow the clean scene's.
	for _, x := range []int{10, 40} {
		var d float64
		for y := range clean.Height {
			d += out.Result.At(y, x, 2) - clean.At(y, x, 2)
		}
		if d /= float64(clean.Height); math.Abs(d) > 5 {
			t.Errorf("column %d of band 2 is off by %.2f on average", x+1, d)
		}
	}
}

// The transform's band means leave out impulses and dead pixels.
func TestWithoutSparse(t *testing.T) {
	c := scene(20, 20, 3)
	det := sparsenoise.MissingOnly(c)
	if withoutSparse(c, det) != c || withoutSparse(c, nil) != c {
		t.Error("a cube without sparse noise was copied")
	}
	det.Mask[5], det.Mask[401] = sparsenoise.Impulse, sparsenoise.Dead
	got := withoutSparse(c, det)
	for i, v := range got.Data {
		if masked := i == 5 || i == 401; masked != math.IsNaN(v) || !masked && v != c.Data[i] {
			t.Fatalf("voxel %d: %v (input %v)", i, v, c.Data[i])
		}
	}
	if math.IsNaN(c.Data[5]) {
		t.Error("the input was changed")
	}
}

// Fits that differ by their standard errors are pooled into their
// weighted mean; fits that differ by more are kept apart.
func TestPooledFunction(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	agree := make([]noiselevel.Band, 200)
	for i := range agree {
		sa, sb := 0.05+0.1*rng.Float64(), 0.5+rng.Float64()
		agree[i] = noiselevel.Band{Function: noiselevel.Function{A: 2 + sa*rng.NormFloat64(), B: 16 + sb*rng.NormFloat64()}, SEA: sa, SEB: sb, Fitted: true}
	}
	// An unfitted band is left out, however far it is.
	agree = append(agree, noiselevel.Band{Function: noiselevel.Function{A: 40, B: 0}, SEA: 0.01, SEB: 0.01})
	f, ok := pooledFunction(agree)
	if !ok || math.Abs(f.A-2) > 0.02 || math.Abs(f.B-16) > 0.2 {
		t.Errorf("agreeing bands: %+v, pooled %v; want about a = 2, b = 16", f, ok)
	}
	differ := slices.Clone(agree[:200])
	for i := range differ {
		if i%3 == 0 {
			differ[i].A += 1
		}
	}
	if _, ok := pooledFunction(differ); ok {
		t.Error("bands whose gains differ by 1 (10 standard errors) were pooled")
	}
	if _, ok := pooledFunction(agree[:1]); ok {
		t.Error("one band was pooled")
	}
}

// TestStabilisedStrips: a Poisson-Gaussian cube denoised in strips by a
// method that sees 3×3 neighbourhoods (within every strip's halo) gives the
// whole run's result bit for bit, with the levels given and with them
// fitted: the noise-level functions fitted in the noise model's pass are
// the whole cube's (every window kept, no sparse noise), the transform
// (its band means summed in the same order) is the whole cube's, and the
// strips' cores are stabilised, denoised and inverted as the whole cube.
func TestStabilisedStrips(t *testing.T) {
	dir := t.TempDir()
	levels := []noise.Level{{A: 2, B: 16}}
	noisy, _, err := noise.Simulate(nil, scene(96, 64, 5), noise.Spec{PoissonGaussian: levels, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	in := writeInput(t, dir, noisy)
	for _, given := range []bool{false, true} {
		var outs [2]*Outcome
		var results [2]*msi.Cube
		for k, lines := range []int{0, 24} {
			j := job(in, dir, nil)
			j.Out = filepath.Join(dir, fmt.Sprintf("out%d.hdr", k))
			j.Force = true
			j.Strips.Lines = lines
			if given {
				j.Noise.Params = levels
			}
			if outs[k], err = Run(context.Background(), j); err != nil {
				t.Fatal(err)
			}
			if results[k], err = formats.Open(j.Out); err != nil {
				t.Fatal(err)
			}
		}
		whole, strips := outs[0], outs[1]
		if strips.Strips < 2 || strips.Path != PathStabilised || whole.Path != PathStabilised {
			t.Fatalf("given %v: %d strips, paths %q in strips and %q whole, want several and %q", given, strips.Strips, strips.Path, whole.Path, PathStabilised)
		}
		if !reflect.DeepEqual(strips.Stabilised, whole.Stabilised) {
			t.Errorf("given %v: the transform in strips %+v, whole %+v", given, strips.Stabilised, whole.Stabilised)
		}
		if !slices.Equal(results[1].Data, results[0].Data) {
			t.Errorf("given %v: the result in strips differs from the whole run's", given)
		}
	}
}

// TestSignalSample: the lines the directions of signal are counted on in
// strips are the whole cube's when it is small enough, else blocks of
// signalSampleBlock lines from the first line to the last; in both, with
// the model's stripes subtracted and its impulses missing, as the whole
// run has them (withoutSparse of repair.SubtractStripes).
func TestSignalSample(t *testing.T) {
	const h, w, bands = 200, 40, 4
	noisy := withImpulses(noise.Add(nil, scene(h, w, bands), 5, 6), 0.05)
	for y := range h {
		for x, offset := range map[int]float64{7: 20, 19: -20, 30: 25} {
			noisy.Set(y, x, 3, noisy.At(y, x, 3)+offset) // stripes
		}
	}
	lines := tiletest.Lines{Cube: noisy}
	model, err := sparsenoise.Fit(context.Background(), lines, 64, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if model.StripeOffsets[3] == nil || model.Impulses[1] == 0 {
		t.Fatalf("the model found stripes %v and impulses %v", model.StripeOffsets, model.Impulses)
	}
	st := &stripStabiliser{input: model, stripes: model.StripeOffsets}
	want := withoutSparse(repair.SubtractStripes(noisy, model.StripeOffsets), sparsenoise.DetectWith(noisy, model))
	whole, err := st.signalSample(lines, h*w*bands)
	if err != nil {
		t.Fatal(err)
	}
	if !sameData(whole, want) {
		t.Error("the sample of a cube within the bound is not the whole cube prepared")
	}
	blocks, err := st.signalSample(lines, 64*w*bands)
	if err != nil {
		t.Fatal(err)
	}
	if blocks.Height != 64 {
		t.Fatalf("a sample of %d lines, want 64", blocks.Height)
	}
	for i, y0 := range []int{0, 61, 122, 184} {
		got := blocks.Crop(i*signalSampleBlock, 0, 0, signalSampleBlock, w, bands)
		prepared := withoutSparse(repair.SubtractStripes(noisy.Crop(y0, 0, 0, signalSampleBlock, w, bands), model.StripeOffsets),
			sparsenoise.DetectWith(noisy.Crop(y0, 0, 0, signalSampleBlock, w, bands), model))
		if !sameData(got, prepared) {
			t.Errorf("block %d is not lines %d–%d prepared", i, y0, y0+signalSampleBlock-1)
		}
	}
}

// TestStreamedNoiseLevels: the noise-level functions the strips fit in the
// noise model's pass (noiselevel.Stream given every window of its second
// pass with the impulses and dead pixels DetectWith finds there) against
// the whole run's (noiselevel.Estimate with those sparsenoise.Detect finds
// in the whole cube), on a Poisson-Gaussian cube with impulses in two
// bands and a dead column in a third: the masks differ only where a
// window's detection differs from the whole cube's, so every band's a and
// b are within three standard errors (the larger of the two fits') of the
// whole run's, the decision and the band means the same within 10⁻³.
func TestStreamedNoiseLevels(t *testing.T) {
	levels := []noise.Level{{A: 2, B: 16}}
	noisy, _, err := noise.Simulate(nil, scene(120, 96, 6), noise.Spec{PoissonGaussian: levels, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	noisy = withImpulses(noisy, 0.05)
	for y := range noisy.Height {
		noisy.Set(y, 40, 4, 0)
	}
	det := sparsenoise.Detect(noisy)
	whole := noiselevel.Estimate(noisy, noiselevel.Options{Mask: sparseMask(det)})
	stream := noiselevel.NewStream(noisy.Height, noisy.Width, noisy.Bands)
	_, err = sparsenoise.Fit(context.Background(), tiletest.Lines{Cube: noisy}, 32, nil, func(c *msi.Cube, found *sparsenoise.Report) {
		stream.Add(c, sparseMask(found))
	})
	if err != nil {
		t.Fatal(err)
	}
	got := stream.Report()
	if got.SignalDependent != whole.SignalDependent || !got.SignalDependent {
		t.Errorf("signal-dependent %v in strips, %v whole, want true", got.SignalDependent, whole.SignalDependent)
	}
	for b, band := range got.Bands {
		want := whole.Bands[b]
		seA, seB := max(band.SEA, want.SEA), max(band.SEB, want.SEB)
		if math.Abs(band.A-want.A) > 3*seA || math.Abs(band.B-want.B) > 3*seB {
			t.Errorf("band %d: a = %.3f, b = %.2f in strips, %.3f and %.2f whole (standard errors %.3f, %.2f)", b, band.A, band.B, want.A, want.B, seA, seB)
		}
	}
	wantMeans := vst.Means(withoutSparse(noisy, det))
	for b, m := range stream.Means() {
		if math.Abs(m-wantMeans[b]) > 1e-3*wantMeans[b] {
			t.Errorf("band %d: mean %.4f in strips, %.4f whole", b, m, wantMeans[b])
		}
	}
}

// TestStabilisedSigmaWithoutImpulses: a band with stripes and dense
// impulses set after them. Subtracting the input's stripe offsets before
// the transform moves the impulses of each striped column to a value of
// its own, too few of them on a short cube to be found stuck again on
// the stabilised cube; its σ is measured without the input's impulses,
// whole and in strips, and is the transform's.
func TestStabilisedSigmaWithoutImpulses(t *testing.T) {
	dir := t.TempDir()
	levels := []noise.Level{{A: 2, B: 16}}
	noisy, _, err := noise.Simulate(nil, scene(24, 240, 4), noise.Spec{PoissonGaussian: levels, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 7))
	const band = 1
	for y := range noisy.Height {
		for x := range noisy.Width {
			// Stripes on every 6th column of bands 2 and 3, not the same
			// columns in both (a column striped in neighbouring bands
			// is taken for the scene's).
			if x%6 == 0 {
				noisy.Set(y, x, band, noisy.At(y, x, band)+80+float64(x%5))
			}
			if x%6 == 3 {
				noisy.Set(y, x, band+1, noisy.At(y, x, band+1)+60)
			}
			if rng.Float64() < 0.6 {
				noisy.Set(y, x, band, float64(255*rng.IntN(2)))
			}
		}
	}
	in := writeInput(t, dir, noisy)
	for _, lines := range []int{0, 12} {
		j := job(in, dir, nil)
		j.Force = true
		j.Strips.Lines = lines
		j.Noise.Params = levels
		out, err := Run(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		if out.Path != PathStabilised || out.Found == nil {
			t.Fatalf("--tile %d: path %q, want %q with a model", lines, out.Path, PathStabilised)
		}
		scale := out.Stabilised.Scale
		if s := out.Found.Sigma[band]; math.Abs(s/scale-1) > 0.2 {
			t.Errorf("--tile %d: σ of band %d on the stabilised cube %.2f, the transform's %.2f", lines, band+1, s, scale)
		}
	}
}

// TestWholeFitAsStrips: a whole run fits the noise-level functions as its
// strips do (in the noise model's pass, and streamedLevels without the
// sparse noise looked for), on a cube large enough that the fit keeps
// every 2nd of its windows: the whole run's transform is the one the
// strips' model pass gives, which the fit of every window of the whole
// cube (noiselevel.Estimate) does not give.
func TestWholeFitAsStrips(t *testing.T) {
	const h, w, bands = 376, 376, 64 // 94·94 windows, 126 fits of a band: over 2²⁰
	noisy, _, err := noise.Simulate(nil, scene(h, w, bands), noise.Spec{PoissonGaussian: []noise.Level{{A: 2, B: 16}}, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if s := noiselevel.NewStream(h, w, bands).Stride(); s < 2 {
		t.Fatalf("the stream keeps every window (stride %d): the test cannot tell it from Estimate", s)
	}
	j := job("", t.TempDir(), nil)
	var out Outcome
	det, levels, _, err := j.detect(context.Background(), noisy, 0, &out, report.Discard)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := j.stabiliser(noisy, det, levels, report.Discard)
	if err != nil || whole == nil {
		t.Fatalf("the whole run does not stabilise (%v)", err)
	}
	if _, err := j.stripNoise(context.Background(), tiletest.Lines{Cube: noisy}, msi.Storage{}, &out, report.Discard); err != nil {
		t.Fatal(err)
	}
	if out.Stabilised == nil || !reflect.DeepEqual(out.Stabilised, whole.Transform) {
		t.Errorf("the whole run's transform %+v, the strips' %+v", whole.Transform, out.Stabilised)
	}
	j.Noise.Sparse = Off
	unsought, err := j.stabiliser(noisy, nil, nil, report.Discard)
	if err != nil || unsought == nil || !reflect.DeepEqual(unsought.Transform, whole.Transform) {
		t.Errorf("without the sparse noise looked for, the whole run's transform %+v, with it %+v (%v)", unsought, whole.Transform, err)
	}
	own := noiselevel.Estimate(noisy, noiselevel.Options{})
	if reflect.DeepEqual(own.Functions, streamedLevels(noisy, nil).Report().Functions) {
		t.Error("the fit of every window gives the stream's functions too: the test cannot tell the two apart")
	}
}
