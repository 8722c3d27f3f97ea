package noiselevel

import (
	"fmt"
	"slices"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/testenv"
)

// openScene reads a shared CAVE scene (skipping when the data are absent).
func openScene(b *testing.B, name string) *msi.Cube {
	c, err := formats.Open(testenv.Path(b, "cave", name))
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkEstimateBalloons times Estimate on the full balloons scene with
// Gaussian noise of σ = 30 (512×512×31), and beside it the sparse-noise
// detector the pipeline runs on every cube already (sparsenoise.Detect), so
// that the added time is read as a ratio measured in one run.
func BenchmarkEstimateBalloons(b *testing.B) {
	noisy := noise.Add(nil, openScene(b, "balloons_ms"), 30, 1)
	b.Run("Estimate", func(b *testing.B) {
		for b.Loop() {
			Estimate(noisy, Options{})
		}
	})
	b.Run("sparsenoise.Detect", func(b *testing.B) {
		for b.Loop() {
			sparsenoise.Detect(noisy)
		}
	})
}

// resampleBands returns c with its bands linearly interpolated to bands
// bands spread evenly from its first to its last band: a hyperspectral
// cube of the same scene.
func resampleBands(c *msi.Cube, bands int) *msi.Cube {
	out := msi.NewCube(c.Height, c.Width, bands)
	for k := range bands {
		pos := float64(k) * float64(c.Bands-1) / float64(bands-1)
		i := min(int(pos), c.Bands-2)
		f := pos - float64(i)
		lo, hi, dst := c.Band(i), c.Band(i+1), out.Band(k)
		for p := range dst {
			dst[p] = (1-f)*lo[p] + f*hi[p]
		}
	}
	return out
}

// BenchmarkDecision is the measurement behind the decision's thresholds:
// for every cube of the table in docs/results.md it reports the pooled Z,
// the median bright/dark Ratio, signal-dependent (1) or not (0), and the
// median a and b over bands. The Gaussian cubes are the shared CAVE scenes
// (whole) and the chart crop at σ = 5, 10, 30, 50 and the chart crop with
// QRNN3D's five cases (also with the impulses and dead pixels that
// sparsenoise.Detect finds passed as the mask), the Poisson-Gaussian ones the 160×160 centre crops
// (the chart crop whole) at (a, b) = (2, 16), (0.5, 36), (4, 1), with 31
// bands and resampled to 224, all with seed 1 as tdsc noise draws them.
func BenchmarkDecision(b *testing.B) {
	report := func(b *testing.B, noisy *msi.Cube, opts Options) {
		var r *Report
		for b.Loop() {
			r = Estimate(noisy, opts)
		}
		as, bs := make([]float64, noisy.Bands), make([]float64, noisy.Bands)
		for i, f := range r.Functions {
			as[i], bs[i] = f.A, f.B
		}
		dependent := 0.0
		if r.SignalDependent {
			dependent = 1
		}
		b.ReportMetric(r.Z, "z")
		b.ReportMetric(r.Ratio, "ratio")
		b.ReportMetric(dependent, "signal-dependent")
		b.ReportMetric(sparsenoise.Median(as), "a")
		b.ReportMetric(sparsenoise.Median(bs), "b")
	}
	simulate := func(b *testing.B, clean *msi.Cube, spec noise.Spec) *msi.Cube {
		spec.Seed = 1
		noisy, _, err := noise.Simulate(nil, clean, spec)
		if err != nil {
			b.Fatal(err)
		}
		return noisy
	}
	scenes := []string{"balloons_ms", "chart_and_stuffed_toy_ms", "superballs_ms", "watercolors_ms", "chart_crop101"}
	for _, name := range scenes {
		clean := openScene(b, name)
		for _, sigma := range []float64{5, 10, 30, 50} {
			b.Run(fmt.Sprintf("gaussian/%s/sigma=%g", name, sigma), func(b *testing.B) {
				report(b, simulate(b, clean, noise.Spec{Sigma: sigma}), Options{})
			})
		}
		if name == "chart_crop101" {
			for k := range 5 {
				c, err := noise.ParseCase("case", fmt.Sprint(k+1))
				if err != nil {
					b.Fatal(err)
				}
				noisy, _, err := noise.SimulateCase(nil, clean, c, 1)
				if err != nil {
					b.Fatal(err)
				}
				b.Run(fmt.Sprintf("gaussian/%s/case=%d", name, k+1), func(b *testing.B) {
					report(b, noisy, Options{})
				})
				// With the impulses and dead pixels the sparse-noise
				// detector finds left out, as the pipeline leaves them.
				b.Run(fmt.Sprintf("gaussian/%s/case=%d/detector-mask", name, k+1), func(b *testing.B) {
					det := sparsenoise.Detect(noisy)
					mask := make([]uint8, len(det.Mask))
					for i, m := range det.Mask {
						mask[i] = m & (sparsenoise.Impulse | sparsenoise.Dead)
					}
					report(b, noisy, Options{Mask: mask})
				})
			}
		}
		crop := clean
		if clean.Height > 160 {
			crop = clean.Crop((clean.Height-160)/2, (clean.Width-160)/2, 0, 160, 160, clean.Bands)
		}
		for _, bands := range []int{31, 224} {
			c := crop
			if bands != c.Bands {
				c = resampleBands(crop, bands)
			}
			for _, l := range []noise.Level{{A: 2, B: 16}, {A: 0.5, B: 36}, {A: 4, B: 1}} {
				b.Run(fmt.Sprintf("poisson/%s/bands=%d/a=%g,b=%g", name, bands, l.A, l.B), func(b *testing.B) {
					report(b, simulate(b, c, noise.Spec{PoissonGaussian: slices.Repeat([]noise.Level{l}, bands)}), Options{})
				})
			}
		}
	}
}
