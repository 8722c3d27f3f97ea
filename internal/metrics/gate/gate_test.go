package gate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	base := map[string]Scores{"a.hdr": {PSNR: 40, SSIM: 0.95}, "exact": {PSNR: math.Inf(1), SSIM: 1}}
	for _, c := range []struct {
		name  string
		crit  Criteria
		input string
		s     Scores
		fails []string // substrings of the reasons, in order
	}{
		{"no criteria", Criteria{MinPSNR: NoFloor, MinSSIM: NoFloor}, "x", full(1, 0), nil},
		{"floors met exactly", Criteria{MinPSNR: 40, MinSSIM: 0.95}, "x", full(40, 0.95), nil},
		{"PSNR floor", Criteria{MinPSNR: 40.5, MinSSIM: NoFloor}, "x", full(40.4, 1), []string{"PSNR 40.4000 dB is below the floor 40.5 dB"}},
		{"both floors", Criteria{MinPSNR: 41, MinSSIM: 0.96}, "x", full(40, 0.95), []string{"PSNR", "SSIM 0.9500 is below the floor 0.96"}},
		{"NaN fails a floor", Criteria{MinPSNR: 0, MinSSIM: NoFloor}, "x", full(math.NaN(), 1), []string{"PSNR NaN"}},
		{"NaN without a floor", Criteria{MinPSNR: NoFloor, MinSSIM: NoFloor}, "x", full(math.NaN(), math.NaN()), nil},
		{"exact input", Criteria{MinPSNR: 99, MinSSIM: 1, Baseline: base}, "exact", full(math.Inf(1), 1), nil},
		{"drop within", Criteria{MinPSNR: NoFloor, MinSSIM: NoFloor, Baseline: base, MaxDrop: 0.1}, "a.hdr", full(39.9, 0.9), nil},
		{"drop beyond", Criteria{MinPSNR: NoFloor, MinSSIM: NoFloor, Baseline: base, MaxDrop: 0.1}, "a.hdr", full(39.8, 0.9), []string{"0.2000 dB below the baseline's 40.0000 dB (at most 0.1 allowed)"}},
		{"no drop allowed", Criteria{MinPSNR: NoFloor, MinSSIM: NoFloor, Baseline: base}, "a.hdr", full(39.99, 0.9), []string{"below the baseline"}},
		{"better than the baseline", Criteria{MinPSNR: NoFloor, MinSSIM: NoFloor, Baseline: base}, "a.hdr", full(41, 0.9), nil},
		{"voxels missing", Criteria{MinPSNR: 40, MinSSIM: NoFloor}, "x", Scores{PSNR: 46.77, SSIM: 0.99, Scored: 500, WithData: 1000},
			[]string{"500 of the reference's 1000 voxels with data are missing in the input (50.00 % scored)"}},
		{"voxels missing, allowed", Criteria{MinPSNR: 40, MinSSIM: NoFloor, AllowMissing: true}, "x", Scores{PSNR: 46.77, SSIM: 0.99, Scored: 500, WithData: 1000}, nil},
		{"one voxel missing", Criteria{MinPSNR: NoFloor, MinSSIM: NoFloor}, "x", Scores{PSNR: 46.77, SSIM: 0.99, Scored: 99999, WithData: 100000},
			[]string{"(99.99 % scored)"}},
		{"bands unscored, allowed or not", Criteria{MinPSNR: 40, MinSSIM: 0.9, AllowMissing: true}, "x", Scores{PSNR: math.Inf(1), SSIM: 1, Scored: 10, WithData: 310, Unscored: []int{2, 3, 4, 7}},
			[]string{"no score in bands 2–4 and 7: the reference has data there, the input none"}},
		{"nothing to score", Criteria{MinPSNR: NoFloor, MinSSIM: NoFloor, AllowMissing: true}, "x", Scores{PSNR: math.NaN(), SSIM: math.NaN()},
			[]string{"the reference has no voxel with data to score"}},
	} {
		if err := c.crit.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		why, err := c.crit.Check(c.input, c.s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(why) != len(c.fails) {
			t.Errorf("%s: reasons %q, want %d", c.name, why, len(c.fails))
			continue
		}
		for i, w := range c.fails {
			if !strings.Contains(why[i], w) {
				t.Errorf("%s: reason %q does not contain %q", c.name, why[i], w)
			}
		}
	}
	c := Criteria{MinPSNR: NoFloor, MinSSIM: NoFloor, Baseline: base}
	if _, err := c.Check("other.hdr", full(50, 1)); err == nil || !strings.Contains(err.Error(), "no result for other.hdr") {
		t.Errorf("input missing from the baseline: %v", err)
	}
}

// full returns scores that cover the whole reference.
func full(psnr, ssim float64) Scores {
	return Scores{PSNR: psnr, SSIM: ssim, Scored: 100, WithData: 100}
}

func TestBands(t *testing.T) {
	for _, c := range []struct {
		bands []int
		want  string
	}{
		{[]int{4}, "band 4"},
		{[]int{2, 3}, "bands 2–3"},
		{[]int{1, 3, 4, 5, 9}, "bands 1, 3–5 and 9"},
		{[]int{1, 3}, "bands 1 and 3"},
	} {
		if got := Bands(c.bands); got != c.want {
			t.Errorf("Bands(%v) = %q, want %q", c.bands, got, c.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		part, whole int
		want        string
	}{{5, 5, "100 %"}, {99999, 100000, "99.99 %"}, {1, 3, "33.33 %"}, {2, 3, "66.66 %"}, {0, 7, "0.00 %"}} {
		if got := Percent(c.part, c.whole); got != c.want {
			t.Errorf("Percent(%d, %d) = %q, want %q", c.part, c.whole, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Criteria{
		{MinPSNR: math.NaN()}, {MinSSIM: math.Inf(1)}, {MaxDrop: -1}, {MaxDrop: math.Inf(1)}, {MaxDrop: math.NaN()},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

func TestParseBaseline(t *testing.T) {
	good := `{"ref": "r", "results": [
		{"input": "a.hdr", "psnr": 40.5, "ssim": 0.9, "sam": 1, "bands": []},
		{"input": "exact", "psnr": null, "ssim": 1}]}`
	b, err := ParseBaseline([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if a := b["a.hdr"]; a.PSNR != 40.5 || a.SSIM != 0.9 || !math.IsInf(b["exact"].PSNR, 1) || len(b) != 2 {
		t.Errorf("parsed %v", b)
	}
	for _, c := range []struct{ data, want string }{
		{`not json`, "not the JSON of tdsc eval --json"},
		{`{"results": []}`, "no results"},
		{`{"ref": "r"}`, "no results"},
		{`{"results": [{"psnr": 1, "ssim": 1}]}`, "result 1 has no input"},
		{`{"results": [{"input": "a", "ssim": 1}]}`, "result 1 (a) has no psnr"},
		{`{"results": [{"input": "a", "psnr": 1}]}`, "result 1 (a) has no finite ssim"},
		{`{"results": [{"input": "a", "psnr": "x", "ssim": 1}]}`, `result 1: not a number: "x"`},
		{`{"results": [{"input": "a", "psnr": null, "ssim": null}]}`, "result 1 (a) has no finite ssim"},
		{`{"results": [{"input": "a", "psnr": 1, "ssim": 1}, {"input": "a", "psnr": 2, "ssim": 1}]}`, "input a appears twice"},
	} {
		if _, err := ParseBaseline([]byte(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.data, err, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "base.json")
	if err := os.WriteFile(path, []byte(`{"results": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBaseline(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadBaseline error does not name the file: %v", err)
	}
}

// FuzzParseBaseline: any input either fails or gives results with an input
// name and a finite SSIM each.
func FuzzParseBaseline(f *testing.F) {
	f.Add([]byte(`{"results": [{"input": "a", "psnr": 1, "ssim": 0.5}]}`))
	f.Add([]byte(`{"results": [{"input": "a", "psnr": null, "ssim": 1}]}`))
	f.Add([]byte(`{"results": [{"input": "", "psnr": 1e999, "ssim": 1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseBaseline(data)
		if err != nil {
			return
		}
		if len(b) == 0 {
			t.Fatal("no error and no results")
		}
		for in, s := range b {
			if in == "" || math.IsNaN(s.SSIM) || math.IsInf(s.SSIM, 0) || math.IsNaN(s.PSNR) {
				t.Fatalf("accepted %q: %+v", in, s)
			}
		}
	})
}
