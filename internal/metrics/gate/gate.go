// Package gate decides whether evaluation results pass a regression gate,
// as a CI job asks of `tdsc eval`: floors on the mean PSNR and SSIM, and a
// largest PSNR drop against a baseline (the JSON of an earlier `tdsc eval
// --json` run).
//
// Scores compare as they are: a floor is met when the score is at least the
// floor, a drop is allowed when the PSNR is at least the baseline's minus
// MaxDrop. An exact input has PSNR +Inf (null in the JSON), which meets
// every floor and every baseline.
//
// Scores leave out voxels missing in the input (package metrics), so a
// score alone would pass an input that lacks half its voxels, or all but
// one band. The gate therefore checks coverage first: an input that lacks
// a voxel the reference has fails unless Criteria.AllowMissing says it may,
// and a band that has data in the reference and no voxel scored always
// fails, as does a reference with no voxel to score: its figures would be
// those of the other bands, or none.
package gate

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"tdsc/internal/metrics/scorejson"
)

// Scores are the mean scores of one input and how much of the reference
// they cover.
type Scores struct {
	PSNR, SSIM float64
	// Scored counts the voxels scored, WithData those with data in the
	// reference; Unscored lists the bands (1-based) with data in the
	// reference and no voxel scored. A baseline's scores have none of them.
	Scored, WithData int
	Unscored         []int
}

// Criteria are what an input must meet. The zero value asks nothing: use
// NoFloor for an unset floor.
type Criteria struct {
	// MinPSNR (dB) and MinSSIM are floors; NoFloor sets none.
	MinPSNR, MinSSIM float64
	// Baseline holds earlier scores by input name (ReadBaseline); nil
	// compares with none.
	Baseline map[string]Scores
	// MaxDrop is the largest PSNR drop in dB below the baseline that still
	// passes (≥ 0).
	MaxDrop float64
	// AllowMissing lets an input lack voxels the reference has, as long
	// as every band keeps at least one; the scores are then those of the
	// voxels present.
	AllowMissing bool
}

// NoFloor is the value of a floor that is not set.
var NoFloor = math.Inf(-1)

// Validate checks c: floors that are numbers (or NoFloor), and a finite
// MaxDrop ≥ 0.
func (c *Criteria) Validate() error {
	switch {
	case math.IsNaN(c.MinPSNR) || math.IsInf(c.MinPSNR, 1):
		return fmt.Errorf("the PSNR floor must be a number, got %v", c.MinPSNR)
	case math.IsNaN(c.MinSSIM) || math.IsInf(c.MinSSIM, 1):
		return fmt.Errorf("the SSIM floor must be a number, got %v", c.MinSSIM)
	case !(c.MaxDrop >= 0) || math.IsInf(c.MaxDrop, 1):
		return fmt.Errorf("the largest drop must be a finite number ≥ 0, got %v", c.MaxDrop)
	}
	return nil
}

// Check returns why the scores s of input fall short of c, one reason per
// unmet criterion, or nothing when they pass. An input that a baseline does
// not list is an error: a gate that silently compared with nothing would
// pass anything.
func (c *Criteria) Check(input string, s Scores) ([]string, error) {
	var why []string
	switch {
	case s.WithData == 0:
		why = append(why, "the reference has no voxel with data to score")
	case len(s.Unscored) > 0:
		why = append(why, fmt.Sprintf("no score in %s: the reference has data there, the input none", Bands(s.Unscored)))
	}
	if s.Scored < s.WithData && !c.AllowMissing {
		why = append(why, fmt.Sprintf("%d of the reference's %d voxels with data are missing in the input (%s scored)",
			s.WithData-s.Scored, s.WithData, Percent(s.Scored, s.WithData)))
	}
	// A NaN score (no voxel or window left to score: every one missing)
	// fails a floor, but not the absence of one.
	if c.MinPSNR != NoFloor && !(s.PSNR >= c.MinPSNR) {
		why = append(why, fmt.Sprintf("PSNR %.4f dB is below the floor %g dB", s.PSNR, c.MinPSNR))
	}
	if c.MinSSIM != NoFloor && !(s.SSIM >= c.MinSSIM) {
		why = append(why, fmt.Sprintf("SSIM %.4f is below the floor %g", s.SSIM, c.MinSSIM))
	}
	if c.Baseline != nil {
		b, ok := c.Baseline[input]
		if !ok {
			return nil, fmt.Errorf("the baseline has no result for %s", input)
		}
		if !(s.PSNR >= b.PSNR-c.MaxDrop) {
			why = append(why, fmt.Sprintf("PSNR %.4f dB is %.4f dB below the baseline's %.4f dB (at most %g allowed)",
				s.PSNR, b.PSNR-s.PSNR, b.PSNR, c.MaxDrop))
		}
	}
	return why, nil
}

// Bands names 1-based band numbers, in increasing order, with runs
// shortened, for a message: "band 4", "bands 2–31", "bands 1, 3–5 and 9".
func Bands(bands []int) string {
	var runs []string
	for i := 0; i < len(bands); {
		j := i
		for j+1 < len(bands) && bands[j+1] == bands[j]+1 {
			j++
		}
		if j == i {
			runs = append(runs, strconv.Itoa(bands[i]))
		} else {
			runs = append(runs, fmt.Sprintf("%d–%d", bands[i], bands[j]))
		}
		i = j + 1
	}
	if len(bands) == 1 {
		return "band " + runs[0]
	}
	if len(runs) == 1 {
		return "bands " + runs[0]
	}
	return "bands " + strings.Join(runs[:len(runs)-1], ", ") + " and " + runs[len(runs)-1]
}

// Percent writes the fraction part/whole as a percentage with two
// decimals, rounded down so that anything short of the whole never reads
// "100.00 %" (and "100 %" for the whole).
func Percent(part, whole int) string {
	if part == whole {
		return "100 %"
	}
	return fmt.Sprintf("%.2f %%", math.Floor(10000*float64(part)/float64(whole))/100)
}

// ReadBaseline reads the file at path, the JSON of `tdsc eval --json`, and
// returns the scores of its results by input. Errors name the file.
func ReadBaseline(path string) (map[string]Scores, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b, err := ParseBaseline(data)
	if err != nil {
		return nil, fmt.Errorf("baseline %s: %w", path, err)
	}
	return b, nil
}

// ParseBaseline parses the JSON of `tdsc eval --json` (package scorejson)
// and returns the PSNR and SSIM of its results by input. A null PSNR is +Inf
// (an exact input). It is an error if there are no results, if a result has
// no input, a missing or non-finite SSIM, a missing PSNR, or if an input
// appears twice.
func ParseBaseline(data []byte) (map[string]Scores, error) {
	doc, err := scorejson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("not the JSON of tdsc eval --json: %v", err)
	}
	if len(doc.Results) == 0 {
		return nil, errors.New("no results (want the JSON of tdsc eval --json)")
	}
	out := make(map[string]Scores, len(doc.Results))
	for i, r := range doc.Results {
		psnr, ssim := float64(r.PSNR), float64(r.SSIM)
		switch {
		case r.Input == "":
			return nil, fmt.Errorf("result %d has no input", i+1)
		case math.IsNaN(psnr):
			return nil, fmt.Errorf("result %d (%s) has no psnr", i+1, r.Input)
		case math.IsNaN(ssim) || math.IsInf(ssim, 0):
			return nil, fmt.Errorf("result %d (%s) has no finite ssim", i+1, r.Input)
		}
		if _, dup := out[r.Input]; dup {
			return nil, fmt.Errorf("input %s appears twice", r.Input)
		}
		out[r.Input] = Scores{PSNR: psnr, SSIM: ssim}
	}
	return out, nil
}
