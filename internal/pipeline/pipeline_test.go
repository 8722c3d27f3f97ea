package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/report"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/testenv/cubetest"
	"tdsc/internal/tile/tiletest"
)

// smoother is a cheap Gaussian denoiser for tests: every voxel becomes the
// mean of its 3×3 neighbourhood in its band. It records the σ of its runs.
type smoother struct{ sigmas *[]float64 }

func (s smoother) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, denoise.Result{}, err
	}
	if s.sigmas != nil {
		*s.sigmas = append(*s.sigmas, sigma)
	}
	out := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
	for b := range noisy.Bands {
		for y := range noisy.Height {
			for x := range noisy.Width {
				sum, n := 0.0, 0
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						if yy, xx := y+dy, x+dx; yy >= 0 && yy < noisy.Height && xx >= 0 && xx < noisy.Width {
							sum += noisy.At(yy, xx, b)
							n++
						}
					}
				}
				out.Set(y, x, b, sum/float64(n))
			}
		}
	}
	return out, denoise.Result{Settings: denoise.Params("window", 3)}, nil
}

func (smoother) Check(float64, int, int, int) error { return nil }

var smootherSpec = denoise.Spec{Name: "smoother", BytesPerVoxel: 64}

// scene returns a smooth h×w×bands cube in [40, 200].
func scene(h, w, bands int) *msi.Cube {
	c := msi.NewCube(h, w, bands)
	for b := range bands {
		for y := range h {
			for x := range w {
				c.Set(y, x, b, 120+60*math.Sin(float64(x)/7+float64(b)/5)*math.Cos(float64(y)/9))
			}
		}
	}
	return c
}

// writeInput writes c as an ENVI cube in dir and returns its path.
func writeInput(t *testing.T, dir string, c *msi.Cube) string {
	t.Helper()
	p := filepath.Join(dir, "in.hdr")
	if _, err := formats.Write(p, c, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// withImpulses returns c with salt-and-pepper impulses on a fraction of the
// pixels of bands 1 and 2.
func withImpulses(c *msi.Cube, fraction float64) *msi.Cube {
	out := c.Clone()
	r := rand.New(rand.NewPCG(3, 4))
	for _, b := range []int{1, 2} {
		band := out.Band(b)
		for i := range band {
			if r.Float64() < fraction {
				band[i] = float64(255 * r.IntN(2))
			}
		}
	}
	return out
}

func TestChoosePath(t *testing.T) {
	flat := &sparsenoise.Report{Height: 4, Width: 4, Bands: 3, Sigma: []float64{10, 11, 12},
		Impulses: make([]int, 3), StripeOffsets: make([][]float64, 3), DeadColumns: make([][]int, 3), DeadLines: make([][]int, 3)}
	varied := &sparsenoise.Report{Height: 4, Width: 4, Bands: 3, Sigma: []float64{10, 30, 70},
		Impulses: make([]int, 3), StripeOffsets: make([][]float64, 3), DeadColumns: make([][]int, 3), DeadLines: make([][]int, 3)}
	dead := *flat
	dead.DeadColumns = [][]int{nil, {2}, nil}
	for _, c := range []struct {
		name     string
		model    NoiseModel
		det      *sparsenoise.Report
		given    bool
		want     Path
		wantNote bool
	}{
		{"no detection", NoiseModel{Sparse: Off}, nil, false, PathGaussian, false},
		{"no detection, per band on", NoiseModel{Sparse: Off, PerBand: On}, nil, false, PathWhitened, false},
		{"equal σ", NoiseModel{PerBand: Auto}, flat, false, PathGaussian, false},
		{"equal σ, per band on", NoiseModel{PerBand: On}, flat, false, PathWhitened, false},
		{"σ differ", NoiseModel{PerBand: Auto}, varied, false, PathWhitened, false},
		{"σ differ, per band off", NoiseModel{PerBand: Off}, varied, false, PathGaussian, false},
		{"σ differ, σ given", NoiseModel{PerBand: Auto}, varied, true, PathGaussian, true},
		{"dead column", NoiseModel{PerBand: Auto}, &dead, false, PathRepair, false},
		{"dead column, σ given", NoiseModel{PerBand: Auto}, &dead, true, PathRepair, false},
	} {
		got, note := c.model.choosePath(c.det, c.given)
		if got != c.want || (note != "") != c.wantNote {
			t.Errorf("%s: path %q, note %q; want %q, note %v", c.name, got, note, c.want, c.wantNote)
		}
	}
}

func TestBandsDiffer(t *testing.T) {
	for _, c := range []struct {
		sigmas []float64
		want   bool
	}{
		{[]float64{5.02, 5.88}, false}, // the largest spread of i.i.d. noise measured
		{[]float64{10, 12.9}, false},
		{[]float64{10, 13.1}, true},
		{[]float64{50, 70, 50}, true}, // the smallest spread of σ from {10, 30, 50, 70}
	} {
		if got := BandsDiffer(c.sigmas); got != c.want {
			t.Errorf("BandsDiffer(%v) = %v, want %v", c.sigmas, got, c.want)
		}
	}
}

func TestSignificantStripes(t *testing.T) {
	r := &sparsenoise.Report{Height: 10, Width: 4, Bands: 3, Sigma: []float64{10, 10, 10},
		StripeOffsets: [][]float64{{0, 5.7, 0, 0}, nil, {0, 0, -7.5, 1}},
		Impulses:      make([]int, 3), DeadColumns: make([][]int, 3), DeadLines: make([][]int, 3)}
	if got := significantStripes(r); !slices.Equal(got, []int{2}) {
		t.Errorf("significant striped bands %v, want [2] (offsets 0.57σ and −0.75σ)", got)
	}
	if sparseFound(r) != true {
		t.Error("a band with stripes of 0.75σ is not sparse noise found")
	}
	r.StripeOffsets[2] = nil
	if sparseFound(r) {
		t.Error("stripes of 0.57σ alone are sparse noise found")
	}
}

func TestWithParts(t *testing.T) {
	r := &sparsenoise.Report{Height: 1, Width: 3, Bands: 1, Sigma: []float64{1},
		Mask: []uint8{sparsenoise.Impulse, sparsenoise.Dead, sparsenoise.Impulse | sparsenoise.Dead}, Impulses: []int{2},
		DeadColumns: [][]int{{1, 2}}, DeadLines: [][]int{nil}, StripeOffsets: [][]float64{{4, 0, 0}}}
	got := NoiseModel{Impulses: Off, Stripes: Off}.withParts(r)
	if !slices.Equal(got.Mask, []uint8{0, sparsenoise.Dead, sparsenoise.Dead}) || got.Impulses[0] != 0 || got.StripeOffsets[0] != nil {
		t.Errorf("impulses and stripes off: mask %v, impulses %v, offsets %v", got.Mask, got.Impulses, got.StripeOffsets)
	}
	if got.DeadColumns[0] == nil {
		t.Error("impulses off removed the dead columns")
	}
	got = NoiseModel{Dead: Off}.withParts(r)
	if !slices.Equal(got.Mask, []uint8{sparsenoise.Impulse, 0, sparsenoise.Impulse}) || got.DeadColumns[0] != nil {
		t.Errorf("dead off: mask %v, dead columns %v", got.Mask, got.DeadColumns)
	}
	if r.Mask[0] != sparsenoise.Impulse || r.Impulses[0] != 2 || r.StripeOffsets[0] == nil {
		t.Error("withParts changed its argument")
	}
}

// job returns a job of the smoother on input, writing into dir.
func job(input, dir string, sigmas *[]float64) *Job {
	return &Job{Input: input, Spec: smootherSpec, Method: smoother{sigmas}, Out: filepath.Join(dir, "out.hdr"), Program: "test"}
}

// TestGaussianPathUnchanged checks that i.i.d. Gaussian noise is denoised
// exactly as the method alone, at the estimated or the given σ.
func TestGaussianPathUnchanged(t *testing.T) {
	dir := t.TempDir()
	noisy := noise.Add(nil, scene(48, 40, 6), 20, 1)
	in := writeInput(t, dir, noisy)
	read, err := formats.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, given := range []float64{0, 20} {
		var sigmas []float64
		j := job(in, dir, &sigmas)
		j.Sigma, j.Force = given, true
		out, err := Run(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		want := given
		if want == 0 {
			want = noise.EstimateMedian(read)
		}
		direct, _, _ := smoother{}.Denoise(context.Background(), read, want)
		if out.Path != PathGaussian || out.Found == nil || !slices.Equal(sigmas, []float64{want}) || !slices.Equal(out.Result.Data, direct.Data) {
			t.Errorf("σ given %v: path %q, found %v, σ %v (want %v), result equal to the method's: %v",
				given, out.Path, out.Found != nil, sigmas, want, slices.Equal(out.Result.Data, direct.Data))
		}
		if want := "test denoise --method smoother sigma=" + fmt.Sprint(want) + " window=3"; out.Result.Processing != want {
			t.Errorf("processing %q, want %q", out.Result.Processing, want)
		}
	}
}

func TestRepairPathAndOutputs(t *testing.T) {
	dir := t.TempDir()
	clean := scene(48, 40, 6)
	noisy := withImpulses(noise.Add(nil, clean, 10, 2), 0.1)
	in := writeInput(t, dir, noisy)
	j := job(in, dir, nil)
	j.SaveMask, j.SaveResidual = filepath.Join(dir, "mask.hdr"), filepath.Join(dir, "residual.hdr")
	out, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != PathRepair || !slices.Equal(out.Found.ImpulseBands(), []int{1, 2}) {
		t.Fatalf("path %q, impulse bands %v; want the repair of bands 1 and 2", out.Path, out.Found.ImpulseBands())
	}
	mask, err := formats.Open(j.SaveMask)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out.Found.Mask {
		if mask.Data[i] != MaskCode(v) {
			t.Fatalf("mask voxel %d is %v, want %v", i, mask.Data[i], MaskCode(v))
		}
	}
	if n := len(slices.DeleteFunc(slices.Clone(mask.Data), func(v float64) bool { return v != 1 })); n < 100 {
		t.Errorf("the mask marks %d impulses, want about 10 %% of 2 bands of 1920 pixels", n)
	}
	residual, err := formats.Open(j.SaveResidual)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range residual.Data {
		if want := out.Noisy.Data[i] - out.Result.Data[i]; math.Abs(v-want) > 1e-4*math.Max(1, math.Abs(want)) { // float32 on disk
			t.Fatalf("residual voxel %d is %v, want %v", i, v, want)
		}
	}
	if !strings.Contains(out.Result.Processing, "sparse noise removed: impulses in 2 bands") {
		t.Errorf("processing %q does not say the impulses were removed", out.Result.Processing)
	}
	// The repair beats the method on the noisy cube by far.
	plain, _, _ := smoother{}.Denoise(context.Background(), out.Noisy, 10)
	if e, p := cubetest.RMSE(out.Result, clean), cubetest.RMSE(plain, clean); !(e < p/2) {
		t.Errorf("RMSE of the repair %.2f, of the method alone %.2f", e, p)
	}
}

// TestRollback checks that a failure to write the last output removes the
// ones written before it and puts back what they replaced.
func TestRollback(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir, withImpulses(noise.Add(nil, scene(32, 32, 4), 10, 2), 0.1))
	old := filepath.Join(dir, "out.hdr")
	if err := os.WriteFile(old, []byte("old header"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := names(t, dir)
	j := job(in, dir, nil)
	j.Force = true
	j.SaveMask = filepath.Join(dir, "mask.hdr")
	j.SaveResidual = filepath.Join(dir, "missing", "residual.hdr") // its folder does not exist
	if _, err := Run(context.Background(), j); err == nil {
		t.Fatal("no error writing into a missing folder")
	}
	if got := names(t, dir); !slices.Equal(got, before) {
		t.Errorf("after a failed write the folder holds %v, want %v", got, before)
	}
	if b, _ := os.ReadFile(old); string(b) != "old header" {
		t.Errorf("the replaced output holds %q, want it back", b)
	}
}

// TestCancelLeavesNothing runs a job whose context is cancelled.
func TestCancelLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir, noise.Add(nil, scene(32, 32, 4), 10, 2))
	before := names(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j := job(in, dir, nil)
	j.SaveResidual = filepath.Join(dir, "r.hdr")
	if _, err := Run(ctx, j); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if got := names(t, dir); !slices.Equal(got, before) {
		t.Errorf("a cancelled job left %v, want %v", got, before)
	}
}

// TestAllMasked checks the error of a report that masks every pixel,
// which leaves no output; a cube of zeros, whose one value the detector
// finds stuck everywhere, has its noise below detection and is written
// unchanged instead.
func TestAllMasked(t *testing.T) {
	dir := t.TempDir()
	c := msi.NewCube(16, 16, 3)
	in := writeInput(t, dir, c)
	before := names(t, dir)
	all := &sparsenoise.Report{Height: 16, Width: 16, Bands: 3, Sigma: []float64{10, 10, 10},
		Mask: slices.Repeat([]uint8{sparsenoise.Dead}, len(c.Data)), StripeOffsets: make([][]float64, 3)}
	j := job(in, dir, nil)
	if _, _, err := j.repair(context.Background(), j.Method, c, all, &denoise.Result{}, &Outcome{}, report.Discard); !errors.Is(err, repair.ErrAllMasked) || !strings.HasPrefix(err.Error(), in+": ") {
		t.Errorf("every pixel masked: got %v, want repair.ErrAllMasked naming %s", err, in)
	}
	if got := names(t, dir); !slices.Equal(got, before) {
		t.Errorf("the failed job left %v", got)
	}
	if out, err := Run(context.Background(), j); err != nil {
		t.Errorf("a cube of zeros: %v", err)
	} else if out.Path != PathUnchanged {
		t.Errorf("a cube of zeros: path %q; want it unchanged", out.Path)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		job  Job
		want string
	}{
		{Job{Out: "o.hdr", Sigma: 30, Noise: NoiseModel{PerBand: On}}, "--sigma and --sigma-per-band=on"},
		{Job{Out: "o.hdr", Noise: NoiseModel{PerBand: Off, Estimator: noise.MAD}}, "--sigma-estimator applies only with per-band σ"},
		{Job{Out: "o.hdr", Sigma: 30, Noise: NoiseModel{Estimator: noise.MAD}}, "--sigma-estimator applies only without --sigma"},
		{Job{Out: "o.hdr", Noise: NoiseModel{Estimator: "median"}}, "--sigma-estimator must be"},
		{Job{Out: "o.hdr", Noise: NoiseModel{Sparse: Off, Stripes: Off}}, "do not apply with --sparse-noise off"},
		{Job{Out: "o.hdr", SaveMask: "m.hdr", Noise: NoiseModel{Sparse: Off}}, "--save-mask needs the sparse-noise detection"},
		{Job{Out: "o.hdr", SaveResidual: "o.img"}, "--save-residual o.img is the output --out too"},
		{Job{Out: "o.hdr", SaveMask: "m.hdr", SaveResidual: "m.hdr"}, "--save-mask and --save-residual are both"},
		{Job{Out: "o.hdr", Sigma: -1}, "sigma must be"},
		{Job{Out: "o.hdr", Noise: NoiseModel{Signal: SignalGaussian, Params: []noise.Level{{A: 2, B: 16}}}}, "--noise-params give a Poisson-Gaussian model"},
		{Job{Out: "o.hdr", Sigma: 10, Noise: NoiseModel{Params: []noise.Level{{A: 2, B: 16}}}}, "--sigma is one σ for every value"},
		{Job{Out: "o.hdr", Sigma: 10, Noise: NoiseModel{Signal: SignalPoissonGaussian}}, "--sigma is one σ for every value"},
	} {
		err := c.job.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error with %q", c.job.Noise, err, c.want)
		}
	}
	if err := (&Job{Out: "o.hdr", SaveMask: "m.hdr", SaveResidual: "r.hdr", Sigma: 3}).Validate(); err != nil {
		t.Errorf("a valid job: %v", err)
	}
}

// TestStripsRefuseWholeCubeNeeds checks that strips are refused with
// what needs the whole cube, and that the model of the whole cube runs
// in strips without it: on Gaussian noise it finds nothing sparse and the
// path is one σ, with the mask and the residual written.
func TestStripsRefuseWholeCubeNeeds(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir, noise.Add(nil, scene(40, 16, 3), 10, 2))
	for _, c := range []struct {
		edit func(j *Job)
		want string
	}{
		{func(j *Job) { j.Noise.Estimator = noise.MAD }, "--tile: --sigma-estimator estimates σ from the whole cube"},
		{func(j *Job) { j.Noise.Sparse, j.Noise.PerBand = Off, On }, "--tile: --sigma-per-band with --sparse-noise off estimates σ"},
		{func(j *Job) { j.SaveMask = filepath.Join(dir, "m.mat") }, "--tile: the mask --save-mask is a .mat, which cannot be written in strips"},
	} {
		j := job(in, dir, nil)
		j.Strips.Lines = 10
		c.edit(j)
		if _, err := Run(context.Background(), j); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error with %q", err, c.want)
		}
	}
	if got := names(t, dir); !slices.Equal(got, []string{"in.hdr", "in.img"}) {
		t.Errorf("refused runs left %v", got)
	}
	j := job(in, dir, nil)
	j.Strips.Lines = 10
	j.SaveMask, j.SaveResidual = filepath.Join(dir, "m.hdr"), filepath.Join(dir, "r.hdr")
	out, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	// 10 lines are fewer than the method's halo: the strips are widened
	// to it, and there are still several.
	if out.Strips < 2 || out.Found == nil || out.Path != PathGaussian {
		t.Errorf("in strips: %d strips, detector ran %v, path %q; want several, true, one σ", out.Strips, out.Found != nil, out.Path)
	}
	for _, p := range []string{j.Out, j.SaveMask, j.SaveResidual} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

// TestStripsRemoveSparseNoise checks the real-noise path in strips
// against the whole cube's: a cube with stripes in one band (of 1.5 σ
// and 4 σ), a dead column in another and impulses in two more is
// denoised in strips of 32 lines by the sparse-noise path, with the model's stripes and dead column and
// every strip's impulses; the result, the mask and the residual are the
// whole run's within 0.03 σ RMSE (and 0.1 dB PSNR), 0.5 % of the voxels
// and 0.03 σ: the strips differ in the stripes estimated again on the
// residual, from a strip's lines rather than the whole column.
func TestStripsRemoveSparseNoise(t *testing.T) {
	dir := t.TempDir()
	const sigma = 10
	clean := scene(120, 48, 6)
	noisy := withImpulses(noise.Add(nil, clean, sigma, 4), 0.02)
	striped := map[int]float64{5: 15, 17: -15, 30: 40, 41: -40}
	for y := range noisy.Height {
		for x, u := range striped {
			noisy.Set(y, x, 3, noisy.At(y, x, 3)+u)
		}
		noisy.Set(y, 12, 4, 0)
	}
	in := writeInput(t, dir, noisy)
	runs := map[int]*Outcome{}
	for _, lines := range []int{0, 32} {
		j := job(in, dir, nil)
		j.Strips.Lines = lines
		name := fmt.Sprint(lines)
		j.Out, j.SaveMask, j.SaveResidual = filepath.Join(dir, name+".hdr"), filepath.Join(dir, name+"m.hdr"), filepath.Join(dir, name+"r.hdr")
		out, err := Run(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		if out.Path != PathRepair {
			t.Fatalf("tile %d: path %q, want %q", lines, out.Path, PathRepair)
		}
		runs[lines] = out
	}
	model := runs[32].Found
	if runs[32].Strips < 3 || model.Mask != nil {
		t.Fatalf("%d strips, a model with a mask %v", runs[32].Strips, model.Mask != nil)
	}
	if !slices.Equal(model.StripedBands(), []int{3}) || !slices.Equal(model.DeadColumns[4], []int{12}) || !slices.Equal(model.ImpulseBands(), []int{1, 2}) {
		t.Fatalf("model: %s", model.Summary())
	}
	for x, u := range model.StripeOffsets[3] {
		if math.Abs(u-striped[x]) > 4 { // 3 standard errors of a column's offset
			t.Errorf("column %d: offset %.2f, want %g", x, u, striped[x])
		}
	}
	read := func(name string) *msi.Cube {
		c, err := formats.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	whole, strips := read("0.hdr"), read("32.hdr")
	if d := cubetest.RMSE(whole, strips); d > 0.03*sigma {
		t.Errorf("strips differ from the whole run by %.3f RMSE", d)
	}
	if w, s := cubetest.PSNR(t, clean, whole), cubetest.PSNR(t, clean, strips); s < w-0.1 {
		t.Errorf("PSNR %.2f dB in strips, %.2f whole", s, w)
	}
	if d := cubetest.RMSE(read("0r.hdr"), read("32r.hdr")); d > 0.03*sigma {
		t.Errorf("the residuals differ by %.3f RMSE", d)
	}
	wholeMask, stripMask := read("0m.hdr"), read("32m.hdr")
	differ := 0
	for i, v := range wholeMask.Data {
		if v != stripMask.Data[i] {
			differ++
		}
	}
	if differ > len(wholeMask.Data)/200 {
		t.Errorf("the masks differ in %d of %d voxels", differ, len(wholeMask.Data))
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// drafting is the smoother with a draft, each of which records its runs in
// calls and names itself in its Result.
type drafting struct {
	name  string
	calls *[]string
}

func (d drafting) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	*d.calls = append(*d.calls, d.name)
	x, _, err := smoother{}.Denoise(ctx, noisy, sigma)
	return x, denoise.Result{Settings: denoise.Params("pass", d.name)}, err
}

func (drafting) Check(float64, int, int, int) error { return nil }
func (d drafting) Draft() denoise.Method            { return drafting{"draft", d.calls} }
func (d drafting) Final() denoise.Method            { return drafting{"final", d.calls} }

// TestDraft checks which method runs where: on the repair path the draft
// first and the method last, whose settings the processing line gives; on
// the Gaussian path the method alone.
func TestDraft(t *testing.T) {
	clean := scene(48, 40, 6)
	for _, tc := range []struct {
		name      string
		noisy     *msi.Cube
		wantCalls []string
		wantPass  string
	}{
		{"impulses", withImpulses(noise.Add(nil, clean, 10, 2), 0.1), []string{"draft", "self"}, "pass=self"},
		{"Gaussian", noise.Add(nil, clean, 10, 2), []string{"self"}, "pass=self"},
	} {
		var calls []string
		dir := t.TempDir()
		j := job(writeInput(t, dir, tc.noisy), dir, nil)
		j.Method, j.Force = drafting{"self", &calls}, true
		out, err := Run(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(calls, tc.wantCalls) || !strings.Contains(out.Result.Processing, tc.wantPass) {
			t.Errorf("%s: ran %v with processing %q, want %v and %s", tc.name, calls, out.Result.Processing, tc.wantCalls, tc.wantPass)
		}
	}
}

// readying is the smoother as a denoise.RepairPreparer: it records in
// its log the runs of every method it makes (its own, its Draft's, the
// readied one's and its Draft's, named in calls) with the cube and the σ
// of each, and what it was readied with.
type readying struct {
	name string
	log  *readyLog
}

type readyLog struct {
	calls  []string
	cubes  []*msi.Cube
	sigmas []float64
	// first, filled and sigma are what PrepareRepair was given.
	first  *msi.Cube
	filled []bool
	sigma  float64
}

func (r readying) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	r.log.calls = append(r.log.calls, r.name)
	r.log.cubes = append(r.log.cubes, noisy.Clone())
	r.log.sigmas = append(r.log.sigmas, sigma)
	return smoother{}.Denoise(ctx, noisy, sigma)
}

func (readying) Check(float64, int, int, int) error { return nil }
func (r readying) Draft() denoise.Method            { return readying{r.name + " draft", r.log} }

func (r readying) PrepareRepair(first *msi.Cube, filled []bool, sigma float64) (denoise.Method, error) {
	r.log.first, r.log.filled, r.log.sigma = first.Clone(), slices.Clone(filled), sigma
	return readying{"readied", r.log}, nil
}

// TestRepairReadiesTheMethod: a whole cube's repair readies a
// denoise.RepairPreparer once, from the cube its first pass denoises (the
// same values and σ, bit for bit) and the voxels the first pass filled
// (the mask's), and runs the readied method's Draft and then the readied
// method; without sparse noise the method runs as it is.
func TestRepairReadiesTheMethod(t *testing.T) {
	clean := scene(48, 40, 6)
	for _, tc := range []struct {
		name      string
		noisy     *msi.Cube
		wantCalls []string
	}{
		{"impulses", withImpulses(noise.Add(nil, clean, 10, 2), 0.1), []string{"readied draft", "readied"}},
		{"Gaussian", noise.Add(nil, clean, 10, 2), []string{"self"}},
	} {
		log := &readyLog{}
		dir := t.TempDir()
		j := job(writeInput(t, dir, tc.noisy), dir, nil)
		j.Method, j.Force = readying{"self", log}, true
		out, err := Run(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(log.calls, tc.wantCalls) {
			t.Fatalf("%s: ran %v, want %v", tc.name, log.calls, tc.wantCalls)
		}
		if out.Path != PathRepair {
			if log.first != nil {
				t.Errorf("%s: path %s readied the method", tc.name, out.Path)
			}
			continue
		}
		if log.first == nil || !slices.Equal(log.first.Data, log.cubes[0].Data) || log.sigma != log.sigmas[0] {
			t.Fatalf("%s: readied at σ %v on a cube other than the first pass's (at σ %v)", tc.name, log.sigma, log.sigmas[0])
		}
		filled := 0
		for i, m := range out.Found.Mask {
			if log.filled[i] != (m != 0) {
				t.Fatalf("%s: voxel %d filled %v, the mask says %d", tc.name, i, log.filled[i], m)
			}
			if m != 0 {
				filled++
			}
		}
		if filled == 0 {
			t.Errorf("%s: no voxel filled", tc.name)
		}
	}
}

// fields returns an h×w×bands cube that is piecewise constant, without
// noise: seeded rectangles of one value per band on a constant
// background, as the Indian Pines phantom is.
func fields(h, w, bands int) *msi.Cube {
	rng := rand.New(rand.NewPCG(3, 31))
	c := msi.NewCube(h, w, bands)
	for i := range c.Data {
		c.Data[i] = 100
	}
	for range 10 {
		y0, x0 := rng.IntN(h), rng.IntN(w)
		y1, x1 := y0+1+rng.IntN(h-y0), x0+1+rng.IntN(w-x0)
		for b := range bands {
			v := 10 + float64(rng.IntN(240))
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					c.Set(y, x, b, v)
				}
			}
		}
	}
	return c
}

// TestBelowDetectionUnchanged: a cube whose noise is below detection is
// written unchanged, whether the sparse noise is looked for or not and in
// strips, without the method running, its missing voxels kept; a given σ
// runs the method on it.
func TestBelowDetectionUnchanged(t *testing.T) {
	dir := t.TempDir()
	c := fields(40, 36, 5)
	c.Set(3, 4, 1, math.NaN())
	in := filepath.Join(dir, "in.npy")
	if _, err := formats.Write(in, c, msi.WriteOptions{DType: "float64"}); err != nil {
		t.Fatal(err)
	}
	for _, variant := range []string{"detector", "no detector", "strips"} {
		var sigmas []float64
		j := job(in, dir, &sigmas)
		j.Out = filepath.Join(dir, "out.npy")
		j.Force = true
		switch variant {
		case "no detector":
			j.Noise.Sparse = Off
		case "strips":
			j.Strips.Lines = 8
		}
		out, err := Run(context.Background(), j)
		if err != nil {
			t.Fatalf("%s: %v", variant, err)
		}
		got, err := formats.Open(j.Out)
		if err != nil {
			t.Fatal(err)
		}
		if out.Path != PathUnchanged || len(sigmas) != 0 || !sameData(got, c) {
			t.Errorf("%s: path %q, method ran at %v, output the input: %v", variant, out.Path, sigmas, sameData(got, c))
		}
	}
	var sigmas []float64
	j := job(in, dir, &sigmas)
	j.Sigma, j.Force = 5, true
	if out, err := Run(context.Background(), j); err != nil {
		t.Errorf("σ given: %v", err)
	} else if out.Path == PathUnchanged || len(sigmas) == 0 || sigmas[0] != 5 {
		t.Errorf("σ given: path %q, method ran at %v", out.Path, sigmas)
	}
}

// sameData reports whether a and b hold the same values, NaN where the
// other has NaN.
func sameData(a, b *msi.Cube) bool {
	return a.SameSize(b) && slices.EqualFunc(a.Data, b.Data, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}

// TestStripLinesAsTheMethodSeesThem checks the lines the strips path
// gives a method to learn from the whole cube (stripNoise.lines) on the
// sparse-noise path: the detector finds in them neither the stripes nor
// the impulses of the input, and one σ in every band, the reference the
// bands were whitened to, although the input's bands have σ 5 to 20;
// and they say which voxels the repair filled (denoise.RepairLines): the
// strip's detector's impulses.
func TestStripLinesAsTheMethodSeesThem(t *testing.T) {
	clean := scene(96, 48, 6)
	sigmas := []float64{5, 10, 20, 10, 10, 15}
	noisy := clean.Clone()
	rng := rand.New(rand.NewPCG(7, 8))
	for b, s := range sigmas {
		band := noisy.Band(b)
		for i := range band {
			band[i] += s * rng.NormFloat64()
		}
	}
	noisy = withImpulses(noisy, 0.03)
	for y := range noisy.Height {
		for _, x := range []int{7, 20, 33} {
			noisy.Set(y, x, 3, noisy.At(y, x, 3)+40)
		}
	}
	j := job("in.hdr", t.TempDir(), nil)
	lines := tiletest.Lines{Cube: noisy}
	out := &Outcome{}
	plan, err := j.stripNoise(context.Background(), lines, msi.Storage{}, out, report.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if plan.path != PathRepair {
		t.Fatalf("path %q, want %q", plan.path, PathRepair)
	}
	seen, err := plan.lines(lines).ReadLines(16, 64)
	if err != nil {
		t.Fatal(err)
	}
	found := sparsenoise.Detect(seen)
	if len(found.StripedBands()) != 0 || len(found.ImpulseBands()) != 0 || len(found.DeadBands()) != 0 {
		t.Errorf("in the lines as the method sees them:\n%s", found.Summary())
	}
	for b, s := range found.Sigma {
		if math.Abs(s-out.Sigma) > 0.15*out.Sigma {
			t.Errorf("band %d: σ %.2f, want the reference %.2f", b, s, out.Sigma)
		}
	}
	// The repair's later passes replace the filled voxels: the lines say
	// which they are, the voxels the strip's detector masks.
	repaired, ok := plan.lines(lines).(denoise.RepairLines)
	if !ok {
		t.Fatal("the lines of the repair's path do not say which voxels were filled")
	}
	again, filled, err := repaired.ReadFilled(16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Data, seen.Data) {
		t.Error("ReadFilled's lines are not ReadLines'")
	}
	raw, err := lines.ReadLines(16, 64)
	if err != nil {
		t.Fatal(err)
	}
	det := plan.detect(raw, nil)
	marked := 0
	for i, m := range det.Mask {
		if filled[i] != (m != 0) {
			t.Fatalf("voxel %d: filled %v, the detector's mask %d", i, filled[i], m)
		}
		if filled[i] {
			marked++
		}
	}
	if marked == 0 {
		t.Error("no voxel filled in lines with impulses")
	}
}

// TestWholeModelAsStrips: a whole run judges its noise by the model its
// strips fit (noiseModel, in windows of lines): the same σ of every band,
// stripe offsets and dead columns, on a cube with stripes, impulses and a
// dead column; only the local sparse noise is found in the whole cube.
func TestWholeModelAsStrips(t *testing.T) {
	noisy := noise.Add(nil, scene(72, 240, 6), 10, 3)
	rng := rand.New(rand.NewPCG(3, 4))
	for y := range noisy.Height {
		for x := range noisy.Width {
			if x%7 == 0 {
				noisy.Set(y, x, 1, noisy.At(y, x, 1)+40)
			}
			if rng.Float64() < 0.2 {
				noisy.Set(y, x, 3, float64(255*rng.IntN(2)))
			}
		}
		noisy.Set(y, 100, 4, 0)
	}
	j := job("", t.TempDir(), nil)
	var whole, strips Outcome
	det, _, _, err := j.detect(context.Background(), noisy, 0, &whole, report.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.stripNoise(context.Background(), tiletest.Lines{Cube: noisy}, msi.Storage{}, &strips, report.Discard); err != nil {
		t.Fatal(err)
	}
	model := strips.Found
	if det.StripeOffsets[1] == nil || det.Impulses[3] == 0 || !slices.Equal(det.DeadColumns[4], []int{100}) {
		t.Fatalf("the whole run finds stripes %v, impulses %v, dead columns %v: not the noise the test set", det.StripedBands(), det.Impulses, det.DeadColumns)
	}
	if !reflect.DeepEqual(det.Sigma, model.Sigma) {
		t.Errorf("σ: whole run %.6g, strips %.6g", det.Sigma, model.Sigma)
	}
	if !reflect.DeepEqual(det.StripeOffsets, model.StripeOffsets) || !reflect.DeepEqual(det.DeadColumns, model.DeadColumns) {
		t.Errorf("the whole run's stripes or dead columns are not the strips' model's")
	}
	if !slices.Equal(det.Impulses, model.Impulses) {
		t.Errorf("impulses: whole run %v, strips %v", det.Impulses, model.Impulses)
	}
}
