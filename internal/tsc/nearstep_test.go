package tsc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"tdsc/internal/algebra/tproduct"
	"tdsc/internal/algebra/tproduct/tproducttest"
)

// encSameCodes fails unless the codes and the iteration counts of two runs
// are the same bit for bit.
func encSameCodes(t *testing.T, what string, got, want *tproduct.Tensor, gotIters, wantIters []int32) {
	t.Helper()
	for i, v := range want.Data {
		if math.Float64bits(got.Data[i]) != math.Float64bits(v) {
			t.Fatalf("%s: code %d = %v, %v with full steps only", what, i, got.Data[i], v)
		}
	}
	if !slices.Equal(gotIters, wantIters) {
		t.Fatalf("%s: iterations per patch %v, %v with full steps only", what, gotIters, wantIters)
	}
}

// encNearRun codes x with the path p in batches of 64 and returns the
// codes, the iterations of every patch and the workspace (its step
// counts).
func encNearRun(t *testing.T, d, x *tproduct.Tensor, opt EncodeOptions, p codePath, warm *tproduct.Tensor) (*tproduct.Tensor, []int32, *Workspace) {
	t.Helper()
	e := encMustEncoder(t, d, opt, p)
	const batch = 64
	ws := e.NewWorkspace(batch)
	b := tproduct.NewTensor(d.N, x.N, d.K)
	if warm != nil {
		copy(b.Data, warm.Data)
	}
	iters := make([]int32, x.N)
	for j0 := 0; j0 < x.N; j0 += batch {
		j1 := min(x.N, j0+batch)
		e.Encode(ws, b.Slice(j0, j1), x.Slice(j0, j1), warm != nil)
		copy(iters[j0:j1], ws.iters[:j1-j0])
	}
	return b, iters, ws
}

// TestNearStepsMatchFullSteps checks the near and settled steps against
// full steps, bit for bit: the codes and the iterations of every patch,
// cold and warm, with and without Tol, on patches shaped like the tool's,
// for several geometries at codes about 10 % and 2 % dense. It also checks
// that near or settled steps were taken, so that the comparison means
// something.
func TestNearStepsMatchFullSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	for _, c := range []struct{ p, k, r int }{{5, 5, 30}, {4, 8, 24}, {4, 1, 20}, {3, 6, 12}, {4, 16, 64}} {
		x := encSmoothPatches(rng, c.p, c.k, 80, 20)
		d := encDictionary(rng, x, c.r)
		var near int
		for _, beta := range []float64{40, 150} {
			for _, tol := range []float64{0, 1e-5} {
				name := fmt.Sprintf("p=%d k=%d r=%d β=%g Tol=%g", c.p, c.k, c.r, beta, tol)
				opt := EncodeOptions{Beta: beta, MaxIter: 50, Tol: tol}
				want, wantIters, _ := encNearRun(t, d, x, opt, pathFull, nil)
				got, gotIters, ws := encNearRun(t, d, x, opt, pathSparse, nil)
				encSameCodes(t, name, got, want, gotIters, wantIters)
				near += ws.anc.nearSteps + ws.anc.settledSteps
				t.Logf("%s: steps full %d, near %d, settled %d", name, ws.anc.fullSteps, ws.anc.nearSteps, ws.anc.settledSteps)
			}
			// Warm from the codes of 10 iterations.
			name := fmt.Sprintf("p=%d k=%d r=%d β=%g warm", c.p, c.k, c.r, beta)
			opt := EncodeOptions{Beta: beta, MaxIter: 40}
			start, _, _ := encNearRun(t, d, x, EncodeOptions{Beta: beta, MaxIter: 10}, pathFull, nil)
			want, wantIters, _ := encNearRun(t, d, x, opt, pathFull, start)
			got, gotIters, _ := encNearRun(t, d, x, opt, pathSparse, start)
			encSameCodes(t, name, got, want, gotIters, wantIters)
		}
		if near == 0 {
			t.Errorf("p=%d k=%d r=%d: no near or settled step", c.p, c.k, c.r)
		}
	}
}

// TestNearStepsMatchFullStepsPaper is TestNearStepsMatchFullSteps on the
// patches and dictionary of BenchmarkEncodePaper: the paper's setting,
// where the near and settled steps are most of the work.
func TestNearStepsMatchFullStepsPaper(t *testing.T) {
	if testing.Short() {
		t.Skip("codes 21168 patches four times")
	}
	x := encBalloonsPatches(t)
	d := encPatchDictionary(x, 30, 1)
	for _, beta := range []float64{50, 100} {
		opt := EncodeOptions{Beta: beta, MaxIter: 50}
		want, wantIters, _ := encNearRun(t, d, x, opt, pathFull, nil)
		got, gotIters, ws := encNearRun(t, d, x, opt, pathSparse, nil)
		encSameCodes(t, fmt.Sprintf("β=%g", beta), got, want, gotIters, wantIters)
		t.Logf("β=%g: steps full %d, near %d, settled %d", beta, ws.anc.fullSteps, ws.anc.nearSteps, ws.anc.settledSteps)
		if ws.anc.settledSteps < ws.anc.fullSteps {
			t.Errorf("β=%g: %d settled steps, fewer than the %d full ones", beta, ws.anc.settledSteps, ws.anc.fullSteps)
		}
	}
}

// TestOffDiagonal checks a_s against its definition on the block-circulant
// matrix: the largest |circ(A)_is| over i ≠ s, A = I − D†*D/L.
func TestOffDiagonal(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 2))
	for _, k := range []int{1, 2, 5, 6} {
		d := encRandomAtoms(rng, 6, 4, k)
		e := encMustEncoder(t, d, EncodeOptions{Beta: 1, MaxIter: 1}, pathAuto)
		c := tproducttest.Circ(d)
		rows, cols := c.Dims()
		for s := range cols {
			var want float64
			for i := range cols {
				if i == s {
					continue
				}
				var g float64
				for m := range rows {
					g += c.At(m, i) * c.At(m, s)
				}
				want = max(want, math.Abs(g/e.lip))
			}
			if got := e.offPos[s]; math.Abs(got-want) > 1e-12 {
				t.Errorf("k=%d: a_%d = %v, want %v", k, s, got, want)
			}
		}
	}
}

// TestAccumulateAtMatchesAccumulate checks accumulateAt against
// accumulate at random subsets of positions, bit for bit, with its list
// of positions above τ, and that it leaves the other positions alone.
func TestAccumulateAtMatchesAccumulate(t *testing.T) {
	const rows, cols, k = 5, 6, 3
	rng := rand.New(rand.NewPCG(11, 3))
	tab, off := randomDoubledColumns(rng, rows, cols, k)
	n := rows * k
	tb := math.Float64bits(1.2)
	for runs := 0; runs <= 11; runs++ {
		src := make([]float64, n)
		for i := range src {
			src[i] = 2 * rng.NormFloat64()
		}
		src[4] = math.NaN()
		idx, val := make([]int32, runs), make([]float64, runs)
		for s, p := range rng.Perm(cols * k)[:runs] {
			idx[s], val[s] = int32(p), rng.NormFloat64()
		}
		full := make([]float64, n)
		above := make([]int32, n)
		na := accumulate(full, src, tab, off, idx, val, tb, above)
		var at []int32
		for i := range n {
			if rng.IntN(3) == 0 {
				at = append(at, int32(i))
			}
		}
		w := make([]float64, n)
		for i := range w {
			w[i] = -7
		}
		gotAbove := make([]int32, n)
		got := accumulateAt(w, src, tab, off, idx, val, at, tb, gotAbove, make([]int32, n))
		var wantAbove []int32
		for _, i := range above[:na] {
			if slices.Contains(at, i) {
				wantAbove = append(wantAbove, i)
			}
		}
		if !slices.Equal(gotAbove[:got], wantAbove) {
			t.Errorf("%d runs: above %v, want %v", runs, gotAbove[:got], wantAbove)
		}
		for i := range n {
			want := -7.0
			if slices.Contains(at, int32(i)) {
				want = full[i]
			}
			if math.Float64bits(w[i]) != math.Float64bits(want) {
				t.Fatalf("%d runs: w[%d] = %v, want %v", runs, i, w[i], want)
			}
		}
	}
}

// TestSettledStepMatchesAccumulate checks settledStep, on compact runs cut
// from the table at some positions, against accumulate, bit for bit.
func TestSettledStepMatchesAccumulate(t *testing.T) {
	const rows, cols, k = 4, 7, 3
	rng := rand.New(rand.NewPCG(11, 4))
	tab, off := randomDoubledColumns(rng, rows, cols, k)
	n := rows * k
	for ns := 0; ns <= 10; ns++ {
		src := make([]float64, n)
		for i := range src {
			src[i] = rng.NormFloat64()
		}
		idx, val := make([]int32, ns), make([]float64, ns)
		for s, p := range rng.Perm(cols * k)[:ns] {
			idx[s], val[s] = int32(p), rng.NormFloat64()
		}
		full := make([]float64, n)
		accumulate(full, src, tab, off, idx, val, 0, nil)
		close := []int32{0, 3, 4, 9, int32(n - 1)}
		cc := make([]float64, len(close))
		runs := make([]float64, ns*len(close))
		for c, i := range close {
			cc[c] = src[i]
			for s, p := range idx {
				runs[s*len(close)+c] = tab[int(off[p])+int(i)]
			}
		}
		wc := make([]float64, len(close))
		settledStep(wc, cc, runs, val)
		for c, i := range close {
			if math.Float64bits(wc[c]) != math.Float64bits(full[i]) {
				t.Fatalf("%d runs: position %d = %v, accumulate %v", ns, i, wc[c], full[i])
			}
		}
	}
}

func TestIsAbove(t *testing.T) {
	for _, c := range []struct {
		v, tau float64
		want   int
	}{
		{1, 0.5, 1}, {-1, 0.5, 1}, {0.5, 0.5, 0}, {-0.5, 0.5, 0}, {0.25, 0.5, 0},
		{0, 0, 0}, {math.Copysign(0, -1), 0, 0}, {1e-300, 0, 1},
		{math.NaN(), 0.5, 1}, {math.Inf(-1), 0.5, 1}, {math.MaxFloat64, math.MaxFloat64, 0},
	} {
		if got := isAbove(c.v, math.Float64bits(c.tau)); got != c.want {
			t.Errorf("isAbove(%v, τ = %v) = %d, want %d", c.v, c.tau, got, c.want)
		}
	}
}

func TestIsZero(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want int
	}{
		{0, 1}, {math.Copysign(0, -1), 1}, {math.SmallestNonzeroFloat64, 0}, {-1, 0},
		{math.NaN(), 0}, {math.Inf(1), 0}, {math.Inf(-1), 0},
	} {
		if got := isZero(c.v); got != c.want {
			t.Errorf("isZero(%v) = %d, want %d", c.v, got, c.want)
		}
	}
}

// TestWeightsFollowRecurrence checks the momentum weights, from the table
// and past its end, against the recurrence t_{p+1} = (1+√(1+4t_p²))/2,
// bit for bit, also from a copy taken on the way (as finish gets it).
func TestWeightsFollowRecurrence(t *testing.T) {
	d := encRandomAtoms(rand.New(rand.NewPCG(11, 5)), 4, 3, 2)
	for _, maxIter := range []int{1, 7, momentumTable, momentumTable + 300} {
		e := encMustEncoder(t, d, EncodeOptions{MaxIter: maxIter}, pathAuto)
		var copies []weights
		tp := 1.0
		for wt := e.firstWeight(); wt.p <= maxIter; wt.next() {
			tn := (1 + math.Sqrt(1+4*tp*tp)) / 2
			want := (tp - 1) / tn
			tp = tn
			if got := wt.weight(); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("MaxIter %d: weight of iteration %d = %v, want %v", maxIter, wt.p, got, want)
			}
			if wt.p%1000 == 3 {
				copies = append(copies, wt)
			}
		}
		for _, c := range copies {
			ref := e.firstWeight()
			for ref.p < c.p {
				ref.next()
			}
			for ; c.p <= maxIter; c.next() {
				if math.Float64bits(c.weight()) != math.Float64bits(ref.weight()) {
					t.Fatalf("MaxIter %d: a copy differs at iteration %d", maxIter, c.p)
				}
				ref.next()
			}
		}
	}
}

// TestSetAnchorMarks checks the lists and marks of setAnchor: the near
// positions are those above τ − h and those of the anchor, increasing, the
// close ones those above τ − h/closeRatio and those of the anchor, every
// position is marked as its lists say and no other, also after the anchor
// of another patch; and the positions above τ are listed.
func TestSetAnchorMarks(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 6))
	d := encRandomAtoms(rng, 5, 6, 4)
	e := encMustEncoder(t, d, EncodeOptions{Beta: 2, MaxIter: 10}, pathSparse)
	rk := e.r * e.k
	ws := e.NewWorkspace(1)
	tau, h, hc := e.tau, e.reach, e.closeReach
	for round := range 6 {
		w := make([]float64, rk)
		for i := range w {
			w[i] = tau * 1.2 * rng.NormFloat64()
		}
		var idx []int32
		var val []float64
		for _, p := range rng.Perm(rk)[:rng.IntN(6)] {
			idx, val = append(idx, int32(p)), append(val, rng.NormFloat64())
		}
		nl := aboveList(ws.anc.wide, w, e.nearBits)
		ws.anc.set = round%2 == 0 // a new patch every other round
		na := e.setAnchor(ws, w, nl, idx, val)
		a := &ws.anc
		var near, close, above []int32
		for i, v := range w {
			anchored := slices.Contains(idx, int32(i))
			if math.Abs(v) > tau-h || anchored {
				near = append(near, int32(i))
			}
			if math.Abs(v) > tau-hc || anchored {
				close = append(close, int32(i))
			}
			if math.Abs(v) > tau {
				above = append(above, int32(i))
			}
		}
		if !slices.Equal(a.near[:a.nnear], near) || !slices.Equal(a.close[:a.nclose], close) || !slices.Equal(ws.above[:na], above) {
			t.Fatalf("round %d: near %v close %v above %v, want %v %v %v", round,
				a.near[:a.nnear], a.close[:a.nclose], ws.above[:na], near, close, above)
		}
		for i := range rk {
			want := notListed
			switch {
			case slices.Contains(close, int32(i)):
				want = listedClose
			case slices.Contains(near, int32(i)):
				want = listedNear
			}
			if a.listed[i] != want {
				t.Fatalf("round %d: position %d marked %d, want %d", round, i, a.listed[i], want)
			}
		}
	}
}
