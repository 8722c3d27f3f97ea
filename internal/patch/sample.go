package patch

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// sampleStream is the second PCG seed word of Sample, fixed so that the
// sample depends on the seed alone.
const sampleStream = 0x7064_7363_7061_7463

// Sample returns n distinct patch indices of g in increasing order, drawn
// uniformly among all n-subsets of [0, g.Len()) by a PCG generator seeded
// with seed: the same seed gives the same sample. If n ≥ g.Len() it returns
// every index. It panics if n < 0.
func Sample(g *Grid, n int, seed uint64) []int {
	total := g.Len()
	if n < 0 {
		panic(fmt.Sprintf("patch: Sample: negative sample size %d", n))
	}
	if n >= total {
		all := make([]int, total)
		for i := range all {
			all[i] = i
		}
		return all
	}
	return Choose(total, n, rand.NewPCG(seed, sampleStream))
}

// Choose returns n distinct integers of [0, total) in increasing order,
// every n-subset equally likely, drawn from src: the same source state
// gives the same subset. It is the sampler of every seeded sample in tdsc
// (callers seed a PCG with a stream word of their own). It panics unless
// 0 ≤ n ≤ total.
func Choose(total, n int, src rand.Source) []int {
	if n < 0 || n > total {
		panic(fmt.Sprintf("patch: Choose: %d of %d", n, total))
	}
	// Floyd's algorithm: for j = total−n..total−1 draw t in [0, j] and take
	// t, or j if t is already taken; every n-subset is equally likely. The
	// chosen set is a bitset so that reading it out gives sorted indices.
	rng := rand.New(src)
	chosen := make([]uint64, (total+63)/64)
	for j := total - n; j < total; j++ {
		t := rng.IntN(j + 1)
		if chosen[t/64]&(1<<(t%64)) != 0 {
			t = j
		}
		chosen[t/64] |= 1 << (t % 64)
	}
	out := make([]int, 0, n)
	for i, word := range chosen {
		for word != 0 {
			out = append(out, i*64+bits.TrailingZeros64(word))
			word &= word - 1
		}
	}
	return out
}
