package pipeline

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
)

// logs is a report.Reporter that keeps the log lines.
type logs struct{ lines []string }

func (l *logs) Logf(format string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}
func (*logs) Start(string, string, int64) {}
func (*logs) Update(int64, string)        {}
func (*logs) Finish()                     {}

func (l *logs) has(s string) bool {
	return slices.ContainsFunc(l.lines, func(line string) bool { return strings.Contains(line, s) })
}

// noDataInput writes, as ENVI with data ignore value -9999, the scene
// plus Gaussian noise of σ 10 with no data in lines 16–31, columns 0–11
// of every band, and returns its path, the clean scene and the noisy cube
// without the no-data region.
func noDataInput(t *testing.T, dir string) (string, *msi.Cube, *msi.Cube) {
	t.Helper()
	clean := scene(48, 48, 6)
	full := noise.Add(nil, clean, 10, 5)
	noisy := full.Clone()
	for b := range noisy.Bands {
		for y := 16; y < 32; y++ {
			for x := range 12 {
				noisy.Set(y, x, b, math.NaN())
			}
		}
	}
	noisy.NoData, noisy.HasNoData = -9999, true
	return writeInput(t, dir, noisy), clean, full
}

// TestNoDataKeptAndNotPulled: the no-data voxels of an ENVI input come out
// exactly as they were (the data ignore value, with its key), and the
// valid voxels beside them are not pulled toward it: the mean error of the
// three columns next to the no-data region is within 2 (σ/5) of theirs
// when the same noisy cube has no no-data region (the filled values, the
// data's mirror image, differ from the scene that is not there by its
// slope), as is the interior's. Denoised as data, -9999 would pull a 3×3
// mean beside it down by over 1000.
func TestNoDataKeptAndNotPulled(t *testing.T) {
	dir := t.TempDir()
	in, clean, full := noDataInput(t, dir)
	var l logs
	j := job(in, dir, nil)
	j.Report, j.Sigma = &l, 10
	out, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if out.Path != PathFill || !l.has("1152 of 13824 voxels (8.33 %) are missing") {
		t.Errorf("path %q, log %q", out.Path, l.lines)
	}
	got, err := formats.Open(j.Out)
	if err != nil {
		t.Fatal(err)
	}
	if !got.HasNoData || got.NoData != -9999 {
		t.Errorf("output no-data value %v (%v)", got.NoData, got.HasNoData)
	}
	for i, v := range got.Data {
		y, x := i/48%48, i%48
		if missing := y >= 16 && y < 32 && x < 12; missing != math.IsNaN(v) {
			t.Fatalf("voxel %d (line %d, column %d): %v", i, y, x, v)
		}
	}
	control, _, _ := smoother{}.Denoise(context.Background(), full, 10)
	bias := func(c *msi.Cube, x0, x1 int) float64 {
		sum, n := 0.0, 0
		for b := range clean.Bands {
			for y := 16; y < 32; y++ {
				for x := x0; x < x1; x++ {
					sum += c.At(y, x, b) - clean.At(y, x, b)
					n++
				}
			}
		}
		return sum / float64(n)
	}
	for _, cols := range [][2]int{{12, 15}, {30, 33}} {
		if with, without := bias(got, cols[0], cols[1]), bias(control, cols[0], cols[1]); math.Abs(with-without) > 2 {
			t.Errorf("columns %d–%d: mean error %.3f beside the no-data region, %.3f without it", cols[0], cols[1]-1, with, without)
		}
	}
}

// TestMaskWrittenBack: the voxels a --mask marks are left out of the data
// and come back exactly as they were; a mask of the wrong size is an
// error naming it.
func TestMaskWrittenBack(t *testing.T) {
	dir := t.TempDir()
	noisy := noise.Add(nil, scene(30, 30, 4), 10, 6)
	noisy.Set(5, 5, 2, 1e4) // a value the mask hides from the denoiser
	in := writeInput(t, dir, noisy)
	mask := msi.NewCube(30, 30, 1)
	mask.Set(5, 5, 0, 1)
	maskPath := filepath.Join(dir, "mask.npy")
	if _, err := formats.Write(maskPath, mask, msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	j := job(in, dir, nil)
	j.Mask = maskPath
	out, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	for b := range 4 {
		if got, want := out.Result.At(5, 5, b), noisy.At(5, 5, b); math.Abs(got-want) > 1e-3 {
			t.Errorf("band %d: the masked voxel is %v, was %v", b, got, want)
		}
	}
	if v := out.Result.At(5, 6, 2); v > 500 {
		t.Errorf("the masked value leaked into its neighbour: %v", v)
	}
	bad := filepath.Join(dir, "bad.npy")
	if _, err := formats.Write(bad, msi.NewCube(3, 30, 1), msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	j.Mask, j.Force = bad, true
	if _, err := Run(context.Background(), j); err == nil || !strings.Contains(err.Error(), "--mask "+bad+" is 3×30×1") {
		t.Errorf("a mask of the wrong size: %v", err)
	}
}

// TestStripsWithMissing: in strips, every strip has its missing voxels
// filled before the method runs and written back as missing after.
func TestStripsWithMissing(t *testing.T) {
	dir := t.TempDir()
	in, _, _ := noDataInput(t, dir)
	var l logs
	j := job(in, dir, nil)
	j.Report, j.Strips.Lines, j.Sigma = &l, 12, 10
	out, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	got, err := formats.Open(j.Out)
	if err != nil {
		t.Fatal(err)
	}
	if out.Strips < 2 || got.Missing() != 1152 || got.NoData != -9999 { // 12 lines are widened to the halo
		t.Errorf("%d strips, %d missing voxels, no-data value %v", out.Strips, got.Missing(), got.NoData)
	}
	if !l.has("; no-data value -9999") {
		t.Errorf("log %q", l.lines)
	}
}

// TestGivenSigmaChecked: a given σ far from the estimate is warned of,
// whole and in strips; one near it is not.
func TestGivenSigmaChecked(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir, noise.Add(nil, scene(40, 16, 3), 10, 2))
	for _, strips := range []int{0, 10} {
		for _, c := range []struct {
			sigma float64
			warn  bool
		}{{10, false}, {1e9, true}, {1, true}} {
			var l logs
			j := job(in, dir, nil)
			j.Report, j.Sigma, j.Strips.Lines, j.Force = &l, c.sigma, strips, true
			if _, err := Run(context.Background(), j); err != nil {
				t.Fatal(err)
			}
			if l.has("warning: the given σ is") != c.warn {
				t.Errorf("strips %d, σ %v: log %q", strips, c.sigma, l.lines)
			}
		}
	}
}
