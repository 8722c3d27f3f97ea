package cmd

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/quality/noref"
	"tdsc/internal/quality/scorejson"
)

// norefRow is the no-reference assessment of one input.
type norefRow struct {
	input string
	rep   *noref.Report
}

// runNoRef assesses inputs without a clean reference (eval --noref): the
// noise of every input, or with noisy given, what each input (a denoised
// version of it) removed from it.
func runNoRef(w io.Writer, inputs []string, noisyPath, estimator string, cf *cubeFlags, perBand, asCSV, asJSON bool) error {
	switch estimator {
	case noise.MAD, noise.Regression, noise.Smaller:
	default:
		return fmt.Errorf("--sigma-estimator must be %s, %s or %s, got %q", noise.MAD, noise.Regression, noise.Smaller, estimator)
	}
	var noisy *msi.Cube
	var err error
	if noisyPath != "" {
		if noisy, err = cf.open(noisyPath, nil); err != nil {
			return flagError(err)
		}
	}
	rows := make([]norefRow, len(inputs))
	for i, in := range inputs {
		var x *msi.Cube
		if noisy != nil {
			x, err = cf.openLike(in, noisy.Stored)
		} else {
			x, err = cf.open(in, nil)
		}
		if err != nil {
			return flagError(err)
		}
		var rep *noref.Report
		if noisy != nil {
			rep, err = noref.Assess(noisy, x, estimator)
		} else {
			rep, err = noref.Assess(x, nil, estimator)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in, flagError(err))
		}
		rows[i] = norefRow{input: in, rep: rep}
	}
	switch {
	case asJSON:
		return writeNoRefJSON(w, rows, noisyPath)
	case asCSV:
		return writeNoRefCSV(w, rows, noisyPath != "")
	}
	return writeNoRefTable(w, rows, noisyPath != "", perBand)
}

func writeNoRefTable(w io.Writer, rows []norefRow, residual, perBand bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
	if residual {
		fmt.Fprintln(tw, "input\tσ of noisy\tremoved σ\tcorr(removed, output)\t")
	} else {
		fmt.Fprintln(tw, "input\tσ\tmin σ\tmax σ\t")
	}
	for _, r := range rows {
		if residual {
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\t\n", r.input, r.rep.Mean.Sigma, r.rep.Mean.Removed, r.rep.Mean.Correlation)
		} else {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, b := range r.rep.Bands {
				lo, hi = math.Min(lo, b.Sigma), math.Max(hi, b.Sigma)
			}
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\t\n", r.input, r.rep.Mean.Sigma, lo, hi)
		}
		if !perBand {
			continue
		}
		for i, b := range r.rep.Bands {
			if residual {
				fmt.Fprintf(tw, "  band %d\t%.4f\t%.4f\t%.4f\t\n", i+1, b.Sigma, b.Removed, b.Correlation)
			} else {
				fmt.Fprintf(tw, "  band %d\t%.4f\t\n", i+1, b.Sigma)
			}
		}
	}
	return tw.Flush()
}

func writeNoRefCSV(w io.Writer, rows []norefRow, residual bool) error {
	cw := csv.NewWriter(w)
	header := []string{"input", "band", "sigma"}
	if residual {
		header = append(header, "removed", "correlation")
	}
	_ = cw.Write(header)
	for _, r := range rows {
		bands := append([]noref.Band{r.rep.Mean}, r.rep.Bands...)
		for i, b := range bands {
			band := "mean"
			if i > 0 {
				band = strconv.Itoa(i)
			}
			rec := []string{r.input, band, csvFloat(b.Sigma)}
			if residual {
				rec = append(rec, csvFloat(b.Removed), csvFloat(b.Correlation))
			}
			_ = cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

type norefJSONBand struct {
	Band        int              `json:"band"`
	Sigma       scorejson.Float  `json:"sigma"`
	Removed     *scorejson.Float `json:"removed,omitempty"`
	Correlation *scorejson.Float `json:"correlation,omitempty"`
}

type norefJSONResult struct {
	Input       string           `json:"input"`
	Sigma       scorejson.Float  `json:"sigma"`
	Removed     *scorejson.Float `json:"removed,omitempty"`
	Correlation *scorejson.Float `json:"correlation,omitempty"`
	Bands       []norefJSONBand  `json:"bands"`
}

func writeNoRefJSON(w io.Writer, rows []norefRow, noisyPath string) error {
	residual := noisyPath != ""
	opt := func(v float64) *scorejson.Float {
		if !residual {
			return nil
		}
		f := scorejson.Float(v)
		return &f
	}
	out := struct {
		Noisy   *string           `json:"noisy"`
		Results []norefJSONResult `json:"results"`
	}{}
	if residual {
		out.Noisy = &noisyPath
	}
	for _, r := range rows {
		res := norefJSONResult{Input: r.input, Sigma: scorejson.Float(r.rep.Mean.Sigma), Removed: opt(r.rep.Mean.Removed), Correlation: opt(r.rep.Mean.Correlation)}
		for i, b := range r.rep.Bands {
			res.Bands = append(res.Bands, norefJSONBand{Band: i + 1, Sigma: scorejson.Float(b.Sigma), Removed: opt(b.Removed), Correlation: opt(b.Correlation)})
		}
		out.Results = append(out.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
