package patch

import (
	"math"
	"math/rand/v2"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/msi"
	"tdsc/internal/testenv/cubetest"
)

// fakeReconstruction fills lateral slice j of rec and means[j] with values
// that depend only on the patch index idx (not on the batch it is in), with
// full random mantissas so that sums are sensitive to their order.
func fakeReconstruction(rec *tproduct.Tensor, means []float64, j, idx int) {
	rng := rand.New(rand.NewPCG(uint64(idx), 99))
	for i := range rec.Lateral(j) {
		rec.Lateral(j)[i] = 60*rng.NormFloat64() + rng.Float64()/3
	}
	means[j] = 255 * rng.Float64()
}

func fakeWeight(idx int) float64 {
	return 0.1 + rand.New(rand.NewPCG(uint64(idx), 98)).Float64()
}

// bruteAverage aggregates fakeReconstruction over all oracle positions by
// direct indexing, with weights when weighted.
func bruteAverage(sh shape, weighted bool) []float64 {
	sum := make([]float64, sh.h*sh.w*sh.b)
	wsum := make([]float64, len(sum))
	rec := tproduct.NewTensor(sh.p*sh.p, 1, sh.q)
	means := make([]float64, 1)
	for idx, pos := range oraclePositions(sh) {
		fakeReconstruction(rec, means, 0, idx)
		w := 1.0
		if weighted {
			w = fakeWeight(idx)
		}
		for tb := range sh.q {
			for i := range sh.p * sh.p {
				v := ((pos[2]+tb)*sh.h+pos[0]+i/sh.p)*sh.w + pos[1] + i%sh.p
				sum[v] += w * (rec.At(i, 0, tb) + means[0])
				wsum[v] += w
			}
		}
	}
	for v := range sum {
		sum[v] /= wsum[v]
	}
	return sum
}

// aggregateFake runs fakeReconstruction through an aggregator with
// ForEachBatch and returns the result.
func aggregateFake(t *testing.T, g *Grid, workers, batch int, weighted bool) *msi.Cube {
	t.Helper()
	h, w, b := g.height, g.width, g.bands
	agg := NewAggregator(g)
	if weighted {
		agg = NewWeightedAggregator(g)
	}
	recs := make([]*tproduct.Tensor, workers)
	means := make([][]float64, workers)
	weights := make([][]float64, workers)
	for i := range workers {
		recs[i] = g.NewTensor(batch)
		means[i] = make([]float64, batch)
		weights[i] = make([]float64, batch)
	}
	err := g.ForEachBatch(t.Context(), workers, batch, func(worker, start, end int) error {
		n := end - start
		rec, m, wt := recs[worker].Slice(0, n), means[worker][:n], weights[worker][:n]
		for j := range n {
			fakeReconstruction(rec, m, j, start+j)
			wt[j] = fakeWeight(start + j)
		}
		if weighted {
			agg.AddWeighted(rec, m, wt, start)
		} else {
			agg.Add(rec, m, start)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := msi.NewCube(h, w, b)
	agg.Result(out)
	return out
}

func TestAggregateAverages(t *testing.T) {
	for _, sh := range shapes {
		g := sh.grid(t)
		for _, weighted := range []bool{false, true} {
			want := bruteAverage(sh, weighted)
			got := aggregateFake(t, g, 2, 11, weighted)
			for v := range want {
				if math.Abs(got.Data[v]-want[v]) > 1e-11 {
					t.Fatalf("%v weighted=%v: voxel %d averages to %v, want %v", sh, weighted, v, got.Data[v], want[v])
				}
			}
		}
	}
}

// roundTrip extracts every patch of c and adds it back untouched, in batches
// of batch patches, with ForEachBatch or plainly in index order.
func roundTrip(t *testing.T, g *Grid, c *msi.Cube, agg *Aggregator, workers, batch int, inOrder, weighted bool) *msi.Cube {
	t.Helper()
	recs := make([]*tproduct.Tensor, workers)
	means := make([][]float64, workers)
	weights := make([]float64, batch)
	for i := range workers {
		recs[i] = g.NewTensor(batch)
		means[i] = make([]float64, batch)
	}
	for i := range weights {
		weights[i] = 0.5 + float64(i%7)
	}
	do := func(worker, start, end int) error {
		rec, m := recs[worker].Slice(0, end-start), means[worker][:end-start]
		Extract(rec, m, c, g, start)
		if weighted {
			agg.AddWeighted(rec, m, weights[:end-start], start)
		} else {
			agg.Add(rec, m, start)
		}
		return nil
	}
	if inOrder {
		for start := 0; start < g.Len(); start += batch {
			_ = do(0, start, min(start+batch, g.Len()))
		}
	} else if err := g.ForEachBatch(t.Context(), workers, batch, do); err != nil {
		t.Fatal(err)
	}
	out := msi.NewCube(c.Height, c.Width, c.Bands)
	agg.Result(out)
	return out
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, sh := range shapes {
		g := sh.grid(t)
		c := cubetest.Uniform(rng, sh.h, sh.w, sh.b, 0, 255)
		for _, run := range []struct {
			name              string
			workers, batch    int
			inOrder, weighted bool
		}{
			{"in index order", 1, 1 + rng.IntN(50), true, false},
			{"two workers", 2, 1 + rng.IntN(50), false, false},
			{"weighted", 3, 1 + rng.IntN(50), false, true},
			{"one batch", 1, g.Len(), true, false},
		} {
			agg := NewAggregator(g)
			if run.weighted {
				agg = NewWeightedAggregator(g)
			}
			got := roundTrip(t, g, c, agg, run.workers, run.batch, run.inOrder, run.weighted)
			for v, want := range c.Data {
				if math.Abs(got.Data[v]-want) > 1e-12 {
					t.Fatalf("%v %s (batch %d): voxel %d is %v after the round trip, want %v", sh, run.name, run.batch, v, got.Data[v], want)
				}
			}
		}
	}
}

func TestAddOnWeightedCountsOnce(t *testing.T) {
	// Add on a weighted aggregator gives weight 1, so its result is the
	// plain average.
	sh := shape{13, 14, 6, 5, 2, 4}
	g := sh.grid(t)
	want := bruteAverage(sh, false)
	agg := NewWeightedAggregator(g)
	rec := g.NewTensor(g.Len())
	means := make([]float64, g.Len())
	for j := range g.Len() {
		fakeReconstruction(rec, means, j, j)
	}
	agg.Add(rec, means, 0)
	got := msi.NewCube(sh.h, sh.w, sh.b)
	agg.Result(got)
	for v := range want {
		if math.Abs(got.Data[v]-want[v]) > 1e-11 {
			t.Fatalf("voxel %d averages to %v, want %v", v, got.Data[v], want[v])
		}
	}
}

func TestParallelAggregateBitIdentical(t *testing.T) {
	for _, sh := range []shape{{40, 37, 9, 5, 3, 1}, {29, 33, 8, 4, 4, 3}} {
		g := sh.grid(t)
		for _, weighted := range []bool{false, true} {
			ref := aggregateFake(t, g, 1, 1, weighted)
			for _, run := range []struct{ workers, batch int }{{1, 1000}, {2, 7}, {2, 256}, {3, 64}, {4, 5}} {
				got := aggregateFake(t, g, run.workers, run.batch, weighted)
				for v := range ref.Data {
					if math.Float64bits(got.Data[v]) != math.Float64bits(ref.Data[v]) {
						t.Fatalf("%v weighted=%v, %d workers, batch %d: voxel %d is %v, with 1 worker and batch 1 %v",
							sh, weighted, run.workers, run.batch, v, got.Data[v], ref.Data[v])
					}
				}
			}
		}
	}
}

func TestAggregationOrderMatters(t *testing.T) {
	// The data of TestParallelAggregateBitIdentical must be sensitive to the
	// order of the sums, or bit-identity would prove nothing: aggregating
	// the same reconstructions plainly in index order must change some bits.
	sh := shape{40, 37, 9, 5, 3, 1}
	g := sh.grid(t)
	ref := aggregateFake(t, g, 1, 1, false)
	agg := NewAggregator(g)
	rec := g.NewTensor(1)
	means := make([]float64, 1)
	for idx := range g.Len() {
		fakeReconstruction(rec, means, 0, idx)
		agg.Add(rec, means, idx)
	}
	got := msi.NewCube(sh.h, sh.w, sh.b)
	agg.Result(got)
	differ := 0
	for v := range ref.Data {
		if got.Data[v] != ref.Data[v] {
			differ++
		}
		if math.Abs(got.Data[v]-ref.Data[v]) > 1e-11 {
			t.Fatalf("voxel %d: %v in index order, %v by stripes", v, got.Data[v], ref.Data[v])
		}
	}
	if differ == 0 {
		t.Error("index order and stripe order gave the same bits everywhere: the data does not exercise rounding")
	}
}

func TestAggregatorPanics(t *testing.T) {
	sh := shape{9, 8, 5, 3, 2, 1}
	g := sh.grid(t)
	rec := g.NewTensor(g.Len())
	means := make([]float64, g.Len())
	out := msi.NewCube(sh.h, sh.w, sh.b)

	agg := NewAggregator(g)
	mustPanic(t, "Result before any Add", func() { agg.Result(out) })
	mustPanic(t, "AddWeighted on a plain aggregator", func() { agg.AddWeighted(rec, means, make([]float64, g.Len()), 0) })
	mustPanic(t, "Add of a tensor of the wrong shape", func() { agg.Add(tproduct.NewTensor(9, 2, 3), means[:2], 0) })
	mustPanic(t, "Add past the last patch", func() { agg.Add(rec.Slice(0, 2), means[:2], g.Len()-1) })
	agg.Add(rec, means, 0)
	mustPanic(t, "Result into a cube of another size", func() { agg.Result(msi.NewCube(sh.h+1, sh.w, sh.b)) })
	agg.Result(out)
	agg.Add(rec.Slice(0, 1), means[:1], 0)
	mustPanic(t, "Result after a patch was added twice", func() { agg.Result(out) })

	wagg := NewWeightedAggregator(g)
	ones := []float64{1, 1}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		weights := []float64{1, bad}
		mustPanic(t, "AddWeighted with a bad weight", func() { wagg.AddWeighted(rec.Slice(0, 2), means[:2], weights, 0) })
	}
	mustPanic(t, "AddWeighted with too few weights", func() { wagg.AddWeighted(rec.Slice(0, 2), means[:2], ones[:1], 0) })
}

func TestNoAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	sh := shape{40, 37, 9, 5, 5, 1}
	g := sh.grid(t)
	c := cubetest.Uniform(rng, sh.h, sh.w, sh.b, 0, 255)
	const batch = 64
	x := g.NewTensor(batch)
	means := make([]float64, batch)
	weights := make([]float64, batch)
	for i := range weights {
		weights[i] = 1 + rng.Float64()
	}
	idx := Sample(g, batch, 5)
	agg := NewAggregator(g)
	wagg := NewWeightedAggregator(g)
	start := 0
	allocs := testing.AllocsPerRun(20, func() {
		Extract(x, means, c, g, start)
		agg.Add(x, means, start)
		wagg.AddWeighted(x, means, weights, start)
		ExtractIndices(x, means, c, g, idx)
		start += batch
	})
	if allocs != 0 {
		t.Errorf("Extract, Add, AddWeighted and ExtractIndices allocate %v times per batch, want 0", allocs)
	}
}
