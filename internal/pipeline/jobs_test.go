package pipeline

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/denoise"
	"tdsc/internal/dictfile"
	"tdsc/internal/formats"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
)

// TestRefScored checks that a job with a reference scores the input and
// the result against it as metrics.Evaluate does, in that order, and
// refuses a reference of another size before any output is written.
func TestRefScored(t *testing.T) {
	dir := t.TempDir()
	clean := scene(40, 36, 5)
	noisy := noise.Add(nil, clean, 15, 2)
	in := writeInput(t, dir, noisy)
	ref := filepath.Join(dir, "ref.hdr")
	if _, err := formats.Write(ref, clean, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	j := job(in, dir, nil)
	j.Ref, j.Sigma = ref, 15
	out, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Scores) != 2 || out.Scores[0].Path != in || out.Scores[1].Path != j.Out {
		t.Fatalf("scores %+v", out.Scores)
	}
	refRead, _ := formats.Open(ref)
	for i, path := range []string{in, j.Out} {
		x, err := formats.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			x = out.Result // as it was before it was written as float32
		}
		want, err := metrics.Evaluate(context.Background(), refRead, x)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out.Scores[i].Report, want) {
			t.Errorf("%s: scored %+v, want %+v", path, *out.Scores[i].Report, *want)
		}
	}
	if out.Scores[1].Report.PSNR <= out.Scores[0].Report.PSNR {
		t.Errorf("the result scores no better than the input: %v", out.Scores)
	}

	small := filepath.Join(dir, "small.hdr")
	if _, err := formats.Write(small, scene(20, 36, 5), msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	j = job(in, dir, nil)
	j.Ref, j.Sigma, j.Out = small, 15, filepath.Join(dir, "other.hdr")
	if _, err := Run(context.Background(), j); err == nil || !strings.Contains(err.Error(), "reference "+small+" is 20×36×5 but the input") {
		t.Errorf("a reference of another size: %v", err)
	}
	if err := formats.NewTarget(j.Out).Refuse(); err != nil {
		t.Errorf("an output was left: %v", err)
	}
}

func mustOpen(t *testing.T, path string) *msi.Cube {
	t.Helper()
	c, err := formats.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNoiseJobKeepsMissing checks that noise is drawn where there is data
// only, that the processing line says what was drawn, and that the seed
// decides the noise.
func TestNoiseJobKeepsMissing(t *testing.T) {
	dir := t.TempDir()
	in, _, _ := noDataInput(t, dir)
	var outs [2]*msi.Cube
	for i := range outs {
		j := &NoiseJob{Input: in, Spec: noise.Spec{Sigma: 10, ImpulseBands: 1, ImpulseDensity: 0.5, Seed: 3}, Out: filepath.Join(dir, "n.hdr"), Force: true, Program: "test"}
		done, err := j.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = done.Noisy
		if !strings.HasPrefix(done.Noisy.Processing, "test noise: "+done.What) {
			t.Errorf("processing %q, what %q", done.Noisy.Processing, done.What)
		}
	}
	src := mustOpen(t, in)
	written := mustOpen(t, filepath.Join(dir, "n.hdr"))
	changed := 0
	for i, v := range src.Data {
		if math.IsNaN(v) != math.IsNaN(outs[0].Data[i]) || math.IsNaN(v) != math.IsNaN(written.Data[i]) {
			t.Fatalf("voxel %d: %v in the input, %v drawn, %v written", i, v, outs[0].Data[i], written.Data[i])
		}
		if !math.IsNaN(v) && outs[0].Data[i] != v {
			changed++
		}
		if !math.IsNaN(v) && outs[0].Data[i] != outs[1].Data[i] {
			t.Fatalf("voxel %d differs between two runs of one seed", i)
		}
	}
	if changed < (len(src.Data)-src.Missing())/2 {
		t.Errorf("only %d voxels got noise", changed)
	}
}

// TestTrainJob checks that a dictionary is learned from a cube with
// missing voxels (filled, so that no patch holds NaN), at the given σ,
// and written with the atoms' picture; and that existing outputs are
// refused before any work.
func TestTrainJob(t *testing.T) {
	dir := t.TempDir()
	in, _, _ := noDataInput(t, dir)
	var seen *msi.Cube
	trainer := &denoise.Trainer{Train: func(_ context.Context, c *msi.Cube, _ denoise.Values, sigma float64, env denoise.Env) (*dictfile.Model, error) {
		seen = c
		m := &dictfile.Model{CreatedBy: env.CreatedBy, Sigma: sigma, Beta: 3 * sigma, Iterations: 1, Objective: []float64{2},
			Patch: dictfile.PatchShape{Height: 2, Width: 2, Depth: 2}}
		m.Atoms = tproduct.NewTensor(4, 3, 2)
		return m, nil
	}}
	j := &TrainJob{Input: in, Trainer: trainer, Sigma: 10, Out: filepath.Join(dir, "d.json"), AtomsImage: filepath.Join(dir, "a.png"), Program: "test"}
	done, err := j.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if done.Sigma != 10 || done.Atoms != 3 || done.Iterations != 1 || done.Objective != 2 {
		t.Errorf("outcome %+v", done)
	}
	for i, v := range seen.Data {
		if math.IsNaN(v) {
			t.Fatalf("voxel %d of the training cube is missing", i)
		}
	}
	m, err := dictfile.Read(j.Out)
	if err != nil || m.CreatedBy != "test" || m.Sigma != 10 {
		t.Errorf("written dictionary %+v, %v", m, err)
	}
	seen = nil
	if _, err := j.Run(context.Background()); err == nil || seen != nil {
		t.Errorf("existing outputs: %v, trained %v", err, seen != nil)
	}
}
