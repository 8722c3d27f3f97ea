package sparsenoise

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
)

// TestMeasureQRNN3D prints the table of docs/results.md ("Finding real
// noise"): Detect against the truth on the five QRNN3D cases written by
// the shared generator (mixed_cases.py) with their exact sparse parts
// (scripts/qrnn3d-sparse.py), for every NAME_c1.hdr in the folder
// $TDSC_QRNN3D_DIR (and it logs what Detect finds in NAME_clean.hdr);
// skipped without it. scripts/find-noise.sh makes the
// folder and runs it.
func TestMeasureQRNN3D(t *testing.T) {
	dir := os.Getenv("TDSC_QRNN3D_DIR")
	if dir == "" {
		t.Skip("TDSC_QRNN3D_DIR not set")
	}
	firsts, err := filepath.Glob(filepath.Join(dir, "*_c1.hdr"))
	if err != nil || len(firsts) == 0 {
		t.Fatalf("no *_c1.hdr in %s", dir)
	}
	var out strings.Builder
	out.WriteString(tableHeader + "\n")
	for _, first := range firsts {
		name := strings.TrimSuffix(filepath.Base(first), "_c1.hdr")
		if clean, err := formats.Open(filepath.Join(dir, name+"_clean.hdr")); err == nil {
			t.Logf("%s clean:\n%s", name, Detect(clean).Summary())
		}
		for k := noise.CaseNonIID; k <= noise.CaseMixture; k++ {
			base := filepath.Join(dir, name+"_c"+string(rune('0'+k)))
			noisy, err := formats.Open(base + ".hdr")
			if err != nil {
				t.Fatal(err)
			}
			sparse, err := formats.Open(base + "_sparse.hdr")
			if err != nil {
				t.Fatal(err)
			}
			var info struct{ Sigma []float64 }
			raw, err := os.ReadFile(base + ".json")
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &info); err != nil {
				t.Fatalf("%s.json: %v", base, err)
			}
			start := time.Now()
			r := Detect(noisy)
			elapsed := time.Since(start)
			tr := truthOf(noisy.Data, sparse.Data, noisy.Height, noisy.Width, noisy.Bands, info.Sigma)
			out.WriteString(score(r, tr, noise.Estimate(noisy)).row(name, k.Name()) + "\n")
			t.Logf("%s case %d: Detect took %v", name, k, elapsed)
		}
	}
	t.Log("\n" + out.String())
}

// BenchmarkDetect512 times Detect on a 512×512×31 cube with the mixture
// case's noise (the balloons crop tiled 4×4).
func BenchmarkDetect512(b *testing.B) {
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
	for b.Loop() {
		Detect(noisy)
	}
}
