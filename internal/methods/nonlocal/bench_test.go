package nonlocal

import (
	"context"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/noise"
)

// BenchmarkDenoiseCrop runs the whole method on the committed 128×128×31
// balloons crop at σ = 30.
func BenchmarkDenoiseCrop(b *testing.B) {
	clean, err := formats.Open("../../../testdata/balloons_crop128")
	if err != nil {
		b.Fatal(err)
	}
	noisy := noise.Add(nil, clean, 30, 1)
	for b.Loop() {
		d := &Denoiser{}
		if _, _, err := d.Denoise(context.Background(), noisy, 30); err != nil {
			b.Fatal(err)
		}
	}
}
