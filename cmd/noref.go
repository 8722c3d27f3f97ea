package cmd

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"tdsc/internal/metrics/noref"
	"tdsc/internal/metrics/scorejson"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/parallel"
	"tdsc/internal/report"
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
	if err := noise.CheckEstimator("sigma-estimator", estimator); err != nil {
		return err
	}
	var noisy *msi.Cube
	var err error
	if noisyPath != "" {
		if noisy, err = cf.open(noisyPath); err != nil {
			return flagError(err)
		}
	}
	rows := make([]norefRow, len(inputs))
	for i, in := range inputs {
		open := cf.open
		if noisy != nil {
			open = func(path string) (*msi.Cube, error) { return cf.openLike(path, noisy, noisyPath) }
		}
		x, err := open(in)
		if err != nil {
			return flagError(err)
		}
		if err := noise.CheckSize(x.Height, x.Width, x.Bands); err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		// The statistics are computed into a new report: abandoned when
		// interrupted.
		rep, err := parallel.Interruptible(cf.ctx, func() (*noref.Report, error) {
			if noisy != nil {
				return noref.Assess(noisy, x, estimator)
			}
			return noref.Assess(x, nil, estimator)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", in, flagError(err))
		}
		rows[i] = norefRow{input: in, rep: rep}
		switch { // of the cube whose σ the report estimates, once
		case noisy == nil:
			sayBelowDetection(cf.log, in, rep)
		case i == 0:
			sayBelowDetection(cf.log, noisyPath, rep)
		}
	}
	switch {
	case asJSON:
		return writeNoRefJSON(w, rows, noisyPath)
	case asCSV:
		return writeNoRefCSV(w, rows, noisyPath != "", perBand)
	}
	if err := writeNoRefTable(w, rows, noisyPath != "", perBand); err != nil {
		return err
	}
	return writeNoiseLevelTable(w, rows, noisyPath, perBand)
}

// writeNoiseLevelTable prints, after the σ table and a blank line, the
// noise-level function σ²(x) = a·x + b of every input (with a noisy cube,
// of the noisy cube alone, which every input shares): the noise model
// decided on, the mean a and b over bands, the pooled slope statistic and
// the median bright/dark variance ratio; perBand adds every band's a and
// b.
func writeNoiseLevelTable(w io.Writer, rows []norefRow, noisyPath string, perBand bool) error {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "noise of\tmodel\ta\tb\tslope z\tbright/dark\t")
	if noisyPath != "" {
		rows = []norefRow{{input: noisyPath, rep: rows[0].rep}}
	}
	for _, r := range rows {
		nl := r.rep.NoiseLevel
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.4f\t%.1f\t%.2f\t\n", r.input, r.rep.NoiseModel(), r.rep.Mean.A, r.rep.Mean.B, nl.Z, nl.Ratio)
		if !perBand {
			continue
		}
		for i, b := range r.rep.Bands {
			fmt.Fprintf(tw, "  band %d\t\t%.4f\t%.4f\t\n", i+1, b.A, b.B)
		}
	}
	return tw.Flush()
}

// sayBelowDetection says on log when the noise of the cube at path, whose
// bands' σ rep estimated, is below detection (noise.BelowDetection).
func sayBelowDetection(log report.Reporter, path string, rep *noref.Report) {
	sigmas := make([]float64, len(rep.Bands))
	for b, band := range rep.Bands {
		sigmas[b] = band.Sigma
	}
	if why := noise.BelowDetection(sigmas); why != "" {
		report.OrDiscard(log).Logf("%s: %s", path, why)
	}
}

// summaryRows are the rows that summarise a report over bands, in the
// table and the CSV: the mean (the input's own row in the table), the
// smallest and the largest value.
func summaryRows(rep *noref.Report) []noref.Band { return []noref.Band{rep.Mean, rep.Min, rep.Max} }

// residualValues are the residual's statistics of b, in the order of the
// table's and the CSV's columns after σ: the moments, then the spectra's
// figures (flatness, period; see noref.Band).
func residualValues(b noref.Band) []float64 {
	return []float64{b.Removed, b.Correlation, b.LagX, b.LagY, b.ColumnShare, b.RowShare, b.Flatness, b.Period}
}

// writeNoRefTable prints one row per input. Without a denoised input its
// columns are the mean, smallest and largest σ over bands; with one, the
// input's row holds the means over bands, followed by rows of the smallest
// and the largest values. perBand adds a row for every band.
func writeNoRefTable(w io.Writer, rows []norefRow, residual, perBand bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', tabwriter.AlignRight)
	if residual {
		fmt.Fprintln(tw, "input\tσ of noisy\tremoved σ\tcorr(removed, output)\tlag-1 x\tlag-1 y\tcolumn share\trow share\tflatness\tperiod\t")
	} else {
		fmt.Fprintln(tw, "input\tσ\tmin σ\tmax σ\t")
	}
	line := func(label string, b noref.Band) {
		fmt.Fprintf(tw, "%s\t%.4f", label, b.Sigma)
		if residual {
			for _, v := range residualValues(b) {
				fmt.Fprintf(tw, "\t%.4f", v)
			}
		}
		fmt.Fprint(tw, "\t\n")
	}
	for _, r := range rows {
		if residual {
			for i, b := range summaryRows(r.rep) {
				line([]string{r.input, "  min over bands", "  max over bands"}[i], b)
			}
		} else {
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.4f\t\n", r.input, r.rep.Mean.Sigma, r.rep.Min.Sigma, r.rep.Max.Sigma)
		}
		if !perBand {
			continue
		}
		for i, b := range r.rep.Bands {
			line(fmt.Sprintf("  band %d", i+1), b)
		}
	}
	return tw.Flush()
}

// writeNoRefCSV prints, for every input, the rows "mean", "min" and "max"
// over bands and, with perBand, a row for every band (1-based), as the
// table does; each row ends with the noisy cube's a and b and its noise
// model.
func writeNoRefCSV(w io.Writer, rows []norefRow, residual, perBand bool) error {
	cw := csv.NewWriter(w)
	header := []string{"input", "band", "sigma"}
	if residual {
		header = append(header, "removed", "correlation", "lag_x", "lag_y", "column_share", "row_share", "flatness", "period")
	}
	header = append(header, "a", "b", "noise_model")
	_ = cw.Write(header)
	for _, r := range rows {
		labels := []string{"mean", "min", "max"}
		bands := summaryRows(r.rep)
		if perBand {
			for i, b := range r.rep.Bands {
				labels = append(labels, strconv.Itoa(i+1))
				bands = append(bands, b)
			}
		}
		for i, b := range bands {
			rec := []string{r.input, labels[i], csvFloat(b.Sigma)}
			if residual {
				for _, v := range residualValues(b) {
					rec = append(rec, csvFloat(v))
				}
			}
			rec = append(rec, csvFloat(b.A), csvFloat(b.B), r.rep.NoiseModel())
			_ = cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// norefJSONBand is one band's assessment, or (band omitted) its smallest
// or largest value over bands. The residual's fields are omitted without
// a noisy cube.
type norefJSONBand struct {
	Band        int              `json:"band,omitempty"`
	Sigma       scorejson.Float  `json:"sigma"`
	Removed     *scorejson.Float `json:"removed,omitempty"`
	Correlation *scorejson.Float `json:"correlation,omitempty"`
	LagX        *scorejson.Float `json:"lag_x,omitempty"`
	LagY        *scorejson.Float `json:"lag_y,omitempty"`
	ColumnShare *scorejson.Float `json:"column_share,omitempty"`
	RowShare    *scorejson.Float `json:"row_share,omitempty"`
	Flatness    *scorejson.Float `json:"flatness,omitempty"`
	Period      *scorejson.Float `json:"period,omitempty"`
	A           scorejson.Float  `json:"a"`
	B           scorejson.Float  `json:"b"`
}

// norefJSONResult is one input's assessment: the means over bands, their
// smallest and largest values, and every band.
type norefJSONResult struct {
	Input       string           `json:"input"`
	Sigma       scorejson.Float  `json:"sigma"`
	Removed     *scorejson.Float `json:"removed,omitempty"`
	Correlation *scorejson.Float `json:"correlation,omitempty"`
	LagX        *scorejson.Float `json:"lag_x,omitempty"`
	LagY        *scorejson.Float `json:"lag_y,omitempty"`
	ColumnShare *scorejson.Float `json:"column_share,omitempty"`
	RowShare    *scorejson.Float `json:"row_share,omitempty"`
	Flatness    *scorejson.Float `json:"flatness,omitempty"`
	Period      *scorejson.Float `json:"period,omitempty"`
	A           scorejson.Float  `json:"a"`
	B           scorejson.Float  `json:"b"`
	NoiseModel  string           `json:"noise_model"`
	NoiseZ      scorejson.Float  `json:"noise_z"`
	NoiseRatio  scorejson.Float  `json:"noise_ratio"`
	Min         norefJSONBand    `json:"min"`
	Max         norefJSONBand    `json:"max"`
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
	band := func(number int, b noref.Band) norefJSONBand {
		return norefJSONBand{Band: number, Sigma: scorejson.Float(b.Sigma), Removed: opt(b.Removed), Correlation: opt(b.Correlation),
			LagX: opt(b.LagX), LagY: opt(b.LagY), ColumnShare: opt(b.ColumnShare), RowShare: opt(b.RowShare),
			Flatness: opt(b.Flatness), Period: opt(b.Period),
			A: scorejson.Float(b.A), B: scorejson.Float(b.B)}
	}
	out := struct {
		Noisy   *string           `json:"noisy"`
		Results []norefJSONResult `json:"results"`
	}{}
	if residual {
		out.Noisy = &noisyPath
	}
	for _, r := range rows {
		m := band(0, r.rep.Mean)
		res := norefJSONResult{Input: r.input, Sigma: m.Sigma, Removed: m.Removed, Correlation: m.Correlation,
			LagX: m.LagX, LagY: m.LagY, ColumnShare: m.ColumnShare, RowShare: m.RowShare,
			Flatness: m.Flatness, Period: m.Period,
			A: m.A, B: m.B, NoiseModel: r.rep.NoiseModel(),
			NoiseZ: scorejson.Float(r.rep.NoiseLevel.Z), NoiseRatio: scorejson.Float(r.rep.NoiseLevel.Ratio),
			Min: band(0, r.rep.Min), Max: band(0, r.rep.Max)}
		for i, b := range r.rep.Bands {
			res.Bands = append(res.Bands, band(i+1, b))
		}
		out.Results = append(out.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
