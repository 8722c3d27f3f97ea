package twodsc

import (
	"context"
	"errors"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/testenv"
	"tdsc/internal/testenv/regress"
	"tdsc/internal/tile"
	"tdsc/internal/tile/tiletest"
)

// The tests of the method sc: the pipeline with Options.Vectorised.

// scRegressionPSNR is the PSNR (dB) that the default settings of sc
// reached in TestSCRegressionBalloons when it was recorded; the test fails
// 0.3 dB below it. Lowering it needs a reason in the commit that does so.
const scRegressionPSNR = 37.7623

func balloons(t *testing.T) *msi.Cube {
	t.Helper()
	c, err := formats.Open(testenv.Path(t, "cave", "balloons_ms"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSCResolve(t *testing.T) {
	o := Options{Vectorised: true}.Resolve(30)
	if !o.Vectorised || o.Atoms != 150 || o.Patch != 5 || o.Depth != 5 {
		t.Errorf("defaults: vectorised %v, %d atoms, %d×%d patches; want true, 150, 5×5", o.Vectorised, o.Atoms, o.Patch, o.Depth)
	}
	if o := (Options{Vectorised: true, Depth: 3}).Resolve(30); o.Atoms != 90 {
		t.Errorf("depth 3: %d atoms, want 90", o.Atoms)
	}
	if o := (Options{Vectorised: true, Atoms: 30}).Resolve(30); o.Atoms != 30 {
		t.Errorf("atoms 30 given: %d atoms", o.Atoms)
	}
}

// TestSCRegressionBalloons is the CI regression run of sc: σ = 30 noise
// (seed 1) on a 64×64×31 crop of the full balloons scene (rows 256–319,
// columns 192–255), default settings.
func TestSCRegressionBalloons(t *testing.T) {
	clean, noisy := regress.Balloons(t, 256, 192, 0, 64, 31, 30)
	out, _, err := (&Denoiser{Options: Options{Vectorised: true}}).Denoise(context.Background(), noisy, 30)
	if err != nil {
		t.Fatal(err)
	}
	regress.Check(t, clean, out, scRegressionPSNR)
}

// TestSCThreadsBitIdentical checks that the output does not depend on the
// number of workers, and TestSCCancelled that a cancelled run stops.
func TestSCThreadsBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	noisy := noise.Add(nil, balloons(t).Crop(100, 100, 0, 24, 24, 8), 20, 3)
	var outs [2]*msi.Cube
	for i, threads := range []int{1, 3} {
		d := Denoiser{Options: Options{Vectorised: true, Samples: 400, TrainIters: 3, Threads: threads}}
		out, _, err := d.Denoise(context.Background(), noisy, 20)
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

func TestSCCancelled(t *testing.T) {
	noisy := msi.NewCube(20, 20, 6)
	for i := range noisy.Data {
		noisy.Data[i] = float64(i % 251)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := Denoiser{Options: Options{Vectorised: true, Samples: 200}}
	if _, _, err := d.Denoise(ctx, noisy, 20); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// Strip by strip (PrepareTiles, tile.Run), sc gives the whole cube's
// result bit for bit, as 2dsc does, and returns no dictionary to save.
func TestSCTilesBitIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: reads a full scene")
	}
	noisy := noise.Add(nil, balloons(t).Crop(100, 100, 0, 41, 24, 8), 20, 3)
	o := Options{Vectorised: true, Samples: 400, TrainIters: 3}
	whole := Denoiser{Options: o}
	want, res, err := whole.Denoise(context.Background(), noisy, 20)
	if err != nil {
		t.Fatal(err)
	}
	if res.Dictionary != nil {
		t.Error("sc returned its vectorised dictionary")
	}
	d := Denoiser{Options: o}
	strips := tile.Plan(noisy.Height, 10, d.TileGeometry(20))
	if len(strips) < 3 {
		t.Fatalf("%d strips", len(strips))
	}
	strip, prepared, err := d.PrepareTiles(context.Background(), tiletest.Lines{Cube: noisy}, strips, 20)
	if err != nil {
		t.Fatal(err)
	}
	if prepared.Dictionary != nil {
		t.Error("sc's PrepareTiles returned its vectorised dictionary")
	}
	got := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
	if err := tile.Run(context.Background(), tiletest.Lines{Cube: noisy}, tiletest.Lines{Cube: got}, strips,
		func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
			out, _, err := strip.Denoise(ctx, c, 20)
			return out, err
		}, nil); err != nil {
		t.Fatal(err)
	}
	for k := range want.Data {
		if got.Data[k] != want.Data[k] {
			t.Fatalf("voxel %d: %v in strips, %v whole", k, got.Data[k], want.Data[k])
		}
	}
}
