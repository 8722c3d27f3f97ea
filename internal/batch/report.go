package batch

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"tdsc/internal/metrics/scorejson"
)

// Table is the results under an output root merged into one table: a row
// per (scene, σ, seed), a column per method label, and a mean row per σ.
type Table struct {
	// Methods are the labels, in the order of the plans that made them.
	Methods []string
	// Rows are sorted by σ, scene name, seed.
	Rows []Row
	// Means has one row per σ, in increasing order.
	Means []Mean
	// Missing counts the cells (row × method) with no result.
	Missing int
	// Unreadable are the errors of the result files that could not be
	// read (each names its file): their cells are left out, as results
	// not there yet, so that one corrupt file does not hide the others.
	Unreadable []error
}

// Row is the results of one noisy cube, by method label.
type Row struct {
	Scene   string
	Sigma   float64
	Seed    uint64
	Results map[string]*Result
}

// Mean is the mean scores of every method over the rows of one σ. A
// method that lacks a result in one of those rows has no mean: a mean over
// other scenes than its neighbours' would not compare with them.
type Mean struct {
	Sigma  float64
	Rows   int
	Scores map[string]Scores
}

// Scores are the four figures of a result or a mean.
type Scores struct {
	PSNR  scorejson.Float `json:"psnr"`
	SSIM  scorejson.Float `json:"ssim"`
	SAM   scorejson.Float `json:"sam"`
	ERGAS scorejson.Float `json:"ergas"`
}

// Collect reads every result under root (ROOT/SCENE/sigmaS-seedN/*.json)
// into a Table. A root that is missing or holds no results is an error; a
// result file that cannot be read is left out and listed in Unreadable.
func Collect(root string) (*Table, error) {
	fi, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such folder", root)
		}
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a folder (want the output root of tdsc batch)", root)
	}
	paths, err := filepath.Glob(filepath.Join(root, "*", "sigma*-seed*", "*.json"))
	if err != nil {
		return nil, err
	}
	type key struct {
		scene string
		sigma float64
		seed  uint64
	}
	rows := map[key]*Row{}
	order := map[string]int{}
	var unreadable []error
	for _, p := range paths {
		if strings.HasPrefix(filepath.Base(p), ".") {
			continue // a file being written
		}
		r, err := ReadResult(p)
		if err != nil {
			unreadable = append(unreadable, err)
			continue
		}
		k := key{r.Scene, r.Sigma, r.Seed}
		row := rows[k]
		if row == nil {
			row = &Row{Scene: r.Scene, Sigma: r.Sigma, Seed: r.Seed, Results: map[string]*Result{}}
			rows[k] = row
		}
		if old, ok := row.Results[r.Label]; ok {
			return nil, fmt.Errorf("%s and %s: two results of %s for the same cube", old.Cell, r.Cell, r.Label)
		}
		row.Results[r.Label] = r
		if i, ok := order[r.Label]; !ok || r.MethodIndex < i {
			order[r.Label] = r.MethodIndex
		}
	}
	if len(rows) == 0 && len(unreadable) > 0 {
		return nil, errors.Join(unreadable...)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no results of tdsc batch (SCENE/sigmaS-seedN/LABEL.json)", root)
	}
	t := &Table{Unreadable: unreadable}
	for label := range order {
		t.Methods = append(t.Methods, label)
	}
	slices.SortFunc(t.Methods, func(a, b string) int {
		return cmp.Or(cmp.Compare(order[a], order[b]), strings.Compare(a, b))
	})
	for _, row := range rows {
		t.Rows = append(t.Rows, *row)
	}
	slices.SortFunc(t.Rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Sigma, b.Sigma), strings.Compare(a.Scene, b.Scene), cmp.Compare(a.Seed, b.Seed))
	})
	for i := 0; i < len(t.Rows); {
		j := i
		for j < len(t.Rows) && t.Rows[j].Sigma == t.Rows[i].Sigma {
			j++
		}
		t.Means = append(t.Means, meanOf(t.Rows[i:j], t.Methods))
		for _, row := range t.Rows[i:j] {
			for _, m := range t.Methods {
				if row.Results[m] == nil {
					t.Missing++
				}
			}
		}
		i = j
	}
	return t, nil
}

// meanOf averages the scores of every method present in all rows.
func meanOf(rows []Row, methods []string) Mean {
	mean := Mean{Sigma: rows[0].Sigma, Rows: len(rows), Scores: map[string]Scores{}}
	for _, m := range methods {
		var s [4]float64
		complete := true
		for _, row := range rows {
			r := row.Results[m]
			if r == nil {
				complete = false
				break
			}
			s[0] += float64(r.PSNR)
			s[1] += float64(r.SSIM)
			s[2] += float64(r.SAM)
			s[3] += float64(r.ERGAS)
		}
		if complete {
			n := float64(len(rows))
			mean.Scores[m] = Scores{scorejson.Float(s[0] / n), scorejson.Float(s[1] / n), scorejson.Float(s[2] / n), scorejson.Float(s[3] / n)}
		}
	}
	return mean
}

func scoresOf(r *Result) Scores { return Scores{r.PSNR, r.SSIM, r.SAM, r.ERGAS} }

// WriteMarkdown writes t as a Markdown table of PSNR (dB) and SSIM, a mean
// row after the rows of each σ; "—" marks a missing result or mean.
func (t *Table) WriteMarkdown(w io.Writer) error {
	head := []string{"scene", "σ", "seed"}
	align := []string{":--", "--:", "--:"}
	for _, m := range t.Methods {
		label := strings.ReplaceAll(m, "|", `\|`)
		head = append(head, label+" PSNR", label+" SSIM")
		align = append(align, "--:", "--:")
	}
	var b strings.Builder
	line := func(cells []string) { b.WriteString("| " + strings.Join(cells, " | ") + " |\n") }
	line(head)
	line(align)
	figures := func(s *Scores) []string {
		if s == nil {
			return []string{"—", "—"}
		}
		return []string{fixed(float64(s.PSNR), 2), fixed(float64(s.SSIM), 4)}
	}
	mean := 0
	for i, row := range t.Rows {
		cells := []string{row.Scene, formatSigma(row.Sigma), strconv.FormatUint(row.Seed, 10)}
		for _, m := range t.Methods {
			var s *Scores
			if r := row.Results[m]; r != nil {
				sc := scoresOf(r)
				s = &sc
			}
			cells = append(cells, figures(s)...)
		}
		line(cells)
		if i+1 == len(t.Rows) || t.Rows[i+1].Sigma != row.Sigma {
			mn := t.Means[mean]
			mean++
			cells := []string{"**mean**", formatSigma(mn.Sigma), ""}
			for _, m := range t.Methods {
				var s *Scores
				if sc, ok := mn.Scores[m]; ok {
					s = &sc
				}
				cells = append(cells, figures(s)...)
			}
			line(cells)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fixed formats v with prec decimals, "inf" for the PSNR of an exact cube.
func fixed(v float64, prec int) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// WriteCSV writes t as CSV: scene, sigma, seed, then the PSNR, SSIM, SAM
// and ERGAS of every method at full precision; a mean row (scene "mean",
// no seed) after the rows of each σ. Missing values are empty.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"scene", "sigma", "seed"}
	for _, m := range t.Methods {
		head = append(head, m+" psnr", m+" ssim", m+" sam", m+" ergas")
	}
	_ = cw.Write(head)
	figures := func(s *Scores) []string {
		if s == nil {
			return []string{"", "", "", ""}
		}
		return []string{full(s.PSNR), full(s.SSIM), full(s.SAM), full(s.ERGAS)}
	}
	mean := 0
	for i, row := range t.Rows {
		rec := []string{row.Scene, formatSigma(row.Sigma), strconv.FormatUint(row.Seed, 10)}
		for _, m := range t.Methods {
			var s *Scores
			if r := row.Results[m]; r != nil {
				sc := scoresOf(r)
				s = &sc
			}
			rec = append(rec, figures(s)...)
		}
		_ = cw.Write(rec)
		if i+1 == len(t.Rows) || t.Rows[i+1].Sigma != row.Sigma {
			mn := t.Means[mean]
			mean++
			rec := []string{"mean", formatSigma(mn.Sigma), ""}
			for _, m := range t.Methods {
				var s *Scores
				if sc, ok := mn.Scores[m]; ok {
					s = &sc
				}
				rec = append(rec, figures(s)...)
			}
			_ = cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

func full(f scorejson.Float) string {
	v := float64(f)
	if math.IsInf(v, 1) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

type jsonTable struct {
	Methods []string   `json:"methods"`
	Rows    []jsonRow  `json:"rows"`
	Means   []jsonMean `json:"means"`
	Missing int        `json:"missing"`
}

type jsonRow struct {
	Scene   string                `json:"scene"`
	Sigma   float64               `json:"sigma"`
	Seed    uint64                `json:"seed"`
	Results map[string]jsonResult `json:"results"`
}

type jsonResult struct {
	Scores
	WallSeconds  float64 `json:"wall_seconds"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
}

type jsonMean struct {
	Sigma   float64           `json:"sigma"`
	Rows    int               `json:"rows"`
	Results map[string]Scores `json:"results"`
}

// WriteJSON writes t as JSON: {"methods", "rows": [{"scene", "sigma",
// "seed", "results": {LABEL: {"psnr", "ssim", "sam", "ergas",
// "wall_seconds", "peak_rss_bytes"}}}], "means": [{"sigma", "rows",
// "results": {LABEL: {"psnr", …}}}], "missing"}. A missing result or mean
// is absent.
func (t *Table) WriteJSON(w io.Writer) error {
	out := jsonTable{Methods: t.Methods, Missing: t.Missing}
	for _, row := range t.Rows {
		jr := jsonRow{Scene: row.Scene, Sigma: row.Sigma, Seed: row.Seed, Results: map[string]jsonResult{}}
		for label, r := range row.Results {
			jr.Results[label] = jsonResult{Scores: scoresOf(r), WallSeconds: r.WallSeconds, PeakRSSBytes: r.PeakRSSBytes}
		}
		out.Rows = append(out.Rows, jr)
	}
	for _, m := range t.Means {
		out.Means = append(out.Means, jsonMean{Sigma: m.Sigma, Rows: m.Rows, Results: m.Scores})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
