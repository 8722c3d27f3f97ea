package scorejson

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestWriteForm(t *testing.T) {
	r := &Report{Ref: "clean<&>", Results: []Result{
		{Input: "a.hdr", PSNR: 40.5, SSIM: 0.30000000000000004, SAM: 3, ERGAS: 1e-7, Coverage: Coverage{Scored: 7, WithData: 8},
			Bands: []Band{{Band: 1, PSNR: Float(math.Inf(1)), SSIM: 1, Coverage: Coverage{3, 4}}, {Band: 2, PSNR: -0, SSIM: Float(math.NaN()), Coverage: Coverage{4, 4}}}},
		{Input: "b", PSNR: Float(math.Inf(-1)), Bands: []Band{}},
	}}
	var buf bytes.Buffer
	if err := Write(&buf, r); err != nil {
		t.Fatal(err)
	}
	// Two-space indent, the fields in this order, the shortest numbers that
	// read back exactly, null for what is not finite, HTML characters
	// escaped, a final newline.
	want := `{
  "ref": "clean\u003c\u0026\u003e",
  "results": [
    {
      "input": "a.hdr",
      "psnr": 40.5,
      "ssim": 0.30000000000000004,
      "sam": 3,
      "ergas": 1e-07,
      "voxels_scored": 7,
      "voxels_with_data": 8,
      "bands": [
        {
          "band": 1,
          "psnr": null,
          "ssim": 1,
          "voxels_scored": 3,
          "voxels_with_data": 4
        },
        {
          "band": 2,
          "psnr": 0,
          "ssim": null,
          "voxels_scored": 4,
          "voxels_with_data": 4
        }
      ]
    },
    {
      "input": "b",
      "psnr": null,
      "ssim": 0,
      "sam": 0,
      "ergas": 0,
      "voxels_scored": 0,
      "voxels_with_data": 0,
      "bands": []
    }
  ]
}
`
	if got := buf.String(); got != want {
		t.Errorf("Write gives\n%s\nwant\n%s", got, want)
	}
}

// same reports whether a score read back is the one written: the same
// float64 bit for bit when it is finite, +Inf (null) when it is not.
func same(read, written Float) bool {
	w := float64(written)
	if math.IsInf(w, 0) || math.IsNaN(w) {
		return math.IsInf(float64(read), 1)
	}
	return math.Float64bits(float64(read)) == math.Float64bits(w)
}

func TestWriteParseRoundTrip(t *testing.T) {
	scores := []Float{0, 1, -2.5, 44.123456789012345, 1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64,
		Float(math.Inf(1)), Float(math.Inf(-1)), Float(math.NaN()), 0.30000000000000004, -1e-07}
	in := &Report{Ref: "ref dir"}
	for i, s := range scores {
		next := scores[(i+1)%len(scores)]
		in.Results = append(in.Results, Result{Input: strings.Repeat("x", i+1), PSNR: s, SSIM: next, SAM: -s, ERGAS: s * 2,
			Bands: []Band{{Band: 1, PSNR: next, SSIM: s}, {Band: 2, PSNR: s, SSIM: next}}})
	}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if out.Ref != in.Ref || len(out.Results) != len(in.Results) {
		t.Fatalf("read back ref %q and %d results, wrote %q and %d", out.Ref, len(out.Results), in.Ref, len(in.Results))
	}
	for i, w := range in.Results {
		r := out.Results[i]
		if r.Input != w.Input || !same(r.PSNR, w.PSNR) || !same(r.SSIM, w.SSIM) || !same(r.SAM, w.SAM) || !same(r.ERGAS, w.ERGAS) {
			t.Errorf("result %d: read %+v, wrote %+v", i+1, r, w)
		}
		if len(r.Bands) != len(w.Bands) {
			t.Fatalf("result %d: %d bands read, %d written", i+1, len(r.Bands), len(w.Bands))
		}
		for b, wb := range w.Bands {
			if rb := r.Bands[b]; rb.Band != wb.Band || !same(rb.PSNR, wb.PSNR) || !same(rb.SSIM, wb.SSIM) {
				t.Errorf("result %d band %d: read %+v, wrote %+v", i+1, b+1, rb, wb)
			}
		}
	}
}

func TestParseMissingScoresAreNaN(t *testing.T) {
	r, err := Parse([]byte(`{"results": [{"input": "a", "ssim": null, "bands": [{"band": 1, "psnr": 3}]}, null]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := r.Results[0]
	if !math.IsNaN(float64(a.PSNR)) || !math.IsInf(float64(a.SSIM), 1) || !math.IsNaN(float64(a.SAM)) || !math.IsNaN(float64(a.ERGAS)) {
		t.Errorf("missing psnr, sam, ergas and a null ssim read as %+v, want NaN, +Inf, NaN, NaN", a)
	}
	if b := a.Bands[0]; b.PSNR != 3 || !math.IsNaN(float64(b.SSIM)) {
		t.Errorf("a band without its ssim read as %+v, want ssim NaN", b)
	}
	if n := r.Results[1]; n.Input != "" || !math.IsNaN(float64(n.PSNR)) || !math.IsNaN(float64(n.SSIM)) {
		t.Errorf("a null result read as %+v, want no input and NaN scores", n)
	}
	// Unmarshal alone follows the same rule.
	var res Result
	if err := json.Unmarshal([]byte(`{"input": "b", "psnr": 1}`), &res); err != nil || res.PSNR != 1 || !math.IsNaN(float64(res.SSIM)) {
		t.Errorf("json.Unmarshal of a result without ssim: %+v, %v", res, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`PSNR 40`, "invalid character"},
		{`[]`, "cannot unmarshal array"},
		{`{"results": [{"input": "a", "psnr": 1}, {"input": "b", "psnr": "x"}]}`, `result 2: not a number: "x"`},
		{`{"results": [{"input": "a", "psnr": 1e999}]}`, "result 1: not a number: 1e999"},
		{`{"results": [{"input": "a", "bands": [{"ssim": true}]}]}`, "result 1: not a number: true"},
		{`{"results": [{"input": 5}]}`, "result 1: json: cannot unmarshal number"},
		{`{"results": [7]}`, "result 1: json: cannot unmarshal number"},
	} {
		if _, err := Parse([]byte(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.data, err, c.want)
		}
	}
}

func TestFloatJSON(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {-1.5, "-1.5"}, {1e21, "1e+21"}, {math.Inf(1), "null"}, {math.Inf(-1), "null"}, {math.NaN(), "null"},
	} {
		b, err := json.Marshal(Float(c.v))
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", c.v, b, err, c.want)
		}
	}
	var f Float
	if err := json.Unmarshal([]byte("null"), &f); err != nil || !math.IsInf(float64(f), 1) {
		t.Errorf("null read as %v, %v; want +Inf", f, err)
	}
	if err := json.Unmarshal([]byte(`"1"`), &f); err == nil {
		t.Errorf("a string read as the number %v", f)
	}
}
