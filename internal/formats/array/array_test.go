package array

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAutoScale(t *testing.T) {
	for _, tc := range []struct {
		dtype string
		max   float64
		want  float64
	}{
		{"uint8", 255, 1},
		{"uint8", 0, 1},
		{"uint16", 255, 1},
		{"uint16", 256, 255.0 / 511},
		{"uint16", 1023, 255.0 / 1023},
		{"uint16", 4000, 255.0 / 4095},
		{"uint16", 4095, 255.0 / 4095},
		{"uint16", 4096, 255.0 / 8191},
		{"uint16", 65535, 255.0 / 65535},
		{"int16", 32767, 255.0 / 32767},
		{"int16", -5, 1},
		{"float32", 1, 255},
		{"float32", 0.2, 255},
		{"float64", -3, 255},
		{"float64", 1.3, 255},
		{"float64", 2, 255},
		{"float64", 2.0001, 1},
		{"float64", 255, 1},
		{"float64", 255.5, 1},
		{"float32", 1e6, 1},
	} {
		if got := AutoScale(tc.dtype, tc.max); got != tc.want {
			t.Errorf("AutoScale(%s, %v) = %v, want %v", tc.dtype, tc.max, got, tc.want)
		}
	}
	// The full-scale value of the chosen depth lands on 255, and the
	// largest value at most on it, for any maximum.
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		m := math.Exp2(rng.Float64()*40) + 255
		s := AutoScale("uint16", m)
		full := 255 / s
		if m*s > 255*(1+1e-12) || math.Abs(full-math.Round(full)) > 1e-6*full || full > 2*m+1 {
			t.Fatalf("max %v: scale %v, full scale %v", m, s, full)
		}
	}
}
