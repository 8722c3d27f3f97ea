package cubetest

import (
	"math/rand/v2"

	"tdsc/internal/msi"
)

// The random cubes of the tests. Each draws its voxels from rng one at a
// time in the cube's storage order (band by band, row by row within a
// band), so a test's cube, and any numbers it expects of it, depend only
// on the seed and the size.

// Uniform returns an h×w×bands cube of values drawn uniformly from
// [lo, hi): lo + (hi−lo)·u for u = rng.Float64().
func Uniform(rng *rand.Rand, h, w, bands int, lo, hi float64) *msi.Cube {
	c := msi.NewCube(h, w, bands)
	for i := range c.Data {
		c.Data[i] = lo + (hi-lo)*rng.Float64()
	}
	return c
}

// Levels returns an h×w×bands cube of integers drawn uniformly from
// 0 … levels−1 (rng.IntN(levels)): few distinct values, so that ties are
// common. It panics if levels < 1.
func Levels(rng *rand.Rand, h, w, bands, levels int) *msi.Cube {
	c := msi.NewCube(h, w, bands)
	for i := range c.Data {
		c.Data[i] = float64(rng.IntN(levels))
	}
	return c
}

// Normal returns an h×w×bands cube of standard normal values
// (rng.NormFloat64()).
func Normal(rng *rand.Rand, h, w, bands int) *msi.Cube {
	c := msi.NewCube(h, w, bands)
	for i := range c.Data {
		c.Data[i] = rng.NormFloat64()
	}
	return c
}
