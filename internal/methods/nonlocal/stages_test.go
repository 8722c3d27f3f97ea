package nonlocal

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/testenv/cubetest"
)

// BenchmarkStages measures the stage table of docs/results.md: the
// seconds and the PSNR after every stage of the method with its defaults,
// on the clean cube $TDSC_STAGES_REF with Gaussian noise of every σ in
// $TDSC_STAGES_SIGMAS (default "10,30,50"; seed 1, as tdsc noise --seed 1).
// Skipped without the cube. Each σ is a sub-benchmark that times the
// method and reports the PSNR after each stage (dB-after-STAGE); the
// benchmark then logs the table (-v). Run with -benchtime 1x, and with
// -cpuprofile for the profile.
//
// $TDSC_STAGES_EIGEN, if set, overrides the rule of the band handling
// (eigen.go): -1 keeps the bands, k > 0 works on k eigen-images; the table
// of both chains in docs/results.md.
//
// With $TDSC_STAGES_ORACLE set it also measures how far the low-rank rounds
// can go when grouping and subspace are perfect: the rounds of the default,
// at the rank it chose, with the clean cube as the pilot of every round
// (groups matched on it, the subspace fitted on it), at the default search
// window and at a window of oracleWindow pixels.
func BenchmarkStages(b *testing.B) {
	path := os.Getenv("TDSC_STAGES_REF")
	if path == "" {
		b.Skip("TDSC_STAGES_REF not set")
	}
	clean, err := formats.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	sigmas := os.Getenv("TDSC_STAGES_SIGMAS")
	if sigmas == "" {
		sigmas = "10,30,50"
	}
	eigenImages := 0
	if v := os.Getenv("TDSC_STAGES_EIGEN"); v != "" {
		if eigenImages, err = strconv.Atoi(v); err != nil {
			b.Fatalf("TDSC_STAGES_EIGEN: %v", err)
		}
	}
	var table strings.Builder
	table.WriteString("| σ | stage | s | PSNR dB |\n|---|---|---|---|\n")
	for _, field := range strings.Split(sigmas, ",") {
		sigma, err := strconv.ParseFloat(field, 64)
		if err != nil {
			b.Fatalf("TDSC_STAGES_SIGMAS: %v", err)
		}
		noisy := noise.Add(nil, clean, sigma, 1)
		b.Run(fmt.Sprintf("sigma=%g", sigma), func(b *testing.B) {
			// The rows of the last run: b.Loop runs the method at
			// least once.
			var rows strings.Builder
			var stagePSNR []float64
			var stageNames []string
			rank := 0
			for b.Loop() {
				rows.Reset()
				stagePSNR, stageNames = stagePSNR[:0], stageNames[:0]
				fmt.Fprintf(&rows, "| %g | noisy | | %.2f |\n", sigma, cubetest.PSNR(b, clean, noisy))
				start := time.Now()
				d := &Denoiser{eigenImages: eigenImages, afterStage: func(name string, x *msi.Cube, took time.Duration) {
					p := cubetest.PSNR(b, clean, x)
					stagePSNR, stageNames = append(stagePSNR, p), append(stageNames, name)
					fmt.Fprintf(&rows, "| %g | %s | %.1f | %.2f |\n", sigma, name, took.Seconds(), p)
				}}
				_, res, err := d.Denoise(context.Background(), noisy, sigma)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(&rows, "| %g | all (%v) | %.1f | |\n", sigma, res.Settings, time.Since(start).Seconds())
				for _, p := range res.Settings {
					if p.Name == "rank" {
						rank, _ = strconv.Atoi(p.Value)
					}
				}
			}
			b.StopTimer()
			if os.Getenv("TDSC_STAGES_ORACLE") != "" {
				for _, window := range []int{lowRankShape.Window, oracleWindow} {
					start := time.Now()
					x := oracleRounds(b, noisy, clean, sigma, rank, window)
					fmt.Fprintf(&rows, "| %g | low-rank rounds, clean pilot, window %d | %.1f | %.2f |\n", sigma, window, time.Since(start).Seconds(), cubetest.PSNR(b, clean, x))
				}
			}
			for i, p := range stagePSNR {
				b.ReportMetric(p, "dB-after-"+strings.ReplaceAll(stageNames[i], " ", "-"))
			}
			table.WriteString(rows.String())
		})
	}
	b.Log("\n" + table.String())
}

// oracleWindow is the larger search window of BenchmarkStages' clean-pilot rows.
const oracleWindow = 51

// oracleRounds runs the default's low-rank rounds on noisy with clean as the
// pilot of every round, iterative regularisation as in Denoise.
func oracleRounds(tb testing.TB, noisy, clean *msi.Cube, sigma float64, rank, window int) *msi.Cube {
	lr := lowRankShape
	lr.K, lr.Window = DefaultGroup, window
	y, s := noisy, sigma
	var x *msi.Cube
	for i := range DefaultRounds {
		if i > 0 {
			y, s = regularise(noisy, x, sigma)
		}
		var err error
		if x, err = lowRankStage(context.Background(), y, clean, s, rank, lr, wnnmC, 0, nil); err != nil {
			tb.Fatal(err)
		}
	}
	return x
}
