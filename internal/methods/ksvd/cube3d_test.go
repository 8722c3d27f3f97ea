package ksvd

import (
	"context"
	"errors"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/testenv/regress"
)

// Test3DThreadsBitIdentical checks that the output of 3dksvd does not
// depend on the number of workers.
func Test3DThreadsBitIdentical(t *testing.T) {
	noisy := synthetic()
	var outs [2]*msi.Cube
	for i, th := range []int{1, 3} {
		d := &Denoiser3D{Options: Options3D{Patch: 4, Depth: 2, Atoms: 72, Samples: 500, Iters: 3, Threads: th}}
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

// Test3DCancelled checks that a cancelled context stops 3dksvd's Denoise
// with context.Canceled.
func Test3DCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &Denoiser3D{Options: Options3D{Patch: 4, Depth: 2, Atoms: 72, Samples: 500}}
	if _, _, err := d.Denoise(ctx, synthetic(), 20); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// Test3DValidateNamesTheFlag checks that bad settings of 3dksvd are
// *option.Error with the flag spelling of the setting, and that a cube
// smaller than the patch is refused.
func Test3DValidateNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		o     Options3D
		h, w  int
		field string
	}{
		{Options3D{Patch: 1}, 64, 64, "patch"},
		{Options3D{Atoms: 200}, 64, 64, "atoms"},
		{Options3D{Atoms: 16 * 5}, 64, 64, "atoms"},
		{Options3D{Depth: -1}, 64, 64, "depth"},
		{Options3D{Iters: -1}, 64, 64, "iters"},
		{Options3D{Samples: 300}, 64, 64, "samples"},
		{Options3D{Stride: 6}, 64, 64, "stride"},
		{Options3D{}, 6, 6, "atoms"},
	} {
		err := c.o.Resolve(20).Validate(c.h, c.w, 31)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != c.field {
			t.Errorf("%+v on %d×%d: got %v, want an error for %q", c.o, c.h, c.w, err, c.field)
		}
	}
	for _, c := range []struct {
		o       Options3D
		h, w, b int
	}{
		{Options3D{}, 4, 64, 31},
		{Options3D{Depth: 32, Atoms: 64 * 32}, 64, 64, 31},
	} {
		if err := c.o.Resolve(20).Validate(c.h, c.w, c.b); err == nil {
			t.Errorf("%+v on %d×%d×%d: a cube smaller than the patch was accepted", c.o, c.h, c.w, c.b)
		}
	}
	if err := (Options3D{}).Resolve(20).Validate(64, 64, 31); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// regression3DPSNR is the PSNR (dB) that Test3DRegressionBalloons reached
// when it was recorded; the test fails 0.3 dB below it. Raise it when the
// method improves; lowering it needs a reason in the commit that does so.
const regression3DPSNR = 35.3660

// Test3DRegressionBalloons is the CI regression run of 3dksvd: σ = 30
// noise (seed 1) on a 64×64×16 crop of the shared balloons scene (rows
// 256–319, columns 192–255, bands 8–23), denoised with the defaults but
// 5000 training patches, so that it runs in a few seconds.
func Test3DRegressionBalloons(t *testing.T) {
	clean, noisy := regress.Balloons(t, 256, 192, 8, 64, 16, 30)
	out, _, err := (&Denoiser3D{Options: Options3D{Samples: 5000}}).Denoise(context.Background(), noisy, 30)
	if err != nil {
		t.Fatal(err)
	}
	regress.Check(t, clean, out, regression3DPSNR)
}
