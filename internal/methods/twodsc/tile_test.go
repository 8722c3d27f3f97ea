package twodsc

import (
	"context"
	"fmt"
	"testing"

	"tdsc/internal/dictfile"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/tile"
	"tdsc/internal/tile/tiletest"
)

// Denoising strip by strip (TileGeometry, PrepareTiles, tile.Run) gives the
// whole cube's result bit for bit: with the dictionary learned (the same
// sample, cut from the strips) and with one given, for steps 1 to the patch
// size, both weightings, patch sizes 4 and 5, and strips of one alignment
// to more than the cube.
func TestTilesBitIdentical(t *testing.T) {
	clean := readCrop(t)
	small := clean.Crop(20, 30, 8, 61, 27, 7)
	noisy := noise.Add(nil, small, 20, 5)
	for _, c := range []struct {
		patch, stride int
		weights       Weighting
		lines         []int
	}{
		{5, 1, Sparsity, []int{1, 13, 30, 100}},
		{5, 2, Sparsity, []int{12, 25}},
		{5, 3, Uniform, []int{1, 20}},
		{5, 5, Sparsity, []int{10}},
		{4, 3, Uniform, []int{7, 18}},
	} {
		o := Options{Patch: c.patch, Stride: c.stride, Weighting: c.weights, Samples: 500, TrainIters: 3, InnerIters: 10, Depth: 3}
		whole := &Denoiser{Options: o}
		want, res, err := whole.Denoise(context.Background(), noisy, 20)
		if err != nil {
			t.Fatal(err)
		}
		for _, given := range []*dictfile.Model{nil, res.Dictionary} {
			for _, lines := range c.lines {
				name := fmt.Sprintf("patch %d step %d %v, %d lines, dictionary given %v", c.patch, c.stride, c.weights, lines, given != nil)
				d := &Denoiser{Options: o, Model: given}
				strips := tile.Plan(noisy.Height, lines, d.TileGeometry(20))
				strip, prepared, err := d.PrepareTiles(context.Background(), tiletest.Lines{Cube: noisy}, strips, 20)
				if err != nil {
					t.Fatal(err)
				}
				got := msi.NewCube(noisy.Height, noisy.Width, noisy.Bands)
				err = tile.Run(context.Background(), tiletest.Lines{Cube: noisy}, tiletest.Lines{Cube: got}, strips,
					func(ctx context.Context, c *msi.Cube) (*msi.Cube, error) {
						out, _, err := strip.Denoise(ctx, c, 20)
						return out, err
					}, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range want.Data {
					if got.Data[i] != want.Data[i] {
						b, p := i/(noisy.Height*noisy.Width), i%(noisy.Height*noisy.Width)
						t.Fatalf("%s: voxel (line %d, sample %d, band %d) %v, whole cube %v", name, p/noisy.Width, p%noisy.Width, b, got.Data[i], want.Data[i])
					}
				}
				if given == nil && prepared.Dictionary == nil {
					t.Fatalf("%s: PrepareTiles learned no dictionary", name)
				}
				if given != nil && prepared.Dictionary != nil {
					t.Fatalf("%s: PrepareTiles learned a dictionary although one was given", name)
				}
			}
		}
	}
}
