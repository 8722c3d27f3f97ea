package sc

import (
	"context"
	"errors"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/methods/twodsc"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/testenv"
	"tdsc/internal/testenv/regress"
	"tdsc/internal/tile"
	"tdsc/internal/tile/tiletest"
)

// regressionPSNR is the PSNR (dB) that the default settings reached in
// TestRegressionBalloons when it was recorded; the test fails 0.3 dB below
// it. Lowering it needs a reason in the commit that does so.
const regressionPSNR = 37.7623

func balloons(t *testing.T) *msi.Cube {
	t.Helper()
	c, err := formats.Open(testenv.Path(t, "cave", "balloons_ms"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResolve(t *testing.T) {
	o := Resolve(twodsc.Options{}, 30)
	if !o.Vectorised || o.Atoms != 150 || o.Patch != 5 || o.Depth != 5 {
		t.Errorf("defaults: vectorised %v, %d atoms, %d×%d patches; want true, 150, 5×5", o.Vectorised, o.Atoms, o.Patch, o.Depth)
	}
	if o := Resolve(twodsc.Options{Depth: 3}, 30); o.Atoms != 90 {
		t.Errorf("depth 3: %d atoms, want 90", o.Atoms)
	}
	if o := Resolve(twodsc.Options{Atoms: 30}, 30); o.Atoms != 30 {
		t.Errorf("atoms 30 given: %d atoms", o.Atoms)
	}
}

// TestRegressionBalloons is the CI regression run: σ = 30 noise (seed 1) on
// a 64×64×31 crop of the full balloons scene (rows 256–319, columns
// 192–255), default settings.
func TestRegressionBalloons(t *testing.T) {
	clean, noisy := regress.Balloons(t, 256, 192, 0, 64, 31, 30)
	out, err := (&Denoiser{}).Denoise(context.Background(), noisy, 30)
	if err != nil {
		t.Fatal(err)
	}
	regress.Check(t, clean, out, regressionPSNR)
}

// TestThreadsBitIdentical checks that the output does not depend on the
// number of workers, and TestCancelled that a cancelled run stops.
func TestThreadsBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	noisy := noise.Add(nil, balloons(t).Crop(100, 100, 0, 24, 24, 8), 20, 3)
	var outs [2]*msi.Cube
	for i, threads := range []int{1, 3} {
		d := Denoiser{Options: twodsc.Options{Samples: 400, TrainIters: 3, Threads: threads}}
		out, err := d.Denoise(context.Background(), noisy, 20)
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = out
	}
	for k := range outs[0].Data {
		if outs[0].Data[k] != outs[1].Data[k] {
			t.Fatalf("voxel %d: %v with 1 thread, %v with 3", k, outs[0].Data[k], outs[1].Data[k])
		}
	}
}

func TestCancelled(t *testing.T) {
	noisy := msi.NewCube(20, 20, 6)
	for i := range noisy.Data {
		noisy.Data[i] = float64(i % 251)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := Denoiser{Options: twodsc.Options{Samples: 200}}
	if _, err := d.Denoise(ctx, noisy, 20); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// Strip by strip (PrepareTiles, tile.Run) gives the whole cube's result
// bit for bit, as for 2dsc.
func TestTilesBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	noisy := noise.Add(nil, balloons(t).Crop(100, 100, 0, 41, 24, 8), 20, 3)
	o := twodsc.Options{Samples: 400, TrainIters: 3}
	whole := Denoiser{Options: o}
	want, err := whole.Denoise(context.Background(), noisy, 20)
	if err != nil {
		t.Fatal(err)
	}
	d := Denoiser{Options: o}
	strips := tile.Plan(noisy.Height, 10, d.TileGeometry(20))
	if len(strips) < 3 {
		t.Fatalf("%d strips", len(strips))
	}
	if err := d.PrepareTiles(context.Background(), tiletest.Lines{Cube: noisy}, strips, 20); err != nil {
		t.Fatal(err)
	}
	got := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
	if err := tile.Run(context.Background(), tiletest.Lines{Cube: noisy}, tiletest.Lines{Cube: got}, strips,
		func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) { return d.Denoise(ctx, c, 20) }, nil); err != nil {
		t.Fatal(err)
	}
	for k := range want.Data {
		if got.Data[k] != want.Data[k] {
			t.Fatalf("voxel %d: %v in strips, %v whole", k, got.Data[k], want.Data[k])
		}
	}
}
