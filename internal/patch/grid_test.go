package patch

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// shape is a cube size, a patch size and a step.
type shape struct{ h, w, b, p, q, s int }

// shapes covers steps 1..p, sizes that are and are not multiples of the
// step, B = q, p = 1, q = 1 and a cube holding exactly one patch.
var shapes = []shape{
	{7, 9, 6, 5, 5, 1},
	{12, 13, 5, 5, 5, 2},
	{11, 10, 8, 5, 3, 3},
	{8, 8, 4, 1, 1, 1},
	{9, 7, 7, 3, 2, 3},
	{5, 5, 5, 5, 5, 1},
	{16, 11, 9, 4, 4, 4},
	{10, 17, 3, 2, 3, 1},
	{13, 14, 6, 5, 2, 4},
	{23, 6, 4, 3, 1, 2},
}

func (sh shape) grid(t testing.TB) *Grid {
	t.Helper()
	g, err := NewGrid(sh.h, sh.w, sh.b, sh.p, sh.q, sh.s)
	if err != nil {
		t.Fatalf("NewGrid%v: %v", sh, err)
	}
	return g
}

// starts lists the window starts 0, s, 2s, … ≤ n−p, then n−p if missing.
func starts(n, p, s int) []int {
	var out []int
	for v := 0; v <= n-p; v += s {
		out = append(out, v)
	}
	if out[len(out)-1] != n-p {
		out = append(out, n-p)
	}
	return out
}

// oraclePositions lists the top-left voxel of every patch in the documented
// index order: row position slowest, then band window, then column.
func oraclePositions(sh shape) [][3]int {
	var out [][3]int
	for _, y := range starts(sh.h, sh.p, sh.s) {
		for b := 0; b+sh.q <= sh.b; b++ {
			for _, x := range starts(sh.w, sh.p, sh.s) {
				out = append(out, [3]int{y, x, b})
			}
		}
	}
	return out
}

func TestNewGridErrors(t *testing.T) {
	cases := []struct {
		h, w, b, p, q, s int
		want             string
	}{
		{4, 4, 31, 5, 5, 1, "image is 4×4×31 but the patch is 5×5×5"},
		{64, 4, 31, 5, 5, 1, "image is 64×4×31 but the patch is 5×5×5"},
		{64, 64, 3, 5, 5, 1, "image is 64×64×3 but the patch is 5×5×5"},
		{0, 64, 31, 5, 5, 1, "image size 0×64×31 is not positive"},
		{64, 64, -1, 5, 5, 1, "image size 64×64×-1 is not positive"},
		{64, 64, 31, 0, 5, 1, "patch size p = 0"},
		{64, 64, 31, 5, 0, 1, "patch band count q = 0"},
		{64, 64, 31, 5, 5, 0, "step 0 must be at least 1"},
		{64, 64, 31, 5, 5, 6, "step 6 is larger than the patch size 5"},
	}
	for _, c := range cases {
		g, err := NewGrid(c.h, c.w, c.b, c.p, c.q, c.s)
		if err == nil {
			t.Errorf("NewGrid(%d, %d, %d, %d, %d, %d) = %v, want an error", c.h, c.w, c.b, c.p, c.q, c.s, g)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewGrid(%d, %d, %d, %d, %d, %d) error %q does not say %q", c.h, c.w, c.b, c.p, c.q, c.s, err, c.want)
		}
	}
}

func TestGridPositions(t *testing.T) {
	for _, sh := range shapes {
		g := sh.grid(t)
		want := oraclePositions(sh)
		if g.Len() != len(want) {
			t.Errorf("%v: Len = %d, want %d", sh, g.Len(), len(want))
			continue
		}
		for idx, w := range want {
			if y, x, b := g.Pos(idx); [3]int{y, x, b} != w {
				t.Errorf("%v: Pos(%d) = (%d, %d, %d), want %v", sh, idx, y, x, b, w)
				break
			}
		}
	}
}

// bruteCounts counts, per voxel, the patches of the oracle positions that
// cover it.
func bruteCounts(sh shape) []int {
	counts := make([]int, sh.h*sh.w*sh.b)
	for _, pos := range oraclePositions(sh) {
		for t := range sh.q {
			for dy := range sh.p {
				for dx := range sh.p {
					counts[((pos[2]+t)*sh.h+pos[0]+dy)*sh.w+pos[1]+dx]++
				}
			}
		}
	}
	return counts
}

func TestCoverage(t *testing.T) {
	for _, sh := range shapes {
		g := sh.grid(t)
		counts := bruteCounts(sh)
		for i, n := range counts {
			x := i % sh.w
			y := i / sh.w % sh.h
			b := i / (sh.w * sh.h)
			if n < 1 {
				t.Errorf("%v: voxel (%d, %d, %d) is not covered", sh, y, x, b)
			}
			if got := g.coverRow[y] * g.coverCol[x] * g.coverBand[b]; got != n {
				t.Errorf("%v: voxel (%d, %d, %d): count from the grid %d, counted %d", sh, y, x, b, got, n)
			}
		}
	}
}

func TestStripes(t *testing.T) {
	for _, sh := range append(shapes, shape{40, 9, 3, 5, 2, 1}, shape{40, 9, 3, 5, 2, 3}) {
		g := sh.grid(t)
		pos := oraclePositions(sh)
		plane := g.Len() / len(starts(sh.h, sh.p, sh.s))
		var all []Range
		for phase, stripes := range g.Stripes() {
			owner := make([]int, sh.h*sh.w*sh.b)
			for k, r := range stripes {
				if r.Start >= r.End || r.Start%plane != 0 || r.End%plane != 0 {
					t.Errorf("%v: phase %d stripe %v is empty or cuts a row of positions", sh, phase, r)
				}
				if k > 0 && r.Start < stripes[k-1].End {
					t.Errorf("%v: phase %d stripes out of order: %v after %v", sh, phase, r, stripes[k-1])
				}
				for idx := r.Start; idx < r.End; idx++ {
					y, x, b := pos[idx][0], pos[idx][1], pos[idx][2]
					for tb := range sh.q {
						for dy := range sh.p {
							for dx := range sh.p {
								v := ((b+tb)*sh.h+y+dy)*sh.w + x + dx
								if owner[v] != 0 && owner[v] != k+1 {
									t.Fatalf("%v: phase %d: stripes %v and %v both cover voxel %d", sh, phase, stripes[owner[v]-1], r, v)
								}
								owner[v] = k + 1
							}
						}
					}
				}
			}
			all = append(all, stripes...)
		}
		slices.SortFunc(all, func(a, b Range) int { return a.Start - b.Start })
		next := 0
		for _, r := range all {
			if r.Start != next {
				t.Errorf("%v: stripes do not tile the indices: %v follows %d", sh, r, next)
			}
			next = r.End
		}
		if next != g.Len() {
			t.Errorf("%v: stripes end at %d, Len = %d", sh, next, g.Len())
		}
	}
}

func TestForEachBatch(t *testing.T) {
	g := shape{31, 12, 6, 5, 3, 2}.grid(t)
	for _, run := range []struct{ workers, batch int }{{1, 1}, {1, 50}, {2, 7}, {3, 1000}, {8, 13}} {
		seen := make([]int32, g.Len())
		busy := make([]atomic.Bool, run.workers)
		err := g.ForEachBatch(t.Context(), run.workers, run.batch, func(worker, start, end int) error {
			if worker < 0 || worker >= run.workers {
				t.Errorf("worker %d out of range", worker)
				return nil
			}
			if busy[worker].Swap(true) {
				t.Errorf("worker %d runs twice at once", worker)
			}
			defer busy[worker].Store(false)
			if end <= start || end-start > run.batch {
				t.Errorf("batch [%d, %d) is empty or larger than %d", start, end, run.batch)
			}
			for i := start; i < end; i++ {
				atomic.AddInt32(&seen[i], 1)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("ForEachBatch(%d, %d): %v", run.workers, run.batch, err)
		}
		for i, n := range seen {
			if n != 1 {
				t.Errorf("ForEachBatch(%d, %d): patch %d visited %d times", run.workers, run.batch, i, n)
				break
			}
		}
	}
}

func TestForEachBatchStopsOnError(t *testing.T) {
	g := shape{31, 12, 6, 5, 3, 1}.grid(t)
	errStop := errors.New("stop here")

	calls := 0
	err := g.ForEachBatch(t.Context(), 1, 10, func(_, start, _ int) error {
		calls++
		return errStop
	})
	if !errors.Is(err, errStop) || calls != 1 {
		t.Errorf("one worker: error %v after %d calls, want %v after 1", err, calls, errStop)
	}

	var mu sync.Mutex
	var returned bool
	var late int
	err = g.ForEachBatch(t.Context(), 3, 10, func(_, start, _ int) error {
		mu.Lock()
		defer mu.Unlock()
		if returned {
			late++
		}
		if start >= g.Len()/3 {
			return errStop
		}
		return nil
	})
	mu.Lock()
	returned = true
	mu.Unlock()
	if !errors.Is(err, errStop) {
		t.Errorf("three workers: error %v, want %v", err, errStop)
	}
	if late != 0 {
		t.Errorf("%d calls after ForEachBatch returned", late)
	}
}

func TestForEachBatchStopsWhenCancelled(t *testing.T) {
	// One stripe holds 160 patches, 16 batches of 10: cancelling in the
	// first batch must stop the rest of its stripe too.
	g := shape{31, 12, 6, 5, 3, 1}.grid(t)
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	err := g.ForEachBatch(ctx, 1, 10, func(_, _, _ int) error {
		calls++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("cancelled in the first batch: error %v after %d calls, want context.Canceled after 1", err, calls)
	}
	calls = 0
	err = g.ForEachBatch(ctx, 3, 10, func(_, _, _ int) error {
		calls++
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("cancelled before: error %v after %d calls, want context.Canceled after none", err, calls)
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestGridPanics(t *testing.T) {
	g := shape{9, 8, 5, 3, 2, 1}.grid(t)
	mustPanic(t, "Pos(-1)", func() { g.Pos(-1) })
	mustPanic(t, "Pos(Len)", func() { g.Pos(g.Len()) })
	mustPanic(t, "ForEachBatch with no worker", func() { _ = g.ForEachBatch(t.Context(), 0, 4, func(_, _, _ int) error { return nil }) })
	mustPanic(t, "ForEachBatch with batch 0", func() { _ = g.ForEachBatch(t.Context(), 1, 0, func(_, _, _ int) error { return nil }) })
}
