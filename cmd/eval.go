package cmd

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"tdsc/internal/metrics"
	"tdsc/internal/metrics/gate"
	"tdsc/internal/metrics/scorejson"
	"tdsc/internal/noise"
)

func newEvalCmd() *cobra.Command {
	var (
		ref, baseline        string
		perBand, asCSV, asJS bool
		crit                 gate.Criteria
		cf                   cubeFlags
		noRef                bool
		noisyPath, estimator string
		mask                 string
	)
	c := &cobra.Command{
		Use:   "eval (--ref CLEAN | --noref [--noisy NOISY]) INPUT...",
		Short: "Score cubes against a clean reference: PSNR, SSIM, SAM, ERGAS",
		Long: `eval prints one row per input with the mean PSNR (dB, peak 255), SSIM (Wang et al.
2004, 11×11 Gaussian window σ 1.5), SAM (mean spectral angle, degrees) and ERGAS
(Wald: 100·sqrt(mean_b MSE_b / mean(ref_b)²)) against the reference, as an aligned
table, CSV (--csv) or JSON (--json). PSNR of an exact band is +Inf (null in JSON).
Voxels missing (no data) in the reference or an input, and those --mask marks,
are left out of every figure; every row says how much of the reference it
covered: the voxels scored of those with data in the reference ("covered" in the
table, voxels_scored and voxels_with_data in CSV and JSON).

As a regression gate (CI): --min-psnr and --min-ssim are floors for every input's
mean PSNR and SSIM, and --baseline names the JSON of an earlier eval --json run
whose PSNR no input may fall below by more than --max-drop dB (default 0). Every
eval checks coverage: an input that lacks a voxel the reference has (NaN, no
data) fails unless --allow-missing is given, and a band with data in the
reference and no voxel scored fails even then. The results are printed as usual;
then, if any input falls short, the failing inputs and why are written on stderr
and eval exits with status 3 (errors exit with 1).

Without a clean reference (real data), --noref prints the estimated noise σ of
every input (mean, smallest and largest over bands; --per-band for each band).
With --noisy NOISY the inputs are denoised versions of NOISY, and for each it
prints, for the removed part R = NOISY − INPUT, the mean over bands (the input's
row), the smallest and the largest value (rows "min/max over bands"; --per-band
adds every band; --csv prints the same rows, --json every band) of:
  σ of noisy             the estimated noise σ of NOISY;
  removed σ              the standard deviation of R: near σ when the noise was
                         removed, larger when image went too, smaller when noise
                         was left in;
  corr(removed, output)  the correlation of R with INPUT: ≈ 0 for removed noise,
                         positive when image (edges, texture) leaked into R;
  lag-1 x, lag-1 y       the correlation of R with itself one pixel to the right
                         and one pixel down: ≈ 0 (within ±2/√pixels) for white
                         noise; both positive when smooth image leaked into R;
                         lag-1 y alone high for vertical stripes;
  column share           the share of R's energy in its column means: about
                         1/height for white noise; high where stripes or dead
                         columns were removed (expected in bands that had them)
                         or where the denoiser put column structure into INPUT;
  row share              the same for row means (about 1/width for white noise;
                         high for line structure).
After the σ table (and in every CSV row and JSON result) comes the noise-level
function of every band of the noisy cube (NOISY, else each input): its noise
variance at a clean value x on the [0, 255] scale, σ²(x) = a·x + b, fitted to
the local variances of smooth windows against their local means (a > 0: the
noise grows with the signal, as a photon-counting sensor's does), and the noise
model it implies: gaussian, or signal-dependent when the slope is more than 5
standard errors above 0 pooled over bands (slope z) and the variance at a band's
bright end is at least 1.2 times that at its dark end (bright/dark, median over
bands). The table gives the mean a and b over bands; --per-band every band's.`,
		Example: "  tdsc eval --ref balloons_ms noisy30.hdr denoised30\n  tdsc eval --ref balloons_ms denoised30 --json\n" +
			"  tdsc eval --ref balloons_ms denoised30 --min-psnr 44 --baseline last.json --max-drop 0.05\n" +
			"  tdsc eval --noref --noisy scene.mat denoised.mat",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, inputs []string) error {
			cf.start(cmd) // SIGINT and SIGTERM stop reading and writing cubes; reads are said on stderr
			flags := cmd.Flags()
			if noRef {
				for _, g := range []string{"min-psnr", "min-ssim", "baseline", "max-drop", "mask", "allow-missing"} {
					if flags.Changed(g) {
						return fmt.Errorf("--%s needs a reference: it does not apply with --noref", g)
					}
				}
				if noisyPath != "" {
					cf.peak = evalNoisyPeak
				}
				return runNoRef(cmd.OutOrStdout(), inputs, noisyPath, estimator, &cf, perBand, asCSV, asJS)
			}
			if ref == "" {
				return fmt.Errorf("--ref (or --noref) is required")
			}
			for _, g := range []string{"noisy", "sigma-estimator"} {
				if flags.Changed(g) {
					return fmt.Errorf("--%s applies only with --noref", g)
				}
			}
			if !flags.Changed("min-psnr") {
				crit.MinPSNR = gate.NoFloor
			}
			if !flags.Changed("min-ssim") {
				crit.MinSSIM = gate.NoFloor
			}
			if flags.Changed("max-drop") && baseline == "" {
				return fmt.Errorf("--max-drop needs --baseline")
			}
			if err := crit.Validate(); err != nil {
				return err
			}
			if baseline != "" {
				b, err := gate.ReadBaseline(baseline)
				if err != nil {
					return err
				}
				crit.Baseline = b
			}
			clean, err := cf.open(ref)
			if err != nil {
				return flagError(err)
			}
			if err := cf.applyMask(clean, mask); err != nil {
				return flagError(err)
			}
			rows := make([]evalRow, len(inputs))
			for i, in := range inputs {
				x, err := cf.openLike(in, clean, ref)
				if err != nil {
					return err
				}
				rep, err := metrics.Evaluate(cmd.Context(), clean, x)
				if err != nil {
					return fmt.Errorf("%s against %s: %w", in, ref, err)
				}
				rows[i] = evalRow{input: in, rep: rep, wavelengths: x.Wavelengths}
			}
			var failures []string
			missing := false
			for _, r := range rows {
				missing = missing || r.rep.Missing() > 0 && !crit.AllowMissing
				why, err := crit.Check(r.input, gateScores(r.rep))
				if err != nil {
					return fmt.Errorf("--baseline %s: %w", baseline, err)
				}
				for _, w := range why {
					failures = append(failures, r.input+": "+w)
				}
			}
			w := cmd.OutOrStdout()
			switch {
			case asJS:
				err = writeEvalJSON(w, ref, rows)
			case asCSV:
				err = writeEvalCSV(w, rows, perBand)
			default:
				err = writeEvalTable(w, rows, perBand)
			}
			if err == nil && len(failures) > 0 {
				err = &gateFailure{failures: failures, missing: missing}
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVarP(&ref, "ref", "r", "", pathHelp("clean reference cube")+" (every cube is brought to the [0, 255] scale by the one rule of units, or by --scale)")
	f.BoolVar(&perBand, "per-band", false, "add a row for every band (table and CSV): PSNR/SSIM, or with --noref the σ and residual statistics")
	f.BoolVar(&asCSV, "csv", false, "print CSV")
	f.BoolVar(&asJS, "json", false, "print JSON (always with per-band values)")
	f.Float64Var(&crit.MinPSNR, "min-psnr", 0, "gate: fail (exit 3) if an input's mean PSNR is below this many dB")
	f.Float64Var(&crit.MinSSIM, "min-ssim", 0, "gate: fail (exit 3) if an input's mean SSIM is below this")
	f.StringVar(&baseline, "baseline", "", "gate: JSON of an earlier eval --json to compare each input's PSNR with")
	f.Float64Var(&crit.MaxDrop, "max-drop", 0, "gate: largest PSNR drop in dB below --baseline that still passes")
	f.BoolVar(&crit.AllowMissing, "allow-missing", false, "gate: let an input lack voxels the reference has (scored on the voxels it has; every band must keep one)")
	f.BoolVar(&noRef, "noref", false, "no clean reference: the estimated noise σ of every input, band by band (real data)")
	f.StringVar(&noisyPath, "noisy", "", "with --noref: the noisy cube the inputs were denoised from; report what each removed: its σ, its correlation with the output, its lag-1 autocorrelations and its energy shares in column and row means (see above)")
	f.StringVar(&estimator, "sigma-estimator", noise.MAD, "with --noref: mad, regression (HySime) or min")
	fixedValues(c, "sigma-estimator", noise.Estimators)
	f.StringVar(&mask, "mask", "", "a cube of the reference's height and width, one band (every band) or its bands, whose nonzero voxels are left out of the scores, as missing voxels of the reference or an input are")
	cf.register(c, false)
	cf.registerMemory(f, evalPeak)
	excludeEachOther(c, "csv", "json")
	excludeEachOther(c, "ref", "noref")
	return c
}

// gateFailure is the outcome of an eval whose inputs fall short of the
// gate: the failing inputs and why, one line each. It exits with status 3,
// apart from errors (1), so that CI can tell a regression from a broken run.
type gateFailure struct {
	failures []string
	// missing says that an input failed for lacking voxels, which
	// --allow-missing would let pass: the message says so.
	missing bool
}

func (e *gateFailure) Error() string {
	msg := "gate failed:\n  " + strings.Join(e.failures, "\n  ")
	if e.missing {
		msg += "\n(--allow-missing scores an input on the voxels it has)"
	}
	return msg
}

// gateScores returns what the gate checks of a report: the mean scores
// and the coverage.
func gateScores(r *metrics.Report) gate.Scores {
	s := gate.Scores{PSNR: r.PSNR, SSIM: r.SSIM, Scored: r.Scored, WithData: r.WithData}
	for _, b := range r.Unscored() {
		s.Unscored = append(s.Unscored, b+1)
	}
	return s
}

type evalRow struct {
	input       string
	rep         *metrics.Report
	wavelengths []float64
}

func writeEvalTable(w io.Writer, rows []evalRow, perBand bool) error {
	width := len("input")
	for _, r := range rows {
		width = max(width, len([]rune(r.input)))
		if perBand {
			for b := range r.rep.BandPSNR {
				width = max(width, len([]rune(bandLabel(b, r.wavelengths))))
			}
		}
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len([]rune(s))) }
	fmt.Fprintf(w, "%s  %9s  %7s  %8s  %8s  %8s\n", pad("input"), "PSNR dB", "SSIM", "SAM °", "ERGAS", "covered")
	for _, r := range rows {
		fmt.Fprintf(w, "%s  %9.4f  %7.4f  %8.4f  %8.4f  %8s\n", pad(r.input), r.rep.PSNR, r.rep.SSIM, r.rep.SAM, r.rep.ERGAS, covered(r.rep.Scored, r.rep.WithData))
		if !perBand {
			continue
		}
		for b := range r.rep.BandPSNR {
			fmt.Fprintf(w, "%s  %9.4f  %7.4f  %8s  %8s  %8s\n", pad(bandLabel(b, r.wavelengths)), r.rep.BandPSNR[b], r.rep.BandSSIM[b],
				"", "", covered(r.rep.BandScored[b], r.rep.BandWithData[b]))
		}
	}
	return nil
}

// covered writes the share of the reference's voxels with data that were
// scored, "—" when the reference has none.
func covered(scored, withData int) string {
	if withData == 0 {
		return "—"
	}
	return gate.Percent(scored, withData)
}

// bandLabel names band b (0-based) for the per-band rows: its 1-based number
// and, when known, its wavelength.
func bandLabel(b int, wavelengths []float64) string {
	if b < len(wavelengths) {
		return fmt.Sprintf("band %d (%g nm)", b+1, wavelengths[b])
	}
	return fmt.Sprintf("band %d", b+1)
}

func writeEvalCSV(w io.Writer, rows []evalRow, perBand bool) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"input", "band", "psnr", "ssim", "sam", "ergas", "voxels_scored", "voxels_with_data"})
	for _, r := range rows {
		_ = cw.Write([]string{r.input, "mean", csvFloat(r.rep.PSNR), csvFloat(r.rep.SSIM), csvFloat(r.rep.SAM), csvFloat(r.rep.ERGAS),
			strconv.Itoa(r.rep.Scored), strconv.Itoa(r.rep.WithData)})
		if !perBand {
			continue
		}
		for b := range r.rep.BandPSNR {
			_ = cw.Write([]string{r.input, strconv.Itoa(b + 1), csvFloat(r.rep.BandPSNR[b]), csvFloat(r.rep.BandSSIM[b]), "", "",
				strconv.Itoa(r.rep.BandScored[b]), strconv.Itoa(r.rep.BandWithData[b])})
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// writeEvalJSON writes the scores of rows against the reference ref as the
// JSON report of package scorejson, which the gate reads back.
func writeEvalJSON(w io.Writer, ref string, rows []evalRow) error {
	out := scorejson.Report{Ref: ref, Results: make([]scorejson.Result, len(rows))}
	for i, r := range rows {
		res := scorejson.Result{Input: r.input, PSNR: scorejson.Float(r.rep.PSNR), SSIM: scorejson.Float(r.rep.SSIM),
			SAM: scorejson.Float(r.rep.SAM), ERGAS: scorejson.Float(r.rep.ERGAS),
			Coverage: scorejson.Coverage{Scored: r.rep.Scored, WithData: r.rep.WithData}, Bands: make([]scorejson.Band, len(r.rep.BandPSNR))}
		for b := range r.rep.BandPSNR {
			res.Bands[b] = scorejson.Band{Band: b + 1, PSNR: scorejson.Float(r.rep.BandPSNR[b]), SSIM: scorejson.Float(r.rep.BandSSIM[b]),
				Coverage: scorejson.Coverage{Scored: r.rep.BandScored[b], WithData: r.rep.BandWithData[b]}}
		}
		out.Results[i] = res
	}
	return scorejson.Write(w, &out)
}

// evalPeak is the peak memory of tdsc eval, in bytes a voxel of a cube it
// reads: with --ref the reference and one input at a time as float64 (16)
// and the files' bytes as read, as with --noref the input and its
// statistics; evalNoisyPeak is --noref --noisy's, which holds the noisy
// cube, the input and what was removed. Measured by scripts/memory.sh on
// a 512×512×31 cube (docs/results.md): 24.3, 24.5 and 40.4, rounded up.
const (
	evalPeak      = 25
	evalNoisyPeak = 41
)
