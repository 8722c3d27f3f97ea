package patch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSample(t *testing.T) {
	g := shape{64, 64, 31, 5, 5, 1}.grid(t)
	total := g.Len()
	const n = 4000
	s := Sample(g, n, 7)
	if len(s) != n {
		t.Fatalf("Sample returned %d indices, want %d", len(s), n)
	}
	for i, k := range s {
		if k < 0 || k >= total {
			t.Fatalf("index %d out of range [0, %d)", k, total)
		}
		if i > 0 && k <= s[i-1] {
			t.Fatalf("indices not increasing and distinct: %d after %d", k, s[i-1])
		}
	}
	if again := Sample(g, n, 7); !slices.Equal(s, again) {
		t.Error("the same seed gave another sample")
	}
	if other := Sample(g, n, 8); slices.Equal(s, other) {
		t.Error("another seed gave the same sample")
	}
	var quarters [4]int
	for _, k := range s {
		quarters[4*k/total]++
	}
	for q, c := range quarters {
		if c < n/5 || c > 3*n/10 {
			t.Errorf("quarter %d of the indices holds %d of %d samples, want about %d", q, c, n, n/4)
		}
	}
}

func TestSampleAll(t *testing.T) {
	g := shape{9, 8, 5, 3, 2, 1}.grid(t)
	for _, n := range []int{g.Len(), g.Len() + 10} {
		s := Sample(g, n, 1)
		if len(s) != g.Len() {
			t.Fatalf("Sample(%d) of %d patches returned %d indices", n, g.Len(), len(s))
		}
		for i, k := range s {
			if k != i {
				t.Fatalf("Sample(%d) of %d patches: index %d is %d, want all indices in order", n, g.Len(), i, k)
			}
		}
	}
	if s := Sample(g, 0, 1); len(s) != 0 {
		t.Errorf("Sample(0) returned %v", s)
	}
	mustPanic(t, "Sample(-1)", func() { Sample(g, -1, 1) })
}

func TestSampleSubsetsUniform(t *testing.T) {
	// A 1×2×3 cube has six 1×1×1 patches and 15 two-patch subsets; over
	// 3000 seeds every subset should come up about 200 times (standard
	// deviation about 14).
	g := shape{1, 2, 3, 1, 1, 1}.grid(t)
	if g.Len() != 6 {
		t.Fatalf("Len = %d, want 6", g.Len())
	}
	counts := map[[2]int]int{}
	for seed := range uint64(3000) {
		s := Sample(g, 2, seed)
		counts[[2]int{s[0], s[1]}]++
	}
	if len(counts) != 15 {
		t.Errorf("%d distinct subsets drawn, want 15: %v", len(counts), counts)
	}
	for pair, c := range counts {
		if c < 130 || c > 270 {
			t.Errorf("subset %v drawn %d times in 3000, want about 200", pair, c)
		}
	}
}

// TestChooseUniform checks that every window is equally likely: over many
// seeds each of 10 positions is drawn about 3/10 of the time.
func TestChooseUniform(t *testing.T) {
	const total, n, seeds = 10, 3, 20000
	var count [total]int
	for seed := range uint64(seeds) {
		got := Choose(total, n, rand.NewPCG(seed, 1))
		if len(got) != n || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != n {
			t.Fatalf("seed %d: %v is not %d sorted distinct values", seed, got, n)
		}
		for _, v := range got {
			count[v]++
		}
	}
	want := float64(seeds * n / total)
	sd := math.Sqrt(float64(seeds) * 0.3 * 0.7)
	for v, c := range count {
		if math.Abs(float64(c)-want) > 5*sd {
			t.Errorf("position %d drawn %d times, want %v ± %v", v, c, want, 5*sd)
		}
	}
}
