package msi

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestImplausible: values of images (and NaN, missing) are plausible;
// beyond ±1e30 they are not, and a good share of byte-swapped float32
// image values are beyond it.
func TestImplausible(t *testing.T) {
	for _, v := range []float64{0, -1e30, 1e30, 65535, math.NaN(), -4e9} {
		if Implausible(v) {
			t.Errorf("Implausible(%g)", v)
		}
	}
	for _, v := range []float64{1.0001e30, -2e30, math.MaxFloat32, math.Inf(1)} {
		if !Implausible(v) {
			t.Errorf("not Implausible(%g)", v)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n, beyond := 10000, 0
	for range n {
		bits := math.Float32bits(float32(255 * rng.Float64()))
		swapped := bits>>24 | bits>>8&0xff00 | bits<<8&0xff0000 | bits<<24
		if Implausible(float64(math.Float32frombits(swapped))) {
			beyond++
		}
	}
	if beyond < n/20 {
		t.Errorf("%d of %d byte-swapped values beyond ±1e30, want at least 5 %%", beyond, n)
	}
}
