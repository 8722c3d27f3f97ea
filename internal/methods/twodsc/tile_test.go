package twodsc

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// cancelAfter is a strip reader that counts its reads and the lines read
// and cancels ctx after the reads-th.
type cancelAfter struct {
	tiletest.Lines
	reads, done, lines int
	cancel             context.CancelFunc
}

func (r *cancelAfter) ReadLines(y0, n int) (*msi.Cube, error) {
	r.done++
	r.lines += n
	if r.done == r.reads {
		r.cancel()
	}
	return r.Lines.ReadLines(y0, n)
}

// progress records a Reporter's stages and their last counts.
type progress struct {
	stages []string
	totals []int64
	last   []int64
}

func (p *progress) Logf(string, ...any) {}
func (p *progress) Start(what, _ string, total int64) {
	p.stages, p.totals, p.last = append(p.stages, what), append(p.totals, total), append(p.last, 0)
}
func (p *progress) Update(done int64, _ string) { p.last[len(p.last)-1] = done }
func (p *progress) Finish()                     {}

// Gathering the training sample from the strips reads windows of a few
// lines of a wide cube (here 2 lines at a time), each line once, reports the lines done
// as a stage of its own, and stops between windows once its context is
// cancelled; the dictionary is still the whole cube's, bit for bit.
func TestGatherWindows(t *testing.T) {
	clean := readCrop(t)
	noisy := noise.Add(nil, clean.Crop(10, 10, 0, 40, 30, 6), 20, 5)
	o := Options{Samples: 300, TrainIters: 2, InnerIters: 5, Depth: 3}
	_, whole, err := (&Denoiser{Options: o}).Denoise(context.Background(), noisy, 20)
	if err != nil {
		t.Fatal(err)
	}
	defer func(v int) { gatherValues = v }(gatherValues)
	gatherValues = 2 * noisy.Width * noisy.Bands

	log := &progress{}
	d := &Denoiser{Options: o, Report: log}
	strips := tile.Plan(noisy.Height, 16, d.TileGeometry(20))
	r := &cancelAfter{Lines: tiletest.Lines{Cube: noisy}, cancel: func() {}}
	_, res, err := d.PrepareTiles(context.Background(), r, strips, 20)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Dictionary.Atoms.Data, whole.Dictionary.Atoms.Data; !slices.Equal(got, want) {
		t.Errorf("the dictionary learned from windows of 2 lines differs from the whole cube's")
	}
	if r.done < noisy.Height/4 || r.lines > noisy.Height {
		t.Errorf("%d reads of %d lines in all for %d lines: the windows are not of 2 lines, each line read once", r.done, r.lines, noisy.Height)
	}
	if len(log.stages) == 0 || log.stages[0] != "gathering training patches" || log.totals[0] != int64(noisy.Height) || log.last[0] != int64(noisy.Height) {
		t.Errorf("reported stages %q, totals %v, last counts %v: want gathering of %d lines first", log.stages, log.totals, log.last, noisy.Height)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r = &cancelAfter{Lines: tiletest.Lines{Cube: noisy}, reads: 3, cancel: cancel}
	if _, _, err := d.PrepareTiles(ctx, r, strips, 20); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while gathering: %v, want context.Canceled", err)
	}
	if r.done != 3 {
		t.Errorf("%d windows read after the third cancelled the context", r.done-3)
	}
}
