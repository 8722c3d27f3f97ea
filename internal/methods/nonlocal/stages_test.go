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
	}
	t.Log("\n" + table.String())
}
