package methods

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/option"
	"tdsc/internal/tile"
	"tdsc/internal/tile/tiletest"
)

// fast are the settings, as flags would give them, that make each method
// quick on the tiny cube of TestEveryMethod; a method without an entry
// runs with its declared defaults.
var fast = map[string]map[string]string{
	"nonlocal": {"samples": "300", "iters": "2", "atoms": "12", "group": "16"},
	"2dsc":     {"samples": "300", "iters": "2", "atoms": "12"},
	"bwksvd":   {"patch": "4", "atoms": "16", "samples": "200", "iters": "2"},
	"3dksvd":   {"patch": "4", "depth": "2", "atoms": "32", "samples": "300", "iters": "2"},
	"parafac":  {"iters": "20"},
	"tensr":    {"samples": "300", "iters": "2", "atoms": "4,4,3"},
	"sc":       {"samples": "300", "iters": "2", "atoms": "20"},
}

// tinyCube returns a smooth 16×16×8 cube with edges, on [0, 255], and its
// noisy version at σ = 20.
func tinyCube() (clean, noisy *msi.Cube) {
	clean = msi.NewCube(16, 16, 8)
	for b := range clean.Bands {
		for y := range clean.Height {
			for x := range clean.Width {
				v := 60 + 4*float64(x) + 3*float64(y) + 8*float64(b)
				if (x/5+y/6)%2 == 1 {
					v += 50
				}
				clean.Set(y, x, b, v)
			}
		}
	}
	return clean, noise.Add(nil, clean, 20, 1)
}

func mse(a, b *msi.Cube) float64 {
	s := 0.0
	for i, v := range a.Data {
		s += (v - b.Data[i]) * (v - b.Data[i])
	}
	return s / float64(len(a.Data))
}

// TestRegistry checks the registry's invariants: unique names, the
// default first, lookups, and declarations fit for flags: a setting is
// declared once per method, with help, and one name has one rule
// wherever methods share its kind.
func TestRegistry(t *testing.T) {
	names := Names()
	if len(names) != len(All()) || Default().Name != names[0] {
		t.Fatalf("names %v, default %s", names, Default().Name)
	}
	for i, n := range names {
		if slices.Index(names, n) != i {
			t.Errorf("method %s is registered twice", n)
		}
		if s, err := Lookup(n); err != nil || s.Name != n {
			t.Errorf("Lookup(%q): %s, %v", n, s.Name, err)
		}
	}
	var oe *option.Error
	if _, err := Lookup("median"); !errors.As(err, &oe) || oe.Field != "method" {
		t.Errorf("Lookup of an unknown method: %v", err)
	}
	if s, tr := Trainer(); !s.TakesDictionary || tr.Train == nil || len(tr.Settings) == 0 {
		t.Errorf("the trainer %s: %+v", s.Name, tr)
	}
	for _, s := range All() {
		if s.Summary == "" || s.New == nil || s.BytesPerVoxel <= 0 {
			t.Errorf("%s: summary %q, New %v, %v bytes per voxel", s.Name, s.Summary, s.New != nil, s.BytesPerVoxel)
		}
		var seen []string
		for _, d := range s.Flags() {
			if slices.Contains(seen, d.Name) {
				t.Errorf("%s declares --%s twice", s.Name, d.Name)
			}
			seen = append(seen, d.Name)
			if d.Help == "" {
				t.Errorf("%s: --%s has no help", s.Name, d.Name)
			}
		}
	}
}

// TestEveryMethod walks every registered method from settings as flags
// give them to Denoise on a tiny cube: the result has the cube's size, is
// finite and closer to the clean cube than the noisy one; Check accepts
// what Denoise runs; the capabilities the Spec declares are the method's;
// and the method keeps nothing between runs: a run after one on another
// cube, and two runs at once, give the result of the first run.
func TestEveryMethod(t *testing.T) {
	clean, noisy := tinyCube()
	const sigma = 20
	for _, spec := range All() {
		t.Run(spec.Name, func(t *testing.T) {
			v, err := spec.Parse(fast[spec.Name])
			if err != nil {
				t.Fatal(err)
			}
			m, known, err := spec.Build(v, true, denoise.Env{Threads: 2})
			if err != nil || known != 0 {
				t.Fatalf("Build: known σ %v, %v", known, err)
			}
			if err := m.Check(sigma, clean.Height, clean.Width, clean.Bands); err != nil {
				t.Fatalf("Check: %v", err)
			}
			out, res, err := m.Denoise(context.Background(), noisy, sigma)
			if err != nil {
				t.Fatal(err)
			}
			if !out.SameSize(noisy) {
				t.Fatalf("result %s for a %s cube", out.Size(), noisy.Size())
			}
			for i, x := range out.Data {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("voxel %d is %v", i, x)
				}
			}
			if after, before := mse(out, clean), mse(noisy, clean); after >= before {
				t.Errorf("MSE %.1f after, %.1f before", after, before)
			}
			if len(res.Settings) == 0 {
				t.Error("no settings in the Result")
			}
			if (res.Dictionary != nil) != spec.SavesDictionary {
				t.Errorf("learned dictionary %v; the Spec declares that it saves one: %v", res.Dictionary != nil, spec.SavesDictionary)
			}
			other := noise.Add(nil, clean, 35, 2)
			if _, _, err := m.Denoise(context.Background(), other, 35); err != nil {
				t.Fatal(err)
			}
			if again, _, err := m.Denoise(context.Background(), noisy, sigma); err != nil || !slices.Equal(again.Data, out.Data) {
				t.Errorf("a run after one on another cube differs from the first (%v)", err)
			}
			var wg sync.WaitGroup
			var outs [2]*msi.Cube
			var errs [2]error
			for i := range outs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					outs[i], _, errs[i] = m.Denoise(context.Background(), noisy, sigma)
				}()
			}
			wg.Wait()
			for i := range outs {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				if !slices.Equal(outs[i].Data, out.Data) {
					t.Errorf("run %d of two at once differs from the run alone", i+1)
				}
			}
		})
	}
}

// TestTilers checks that the methods whose Spec declares exact strips give
// the whole cube's result strip by strip, and that preparing the strips
// leaves the method as it was.
func TestTilers(t *testing.T) {
	_, noisy := tinyCube()
	const sigma = 20
	for _, spec := range All() {
		if !spec.ExactStrips() {
			continue
		}
		t.Run(spec.Name, func(t *testing.T) {
			v, err := spec.Parse(fast[spec.Name])
			if err != nil {
				t.Fatal(err)
			}
			m, _, err := spec.Build(v, true, denoise.Env{})
			if err != nil {
				t.Fatal(err)
			}
			want, wantRes, err := m.Denoise(context.Background(), noisy, sigma)
			if err != nil {
				t.Fatal(err)
			}
			tiler := m.(denoise.Tiler)
			strips := tile.Plan(noisy.Height, 1, tiler.TileGeometry(sigma))
			if len(strips) < 2 {
				t.Fatalf("%d strip", len(strips))
			}
			strip, prepared, err := tiler.PrepareTiles(context.Background(), tiletest.Lines{Cube: noisy}, strips, sigma)
			if err != nil {
				t.Fatal(err)
			}
			if (prepared.Dictionary != nil) != spec.SavesDictionary {
				t.Errorf("PrepareTiles learned a dictionary: %v; the Spec saves one: %v", prepared.Dictionary != nil, spec.SavesDictionary)
			}
			got := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
			var last denoise.Result
			err = tile.Run(context.Background(), tiletest.Lines{Cube: noisy}, tiletest.Lines{Cube: got}, strips,
				func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
					out, res, err := strip.Denoise(ctx, c, sigma)
					last = res
					return out, err
				}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Data, want.Data) {
				t.Errorf("%d strips differ from the whole cube", len(strips))
			}
			if !slices.Equal(last.Settings, wantRes.Settings) {
				t.Errorf("a strip's settings %v, the whole cube's %v", last.Settings, wantRes.Settings)
			}
			again, againRes, err := m.Denoise(context.Background(), noisy, sigma)
			if err != nil || !slices.Equal(again.Data, want.Data) || (againRes.Dictionary != nil) != spec.SavesDictionary {
				t.Errorf("the method changed after PrepareTiles (%v)", err)
			}
		})
	}
}
