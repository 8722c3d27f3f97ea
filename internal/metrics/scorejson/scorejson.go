// Package scorejson is the JSON form of quality scores: the report that
// `tdsc eval --json` writes and the regression gate reads back as a
// baseline, and Float, the number type of every score in tdsc's JSON files
// (batch results too).
//
// JSON has no infinities and no NaN. A score that is not finite (the +Inf
// PSNR of an input equal to its reference) is written as null, and null is
// read back as +Inf. A score that a result or band does not hold at all is
// read as NaN, which the JSON can hold in no other way, so a reader can tell
// a missing score from any written one.
package scorejson

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Float is a float64 that is written as null when it is not finite and
// read back from null as +Inf. Finite values are written in the shortest
// form that reads back to the same float64.
type Float float64

// MarshalJSON writes f, null when it is not finite.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON reads a number, or null as +Inf.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.Inf(1))
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*f = Float(v)
	return nil
}

// absent is the value of a score that the JSON does not hold.
var absent = Float(math.NaN())

// Report is the document of `tdsc eval --json`: the scores of every input
// against the reference Ref, in the order of the command line.
type Report struct {
	Ref     string   `json:"ref"`
	Results []Result `json:"results"`
}

// Result holds the scores of one input: the means over bands of the PSNR
// (dB) and SSIM, the SAM (degrees) and ERGAS of the whole cube (package
// metrics), how much of the reference they cover, and the same of every
// band.
type Result struct {
	Input string `json:"input"`
	PSNR  Float  `json:"psnr"`
	SSIM  Float  `json:"ssim"`
	SAM   Float  `json:"sam"`
	ERGAS Float  `json:"ergas"`
	Coverage
	Bands []Band `json:"bands"`
}

// Coverage says how much of the reference the scores cover: the voxels
// scored (with data in the reference and the input) and the voxels with
// data in the reference. Reports written before coverage was recorded
// read as 0 of 0.
type Coverage struct {
	Scored   int `json:"voxels_scored"`
	WithData int `json:"voxels_with_data"`
}

// Band holds the scores of band number Band (1-based) of an input.
type Band struct {
	Band int   `json:"band"`
	PSNR Float `json:"psnr"`
	SSIM Float `json:"ssim"`
	Coverage
}

// UnmarshalJSON reads a result; a score it does not hold reads as NaN.
func (r *Result) UnmarshalJSON(data []byte) error {
	type result Result // Result's fields without this method
	v := result{PSNR: absent, SSIM: absent, SAM: absent, ERGAS: absent}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = Result(v)
	return nil
}

// UnmarshalJSON reads a band; a score it does not hold reads as NaN.
func (b *Band) UnmarshalJSON(data []byte) error {
	type band Band // Band's fields without this method
	v := band{PSNR: absent, SSIM: absent}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*b = Band(v)
	return nil
}

// Write writes r to w as JSON indented by two spaces, with a final newline.
func Write(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Parse reads a report from data. An error in a result names it by its
// 1-based number. Parse checks the form only: a report may have no results,
// and a result may lack its input or scores (see the package comment).
func Parse(data []byte) (*Report, error) {
	var doc struct {
		Report
		// The results one at a time, so that an error can say which.
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	r := &doc.Report
	r.Results = make([]Result, len(doc.Results))
	for i, raw := range doc.Results {
		if err := json.Unmarshal(raw, &r.Results[i]); err != nil {
			return nil, fmt.Errorf("result %d: %v", i+1, err)
		}
	}
	return r, nil
}
