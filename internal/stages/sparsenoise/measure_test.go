package sparsenoise

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/tile/tiletest"
)

// BenchmarkQRNN3D measures Detect against the truth on the five QRNN3D
// cases written by the shared generator (mixed_cases.py) with their exact
// sparse parts (scripts/qrnn3d-sparse.py), for every NAME_c1.hdr in the
// folder $TDSC_QRNN3D_DIR; skipped without it. Each case is a
// sub-benchmark that times Detect and reports its σ error, impulse and
// striped-column true-positive rates (%) and stripe-offset RMSE; the
// benchmark then logs the table of docs/results.md ("Finding real noise"),
// and what Detect finds in each NAME_clean.hdr. scripts/find-noise.sh
// makes the folder and runs it (-benchtime 1x: one Detect per case).
func BenchmarkQRNN3D(b *testing.B) {
	dir := os.Getenv("TDSC_QRNN3D_DIR")
	if dir == "" {
		b.Skip("TDSC_QRNN3D_DIR not set")
	}
	firsts, err := filepath.Glob(filepath.Join(dir, "*_c1.hdr"))
	if err != nil || len(firsts) == 0 {
		b.Fatalf("no *_c1.hdr in %s", dir)
	}
	var table strings.Builder
	table.WriteString(tableHeader + "\n")
	for _, first := range firsts {
		name := strings.TrimSuffix(filepath.Base(first), "_c1.hdr")
		if clean, err := formats.Open(filepath.Join(dir, name+"_clean.hdr")); err == nil {
			b.Logf("%s clean:\n%s", name, Detect(clean).Summary())
		}
		for k := noise.CaseNonIID; k <= noise.CaseMixture; k++ {
			base := filepath.Join(dir, name+"_c"+string(rune('0'+k)))
			noisy, err := formats.Open(base + ".hdr")
			if err != nil {
				b.Fatal(err)
			}
			sparse, err := formats.Open(base + "_sparse.hdr")
			if err != nil {
				b.Fatal(err)
			}
			var info struct{ Sigma []float64 }
			raw, err := os.ReadFile(base + ".json")
			if err != nil {
				b.Fatal(err)
			}
			if err := json.Unmarshal(raw, &info); err != nil {
				b.Fatalf("%s.json: %v", base, err)
			}
			tr := truthOf(noisy.Data, sparse.Data, noisy.Height, noisy.Width, noisy.Bands, info.Sigma)
			b.Run(fmt.Sprintf("%s/c%d", name, k), func(b *testing.B) {
				var r *Report
				for b.Loop() {
					r = Detect(noisy)
				}
				sc := score(r, tr, noise.Estimate(noisy))
				b.ReportMetric(sc.sigmaErr, "σ-err")
				// A rate is reported where the case has what it counts.
				if sc.impulses > 0 {
					b.ReportMetric(100*sc.impulseTPR, "%impulses-found")
				}
				if sc.stripeCols > 0 {
					b.ReportMetric(100*sc.stripeTPR, "%stripes-found")
					b.ReportMetric(sc.offsetRMSE, "offset-RMSE")
				}
				table.WriteString(sc.row(name, k.Name()) + "\n")
			})
		}
	}
	b.Log("\n" + table.String())
}

// BenchmarkDetect512 times Detect on a 512×512×31 cube with the mixture
// case's noise (the balloons crop tiled 4×4).
func BenchmarkDetect512(b *testing.B) {
	noisy := mixture512(b)
	for b.Loop() {
		Detect(noisy)
	}
}

// BenchmarkFit512 times Fit on the cube of BenchmarkDetect512 in windows
// of 64 lines.
func BenchmarkFit512(b *testing.B) {
	noisy := mixture512(b)
	for b.Loop() {
		if _, err := Fit(context.Background(), tiletest.Lines{Cube: noisy}, 64, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// mixture512 is the balloons crop tiled 4×4 (512×512×31) with the
// mixture case's noise.
func mixture512(b *testing.B) *msi.Cube {
	crop, err := formats.Open("../../../testdata/balloons_crop128")
	if err != nil {
		b.Fatal(err)
	}
	big := msi.NewCube(4*crop.Height, 4*crop.Width, crop.Bands)
	for band := range big.Bands {
		for y := range big.Height {
			for x := range big.Width {
				big.Band(band)[y*big.Width+x] = crop.At(y%crop.Height, x%crop.Width, band)
			}
		}
	}
	noisy, _, err := noise.SimulateCase(nil, big, noise.CaseMixture, 1)
	if err != nil {
		b.Fatal(err)
	}
	return noisy
}
