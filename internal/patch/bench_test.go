package patch

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/msi"
	"tdsc/internal/testenv/cubetest"
)

// BenchmarkExtractAggregate extracts every step-1 5×5×5 patch of a
// 512×512×31 cube and adds it back untouched, as a denoising pass does
// around the sparse coding.
func BenchmarkExtractAggregate(b *testing.B) {
	rng := rand.New(rand.NewPCG(51, 52))
	c := cubetest.Uniform(rng, 512, 512, 31, 0, 255)
	g, err := NewGrid(512, 512, 31, 5, 5, 1)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 4096
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			xs := make([]*tproduct.Tensor, workers)
			means := make([][]float64, workers)
			for i := range workers {
				xs[i] = g.NewTensor(batch)
				means[i] = make([]float64, batch)
			}
			out := msi.NewCube(512, 512, 31)
			for b.Loop() {
				agg := NewAggregator(g)
				err := g.ForEachBatch(b.Context(), workers, batch, func(worker, start, end int) error {
					x, m := xs[worker].Slice(0, end-start), means[worker][:end-start]
					Extract(x, m, c, g, start)
					agg.Add(x, m, start)
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
				agg.Result(out)
			}
			b.ReportMetric(float64(g.Len())*float64(b.N)/b.Elapsed().Seconds(), "patches/s")
		})
	}
}

// benchmarkBatches runs op on successive batches of 4096 step-1 5×5×5
// patches of a 512×512×31 cube and reports the time per patch.
func benchmarkBatches(b *testing.B, op func(x *tproduct.Tensor, means []float64, c *msi.Cube, g *Grid, agg *Aggregator, start int)) {
	rng := rand.New(rand.NewPCG(53, 54))
	c := cubetest.Uniform(rng, 512, 512, 31, 0, 255)
	g, err := NewGrid(512, 512, 31, 5, 5, 1)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 4096
	x := g.NewTensor(batch)
	means := make([]float64, batch)
	Extract(x, means, c, g, 0)
	agg := NewAggregator(g)
	start := 0
	for b.Loop() {
		op(x, means, c, g, agg, start)
		if start += batch; start+batch > g.Len() {
			start = 0
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/patch")
}

func BenchmarkExtract(b *testing.B) {
	benchmarkBatches(b, func(x *tproduct.Tensor, means []float64, c *msi.Cube, g *Grid, _ *Aggregator, start int) {
		Extract(x, means, c, g, start)
	})
}

func BenchmarkAdd(b *testing.B) {
	benchmarkBatches(b, func(x *tproduct.Tensor, means []float64, _ *msi.Cube, _ *Grid, agg *Aggregator, start int) {
		agg.Add(x, means, start)
	})
}
