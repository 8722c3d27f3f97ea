package patch_test

import (
	"context"
	"fmt"
	"math"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/msi"
	"tdsc/internal/patch"
)

// A denoising pass: every worker extracts its batches, codes them (here the
// patches are left as they are) and adds the reconstructions back.
func ExampleGrid_ForEachBatch() {
	cube := msi.NewCube(32, 24, 8)
	for i := range cube.Data {
		cube.Data[i] = float64(i % 251)
	}
	g, err := patch.NewGrid(cube.Height, cube.Width, cube.Bands, 5, 5, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	const workers, batch = 2, 256
	xs := make([]*tproduct.Tensor, workers)
	means := make([][]float64, workers)
	for w := range workers {
		xs[w] = g.NewTensor(batch)
		means[w] = make([]float64, batch)
	}
	agg := patch.NewAggregator(g)
	err = g.ForEachBatch(context.Background(), workers, batch, func(w, start, end int) error {
		x, m := xs[w].Slice(0, end-start), means[w][:end-start]
		patch.Extract(x, m, cube, g, start)
		// ... sparse-code x and overwrite it with its reconstruction ...
		agg.Add(x, m, start)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := msi.NewCube(cube.Height, cube.Width, cube.Bands)
	agg.Result(out)
	worst := 0.0
	for i, v := range out.Data {
		worst = math.Max(worst, math.Abs(v-cube.Data[i]))
	}
	fmt.Printf("%d patches, largest change %.0g\n", g.Len(), worst)
	// Output: 660 patches, largest change 0
}
