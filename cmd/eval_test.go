package cmd

import (
	"bytes"
	"math"
	"testing"

	"tdsc/internal/metrics"
	"tdsc/internal/metrics/gate"
)

// TestEvalJSONIsABaseline writes the JSON of eval --json and reads it back
// as the gate's baseline: every input with its PSNR and SSIM, bit for bit,
// and an exact input's +Inf PSNR through null.
func TestEvalJSONIsABaseline(t *testing.T) {
	rows := []evalRow{
		{input: "denoised.hdr", rep: &metrics.Report{PSNR: 41.234567890123456, SSIM: 0.9876543210987654, SAM: 2.5, ERGAS: 7.25,
			BandPSNR: []float64{40, 42.46913578024691}, BandSSIM: []float64{0.97, 1.0053086421975308},
			Scored: 7, WithData: 8, BandScored: []int{3, 4}, BandWithData: []int{4, 4}}},
		{input: "exact.npy", rep: &metrics.Report{PSNR: math.Inf(1), SSIM: 1, SAM: math.NaN(), ERGAS: 0,
			BandPSNR: []float64{math.Inf(1)}, BandSSIM: []float64{1}, Scored: 4, WithData: 4, BandScored: []int{4}, BandWithData: []int{4}}},
	}
	var buf bytes.Buffer
	if err := writeEvalJSON(&buf, "clean", rows); err != nil {
		t.Fatal(err)
	}
	base, err := gate.ParseBaseline(buf.Bytes())
	if err != nil {
		t.Fatalf("the gate does not read eval's JSON: %v\n%s", err, buf.Bytes())
	}
	if len(base) != len(rows) {
		t.Errorf("%d inputs read back, %d written", len(base), len(rows))
	}
	for _, r := range rows {
		s, ok := base[r.input]
		if !ok {
			t.Errorf("%s is not in the baseline", r.input)
			continue
		}
		if math.Float64bits(s.PSNR) != math.Float64bits(r.rep.PSNR) || math.Float64bits(s.SSIM) != math.Float64bits(r.rep.SSIM) {
			t.Errorf("%s: read back PSNR %v SSIM %v, wrote %v and %v", r.input, s.PSNR, s.SSIM, r.rep.PSNR, r.rep.SSIM)
		}
	}
}
