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

// TestStages prints the stage table of docs/results.md: the seconds and
// the PSNR after every stage of the method with its defaults, on the clean
// cube $TDSC_STAGES_REF with Gaussian noise of every σ in
// $TDSC_STAGES_SIGMAS (default "10,30,50"; seed 1, as tdsc noise --seed 1).
// Skipped without the cube. Run with -cpuprofile for the profile.
//
// With $TDSC_STAGES_ORACLE set it also prints how far the low-rank rounds
// can go when grouping and subspace are perfect: the rounds of the default,
// at the rank it chose, with the clean cube as the pilot of every round
// (groups matched on it, the subspace fitted on it), at the default search
// window and at a window of oracleWindow pixels.
func TestStages(t *testing.T) {
	path := os.Getenv("TDSC_STAGES_REF")
	if path == "" {
		t.Skip("TDSC_STAGES_REF not set")
	}
	clean, err := formats.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sigmas := os.Getenv("TDSC_STAGES_SIGMAS")
	if sigmas == "" {
		sigmas = "10,30,50"
	}
	var table strings.Builder
	table.WriteString("| σ | stage | s | PSNR dB |\n|---|---|---|---|\n")
	for _, field := range strings.Split(sigmas, ",") {
		sigma, err := strconv.ParseFloat(field, 64)
		if err != nil {
			t.Fatalf("TDSC_STAGES_SIGMAS: %v", err)
		}
		noisy := noise.Add(nil, clean, sigma, 1)
		fmt.Fprintf(&table, "| %g | noisy | | %.2f |\n", sigma, cubetest.PSNR(t, clean, noisy))
		start := time.Now()
		d := &Denoiser{afterStage: func(name string, x *msi.Cube, took time.Duration) {
			fmt.Fprintf(&table, "| %g | %s | %.1f | %.2f |\n", sigma, name, took.Seconds(), cubetest.PSNR(t, clean, x))
		}}
		_, res, err := d.Denoise(context.Background(), noisy, sigma)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&table, "| %g | all (%v) | %.1f | |\n", sigma, res.Settings, time.Since(start).Seconds())
		if os.Getenv("TDSC_STAGES_ORACLE") != "" {
			rank := 0
			for _, p := range res.Settings {
				if p.Name == "rank" {
					rank, _ = strconv.Atoi(p.Value)
				}
			}
			for _, window := range []int{lowRankShape.Window, oracleWindow} {
				start := time.Now()
				x := oracleRounds(t, noisy, clean, sigma, rank, window)
				fmt.Fprintf(&table, "| %g | low-rank rounds, clean pilot, window %d | %.1f | %.2f |\n", sigma, window, time.Since(start).Seconds(), cubetest.PSNR(t, clean, x))
			}
		}
	}
	t.Log("\n" + table.String())
}

// oracleWindow is the larger search window of TestStages' clean-pilot rows.
const oracleWindow = 51

// oracleRounds runs the default's low-rank rounds on noisy with clean as the
// pilot of every round, iterative regularisation as in Denoise.
func oracleRounds(t *testing.T, noisy, clean *msi.Cube, sigma float64, rank, window int) *msi.Cube {
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
			t.Fatal(err)
		}
	}
	return x
}
