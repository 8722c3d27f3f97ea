package noiselevel

import (
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/noise"
	"tdsc/internal/testenv"
)

// BenchmarkEstimateBalloons times Estimate on the full balloons scene
// with Gaussian noise of σ = 30 (512×512×31).
func BenchmarkEstimateBalloons(b *testing.B) {
	clean, err := formats.Open(testenv.Path(b, "cave", "balloons_ms"))
	if err != nil {
		b.Fatal(err)
	}
	noisy := noise.Add(nil, clean, 30, 1)
	for b.Loop() {
		Estimate(noisy, Options{})
	}
}
