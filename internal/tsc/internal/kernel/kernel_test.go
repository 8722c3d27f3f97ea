package kernel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// passRef is the definition of a pass: w[i] = src[i] + (v0·g0[i] + …), the
// products rounded and added left to right, and the positions with
// |w[i]| > τ (or NaN).
func passRef(src []float64, g [][]float64, v []float64, tau float64) ([]float64, []int32) {
	w := make([]float64, len(src))
	var above []int32
	for i := range w {
		sum := float64(v[0] * g[0][i])
		for r := 1; r < len(g); r++ {
			sum += float64(v[r] * g[r][i])
		}
		w[i] = src[i] + sum
		if !(math.Abs(w[i]) <= tau) {
			above = append(above, int32(i))
		}
	}
	return w, above
}

// TestPassesMatchDefinition checks every loop, with and without the list,
// against the definition bit for bit, for lengths around the widths of
// the loops (odd and even), with a NaN and a value at τ.
func TestPassesMatchDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	const tau = 0.75
	for n := range 23 {
		for _, runs := range []int{1, 2, 4} {
			src := make([]float64, n)
			for i := range src {
				src[i] = rng.NormFloat64()
			}
			if n > 5 {
				src[5] = math.NaN()
				src[3] = tau // plus a run that may keep it at τ
			}
			g := make([][]float64, runs)
			v := make([]float64, runs)
			for r := range g {
				g[r] = make([]float64, n)
				for i := range g[r] {
					g[r][i] = rng.NormFloat64()
				}
				if n > 3 {
					g[r][3] = 0
				}
				v[r] = rng.NormFloat64()
			}
			want, wantAbove := passRef(src, g, v, tau)
			for _, list := range []bool{false, true} {
				w := make([]float64, n)
				above := make([]int32, n)
				var k int
				switch runs {
				case 1:
					if list {
						k = Add1Above(w, src, g[0], v[0], math.Float64bits(tau), above)
					} else {
						Add1(w, src, g[0], v[0])
					}
				case 2:
					if list {
						k = Add2Above(w, src, g[0], g[1], v[0], v[1], math.Float64bits(tau), above)
					} else {
						Add2(w, src, g[0], g[1], v[0], v[1])
					}
				case 4:
					if list {
						k = Add4Above(w, src, g[0], g[1], g[2], g[3], v[0], v[1], v[2], v[3], math.Float64bits(tau), above)
					} else {
						Add4(w, src, g[0], g[1], g[2], g[3], v[0], v[1], v[2], v[3])
					}
				}
				for i := range w {
					if math.Float64bits(w[i]) != math.Float64bits(want[i]) {
						t.Fatalf("n=%d runs=%d list=%v: w[%d] = %v, want %v", n, runs, list, i, w[i], want[i])
					}
				}
				if list && !slices.Equal(above[:k], wantAbove) {
					t.Fatalf("n=%d runs=%d: above %v, want %v", n, runs, above[:k], wantAbove)
				}
			}
		}
	}
}
