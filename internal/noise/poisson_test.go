package noise

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/testenv/cubetest"
)

// constantBands returns an h×w cube whose band b holds levels[b] everywhere.
func constantBands(h, w int, values []float64) *msi.Cube {
	c := msi.NewCube(h, w, len(values))
	for b, v := range values {
		for i := range c.Band(b) {
			c.Band(b)[i] = v
		}
	}
	return c
}

// The sample mean and variance of every band of a constant cube are the
// clean value and A·x + B, within five standard errors.
func TestPoissonGaussianMoments(t *testing.T) {
	values := []float64{0, 0.7, 3, 20, 120, 250, 80, 40}
	levels := []Level{{2, 16}, {2, 16}, {0.5, 36}, {4, 1}, {2, 0}, {0.5, 0}, {0, 25}, {1.3, 2.2}}
	clean := constantBands(200, 200, values)
	noisy, applied := mustSimulate(t, clean, Spec{PoissonGaussian: levels, Seed: 5})
	if len(applied.Levels) != len(levels) || applied.Sigmas[0] != 4 {
		t.Fatalf("applied levels %v, σ %v", applied.Levels, applied.Sigmas)
	}
	n := float64(clean.Height * clean.Width)
	for b, l := range levels {
		var sum, sumSq float64
		for _, y := range noisy.Band(b) {
			sum += y
			sumSq += y * y
		}
		mean := sum / n
		variance := sumSq/n - mean*mean
		want := l.Variance(values[b])
		if tol := 5 * math.Sqrt(want/n); math.Abs(mean-values[b]) > tol+1e-12 {
			t.Errorf("band %d (%v, x = %g): mean %.4f, want %g within %.4f", b, l, values[b], mean, values[b], tol)
		}
		// The variance of a sample variance is about (μ₄ − σ⁴)/n; for
		// these distributions μ₄ ≤ 3σ⁴ + A²·σ² (a Poisson's fourth
		// cumulant), so 5·√((2σ⁴ + A²σ²)/n) bounds five standard errors.
		if tol := 5 * math.Sqrt((2*want*want+l.A*l.A*want)/n); math.Abs(variance-want) > tol+1e-12 {
			t.Errorf("band %d (%v, x = %g): variance %.4f, want %.4f within %.4f", b, l, values[b], variance, want, tol)
		}
	}
	// Without read noise every value is a whole number of A.
	for _, b := range []int{4, 5} {
		for _, y := range noisy.Band(b) {
			if k := y / levels[b].A; k != math.Round(k) || k < 0 {
				t.Fatalf("band %d: %g is not a count of %g", b, y, levels[b].A)
			}
		}
	}
}

// A = 0 is Gaussian noise of variance B: Add's cube, bit for bit, and the
// Gaussian part of any Poisson-Gaussian cube is Add's stream.
func TestPoissonGaussianWithoutGainIsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	clean := cubetest.Uniform(rng, 17, 23, 4, 0, 255)
	got, _ := mustSimulate(t, clean, Spec{PoissonGaussian: []Level{{0, 900}}, Seed: 8})
	want := Add(nil, clean, 30, 8)
	for i := range want.Data {
		if got.Data[i] != want.Data[i] {
			t.Fatalf("voxel %d: %v, Add gives %v", i, got.Data[i], want.Data[i])
		}
	}
}

// The twin is Add's cube at the equal-power σ, and that σ is the root of
// the mean of A·x + B over the voxels with data.
func TestGaussianTwin(t *testing.T) {
	clean := constantBands(4, 5, []float64{10, 100})
	clean.Band(1)[3] = math.NaN()
	levels := []Level{{2, 16}, {0.5, 4}}
	// 20 voxels of 2·10 + 16 = 36 and 19 of 0.5·100 + 4 = 54.
	want := math.Sqrt((20*36 + 19*54) / 39.0)
	if got := EqualPowerSigma(clean, levels); math.Abs(got-want) > 1e-12 {
		t.Errorf("EqualPowerSigma = %v, want %v", got, want)
	}
	twin, applied := mustSimulate(t, clean, Spec{PoissonGaussian: levels, GaussianTwin: true, Seed: 2})
	if applied.EqualPower != EqualPowerSigma(clean, levels) || applied.Levels != nil {
		t.Errorf("twin applied: equal power %v, levels %v", applied.EqualPower, applied.Levels)
	}
	add := Add(nil, clean, applied.EqualPower, 2)
	for i := range add.Data {
		if twin.Data[i] != add.Data[i] && !(math.IsNaN(twin.Data[i]) && math.IsNaN(add.Data[i])) {
			t.Fatalf("voxel %d: twin %v, Add %v", i, twin.Data[i], add.Data[i])
		}
	}
	if !strings.Contains(strings.Join(applied.Lines(), "\n"), fmt.Sprintf("σ = %.6g", applied.EqualPower)) {
		t.Errorf("lines %q do not give the equal-power σ", applied.Lines())
	}
}

// The sparse parts are the same over Poisson-Gaussian noise as over
// Gaussian noise of the same seed: each has its own stream.
func TestPoissonGaussianKeepsSparseParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	clean := cubetest.Uniform(rng, 40, 40, 12, 0, 255)
	for i := range clean.Data {
		clean.Data[i] *= 255
	}
	sparse := Spec{StripeBands: 0.3, ImpulseBands: 0.2, DeadColumnBands: 0.2, Seed: 4}
	pgSpec, gSpec := sparse, sparse
	pgSpec.PoissonGaussian = []Level{{2, 16}}
	gSpec.Sigma = 10
	pg, pgApplied := mustSimulate(t, clean, pgSpec)
	g, gApplied := mustSimulate(t, clean, gSpec)
	pgBase, _ := mustSimulate(t, clean, Spec{PoissonGaussian: pgSpec.PoissonGaussian, Seed: 4})
	gBase, _ := mustSimulate(t, clean, Spec{Sigma: 10, Seed: 4})
	checkSameSparse(t, pg, pgBase, g, gBase)
	if !slices.Equal(pgApplied.StripeBands, gApplied.StripeBands) || !slices.Equal(pgApplied.ImpulseBands, gApplied.ImpulseBands) ||
		!slices.Equal(pgApplied.DeadColumnBands, gApplied.DeadColumnBands) {
		t.Errorf("sparse bands differ: %+v, %+v", pgApplied, gApplied)
	}

	// And a QRNN3D case over Poisson-Gaussian noise has the case's own
	// sparse part.
	for c := CaseStripe; c <= CaseMixture; c++ {
		over, _, err := SimulateCaseOver(nil, clean, c, Spec{PoissonGaussian: []Level{{2, 16}}, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		own, _ := mustCase(t, clean, c, 4)
		ownBase, _ := mustCase(t, clean, CaseNonIID, 4)
		checkSameSparse(t, over, pgBase, own, ownBase)
	}
}

// checkSameSparse checks that y1 and y2 add the same sparse part to their
// bases: every voxel has the same offset from its base, or the same
// replaced value (0 or 255).
func checkSameSparse(t *testing.T, y1, base1, y2, base2 *msi.Cube) {
	t.Helper()
	changed := 0
	for i := range y1.Data {
		d1, d2 := y1.Data[i]-base1.Data[i], y2.Data[i]-base2.Data[i]
		replaced := y1.Data[i] == y2.Data[i] && (y1.Data[i] == 0 || y1.Data[i] == 255)
		if math.Abs(d1-d2) > 1e-9 && !replaced {
			t.Fatalf("voxel %d: offsets %v and %v from the bases", i, d1, d2)
		}
		if d1 != 0 {
			changed++
		}
	}
	if changed == 0 {
		t.Fatal("no sparse noise at all")
	}
}

func TestPoissonGaussianReproducibleAndMissing(t *testing.T) {
	clean := constantBands(6, 7, []float64{50, 5, 200})
	clean.Band(1)[4] = math.NaN()
	spec := Spec{PoissonGaussian: []Level{{2, 16}, {0.3, 1}, {4, 0}}, Seed: 11}
	a, _ := mustSimulate(t, clean, spec)
	b, _ := mustSimulate(t, clean, spec)
	for i := range a.Data {
		if a.Data[i] != b.Data[i] && !(math.IsNaN(a.Data[i]) && math.IsNaN(b.Data[i])) {
			t.Fatalf("voxel %d differs between runs: %v, %v", i, a.Data[i], b.Data[i])
		}
	}
	if !math.IsNaN(a.Band(1)[4]) {
		t.Errorf("a missing voxel got %v", a.Band(1)[4])
	}
	spec.Seed = 12
	c, _ := mustSimulate(t, clean, spec)
	if c.Data[0] == a.Data[0] && c.Data[1] == a.Data[1] && c.Data[2] == a.Data[2] {
		t.Error("another seed gives the same noise")
	}
}

func TestPoissonGaussianErrors(t *testing.T) {
	clean := constantBands(3, 3, []float64{1, 2, 3})
	for _, c := range []struct {
		spec  Spec
		field string
	}{
		{Spec{PoissonGaussian: []Level{{-1, 2}}}, "noise-params"},
		{Spec{PoissonGaussian: []Level{{1, math.Inf(1)}}}, "noise-params"},
		{Spec{PoissonGaussian: []Level{{1, math.NaN()}}}, "noise-params"},
		{Spec{PoissonGaussian: []Level{{1, 2}}, Sigma: 3}, "noise-params"},
		{Spec{PoissonGaussian: []Level{{1, 2}, {1, 2}}}, "noise-params"},
		{Spec{GaussianTwin: true, Sigma: 3}, "gaussian-twin"},
	} {
		dst := constantBands(3, 3, []float64{7, 7, 7})
		_, _, err := Simulate(dst, clean, c.spec)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != c.field {
			t.Errorf("%+v: error %v, want an option error for %s", c.spec, err, c.field)
		}
		if dst.Data[0] != 7 {
			t.Errorf("%+v: the destination was written before the error", c.spec)
		}
	}
	if _, _, err := SimulateCaseOver(nil, clean, CaseStripe, Spec{Sigma: 3, StripeBands: 0.5}); err == nil {
		t.Error("a case over a spec with its own stripes was accepted")
	}
}

func TestReadLevels(t *testing.T) {
	if got, err := ReadLevels("noise-params", " 2 , 16 "); err != nil || len(got) != 1 || got[0] != (Level{2, 16}) {
		t.Errorf("pair: %v, %v", got, err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "levels.txt")
	if err := os.WriteFile(good, []byte("# a b per band\n2 16\n\n0.5,36  # band 2\n4\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLevels("noise-params", good)
	if err != nil || len(got) != 3 || got[0] != (Level{2, 16}) || got[1] != (Level{0.5, 36}) || got[2] != (Level{4, 1}) {
		t.Errorf("file: %v, %v", got, err)
	}
	if _, err := ExpandLevels("noise-params", got, 4); err == nil {
		t.Error("3 levels expanded to 4 bands")
	}
	if e, err := ExpandLevels("noise-params", got[:1], 4); err != nil || len(e) != 4 || e[3] != got[0] {
		t.Errorf("one level expanded: %v, %v", e, err)
	}
	for name, text := range map[string]string{"three.txt": "1 2 3\n", "neg.txt": "1 -2\n", "word.txt": "a b\n", "empty.txt": "# nothing\n"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadLevels("noise-params", p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
	for _, s := range []string{"2", "2,x", "-1,3", filepath.Join(dir, "missing.txt")} {
		var oe *option.Error
		if _, err := ReadLevels("noise-params", s); !errors.As(err, &oe) || oe.Field != "noise-params" {
			t.Errorf("%q: error %v, want an option error for noise-params", s, err)
		}
	}
}
