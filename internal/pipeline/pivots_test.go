package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"tdsc/internal/report"
	"tdsc/internal/stages/repair"
	"tdsc/internal/testenv/cubetest"
	"tdsc/internal/tile"
)

// TestFitPivots: on the whitened path the strips' pivots are the band
// means of the whole cube with its missing voxels filled, as the whole
// run's whitening takes them; a path that does not whiten keeps none.
func TestFitPivots(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 30))
	c := cubetest.Uniform(rng, 40, 9, 4, 0, 255)
	for i := range 30 {
		c.Data[i*7] = math.NaN()
	}
	filled, _, err := repair.FillMissing(c)
	if err != nil {
		t.Fatal(err)
	}
	s := &stripNoise{path: PathWhitened, sigmas: []float64{10, 20, 30, 40}}
	if err := s.fitPivots(context.Background(), tile.Lines{Cube: c}, report.Discard); err != nil {
		t.Fatal(err)
	}
	if len(s.opts.Pivots) != c.Bands {
		t.Fatalf("%d pivots for %d bands", len(s.opts.Pivots), c.Bands)
	}
	for b := range c.Bands {
		want := 0.0
		for _, v := range filled.Band(b) {
			want += v
		}
		want /= float64(c.Height * c.Width)
		if math.Abs(s.opts.Pivots[b]-want) > 1e-9 {
			t.Errorf("band %d: pivot %v, the filled cube's mean %v", b, s.opts.Pivots[b], want)
		}
	}
	gaussian := &stripNoise{path: PathGaussian}
	if err := gaussian.fitPivots(context.Background(), tile.Lines{Cube: c}, report.Discard); err != nil || gaussian.opts.Pivots != nil {
		t.Errorf("Gaussian path: pivots %v, error %v; want none", gaussian.opts.Pivots, err)
	}
}
