package ksvd

import (
	"context"
	"errors"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/option"
	"tdsc/internal/testenv/regress"
)

// synthetic returns a small smooth cube with σ = 20 noise.
func synthetic() *msi.Cube {
	c := msi.NewCube(26, 23, 3)
	for b := range c.Bands {
		for y := range c.Height {
			for x := range c.Width {
				c.Set(y, x, b, float64(40+3*x+2*y+10*b+((x*y)%7)*8))
			}
		}
	}
	return noise.Add(nil, c, 20, 4)
}

// TestBandThreadsBitIdentical checks that the output of bwksvd does not
// depend on the number of workers.
func TestBandThreadsBitIdentical(t *testing.T) {
	noisy := synthetic()
	var outs [2]*msi.Cube
	for i, th := range []int{1, 3} {
		d := &BandDenoiser{Options: BandOptions{Atoms: 100, Samples: 500, Iters: 3, Threads: th}}
		var err error
		if outs[i], _, err = d.Denoise(context.Background(), noisy, 20); err != nil {
			t.Fatal(err)
		}
	}
	for i := range outs[0].Data {
		if outs[0].Data[i] != outs[1].Data[i] {
			t.Fatalf("voxel %d: %v with 1 thread, %v with 3", i, outs[0].Data[i], outs[1].Data[i])
		}
	}
}

// TestBandCancelled checks that a cancelled context stops bwksvd's Denoise
// with context.Canceled.
func TestBandCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &BandDenoiser{Options: BandOptions{Atoms: 100, Samples: 500}}
	if _, _, err := d.Denoise(ctx, synthetic(), 20); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// TestBandValidateNamesTheFlag checks that bad settings of bwksvd are
// *option.Error with the flag spelling of the setting, and that a cube
// smaller than the patch is refused.
func TestBandValidateNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		o     BandOptions
		h, w  int
		field string
	}{
		{BandOptions{Patch: 1}, 64, 64, "patch"},
		{BandOptions{Atoms: 200}, 64, 64, "atoms"},
		{BandOptions{Atoms: 49}, 64, 64, "atoms"},
		{BandOptions{Iters: -1}, 64, 64, "iters"},
		{BandOptions{Samples: 100}, 64, 64, "samples"},
		{BandOptions{Stride: 9}, 64, 64, "stride"},
		{BandOptions{}, 12, 12, "atoms"},
	} {
		err := c.o.Resolve(20).Validate(c.h, c.w, 3)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != c.field {
			t.Errorf("%+v on %d×%d: got %v, want an error for %q", c.o, c.h, c.w, err, c.field)
		}
	}
	if err := (BandOptions{}).Resolve(20).Validate(7, 64, 3); err == nil {
		t.Error("a band 7 pixels high was accepted for 8×8 patches")
	}
	if err := (BandOptions{}).Resolve(20).Validate(64, 64, 3); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// bandRegressionPSNR is the PSNR (dB) that TestBandRegressionBalloons
// reached when it was recorded; the test fails 0.3 dB below it. Raise it
// when the method improves; lowering it needs a reason in the commit that
// does so.
const bandRegressionPSNR = 34.1453

// TestBandRegressionBalloons is the CI regression run of bwksvd: σ = 30
// noise (seed 1) on a 64×64 crop of the shared balloons scene (rows
// 256–319, columns 192–255, bands 10–15), denoised with the defaults but
// 3000 training patches per band, so that it runs in a few seconds.
func TestBandRegressionBalloons(t *testing.T) {
	clean, noisy := regress.Balloons(t, 256, 192, 10, 64, 6, 30)
	out, _, err := (&BandDenoiser{Options: BandOptions{Samples: 3000}}).Denoise(context.Background(), noisy, 30)
	if err != nil {
		t.Fatal(err)
	}
	regress.Check(t, clean, out, bandRegressionPSNR)
}
