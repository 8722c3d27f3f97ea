package cmd

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"tdsc/internal/denoise"
	"tdsc/internal/dictfile"
	"tdsc/internal/formats"
	"tdsc/internal/methods/nonlocal"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/quality/metrics"
	"tdsc/internal/report"
	"tdsc/internal/stages/bandwhiten"
)

// commonFlags are the denoise flags that every method reads.
var commonFlags = map[string]bool{
	"input": true, "out": true, "ref": true, "force": true, "method": true,
	"sigma": true, "threads": true, "quiet": true, "help": true, "tile": true, "max-memory": true,
	"axes": true, "scale": true, "dtype": true, "sigma-per-band": true, "sigma-estimator": true,
}

// methodFlags are the denoise flags that build a method (denoise.Config):
// the 2DSC settings most methods share, the nonlocal ones, lrta's ranks and
// a 2dsc dictionary file.
type methodFlags struct {
	sf    solverFlags
	nl    nonlocal.Options
	ranks string
	dict  string
}

// method builds the method spec with the settings the flags f give (f is
// the flag set m's fields are bound to). Errors name the flag.
func (m *methodFlags) method(spec denoise.Spec, f *pflag.FlagSet, log report.Reporter) (denoise.Method, error) {
	twoOpts, err := m.sf.options(f)
	if err != nil {
		return nil, flagError(err)
	}
	cfg := denoise.Config{Sigma: m.sf.sigma, Threads: m.sf.o.Threads, Report: log, CreatedBy: "tdsc " + version}
	cfg.TwoDSC, cfg.Nonlocal = twoOpts, m.nl
	if cfg.TuckerRanks, err = parseRanks(m.ranks); err != nil {
		return nil, err
	}
	if m.dict != "" {
		if cfg.Dict, err = dictfile.Read(m.dict); err != nil {
			return nil, err
		}
	}
	method, err := spec.New(cfg)
	if err != nil {
		if m.dict != "" {
			return nil, fmt.Errorf("%s: %w", m.dict, flagError(err))
		}
		return nil, flagError(err)
	}
	return method, nil
}

func newDenoiseCmd() *cobra.Command { return newDenoiseCmdWith(new(methodFlags)) }

// newDenoiseCmdWith is the denoise command with its method flags bound to
// mf, so that a batch can parse a method's flags and build it as denoise
// does.
func newDenoiseCmdWith(mf *methodFlags) *cobra.Command {
	var (
		input, out, save, ref string
		method                string
		cf                    cubeFlags
		perBand               bool
		tf                    tileFlags
		estimator             string
		force                 bool
	)
	sf, nl := &mf.sf, &mf.nl
	c := &cobra.Command{
		Use:   "denoise --input NOISY --out OUT",
		Short: "Denoise a cube (methods: " + strings.Join(denoise.Names(), ", ") + ")",
		Long: `denoise estimates the clean cube from a noisy one with the method --method:

` + methodList() + `
2dsc codes every overlapping p×p×q patch of the input over a 2DSC dictionary and
averages the reconstructions. Without --dict it first learns the dictionary from the
input itself (the paper's protocol), and --save-dict keeps it. β: --beta, else 3σ;
with --dict and neither --beta nor --sigma, the β and σ the dictionary was learned
with. A flag that the chosen method does not read is an error.

σ: --sigma, else estimated from the input (and said on stderr). --out is a PNG stack
folder (16-bit, clipped to [0, 255]), an ENVI .hdr (float32, lossless; the header
records the method and its settings), a .npy or a .mat. With --ref it also prints
the eval table of the input and the result on stdout.

A cube in a format read in strips (` + strings.Join(formats.WindowLabels(), ", ") + `) whose run would not fit in
--max-memory (or any, with --tile) is read, denoised and written in strips of
lines with a halo; for 2dsc and sc the result is the whole cube's, bit for bit.`,
		Example: "  tdsc denoise --input noisy30.hdr --sigma 30 --out denoised30.hdr --ref balloons_ms",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if input == "" || out == "" {
				return fmt.Errorf("--input and --out are required")
			}
			spec, err := denoise.Lookup(method)
			if err != nil {
				return flagError(err)
			}
			var stray []string
			cmd.Flags().Visit(func(f *pflag.Flag) {
				if !commonFlags[f.Name] && !spec.Applies(f.Name) {
					stray = append(stray, "--"+f.Name)
				}
			})
			if len(stray) > 0 {
				return fmt.Errorf("%s do(es) not apply to --method %s", strings.Join(stray, ", "), spec.Name)
			}
			if cmd.Flags().Changed("sigma-estimator") && !perBand {
				return fmt.Errorf("--sigma-estimator applies only with --sigma-per-band")
			}
			if !force {
				if err := formats.RefuseExisting(out); err != nil {
					return err
				}
			}
			if err := refuseExisting(force, save); err != nil {
				return err
			}
			log := newReporter(cmd)
			m, err := mf.method(spec, cmd.Flags(), log)
			if err != nil {
				return err
			}
			if tiled, budget, err := tf.decide(input, out, &cf, spec, ref != "", perBand, log); err != nil {
				return flagError(err)
			} else if tiled {
				r := stripRun{input: input, out: out, save: save, force: force, sigma: sf.sigma, cf: &cf,
					lines: tf.lines, budget: budget, spec: spec, method: m, log: log}
				return flagError(r.run(cmd.Context()))
			}
			noisy, err := cf.open(input, log)
			if err != nil {
				return flagError(err)
			}
			var clean *msi.Cube
			if ref != "" {
				if clean, err = cf.openLike(ref, noisy.Stored); err != nil {
					return err
				}
				if !clean.SameSize(noisy) {
					return fmt.Errorf("reference %s is %s but the input %s is %s", ref, clean.Size(), input, noisy.Size())
				}
			}
			var sigmas []float64 // per band, with --sigma-per-band
			var sigma float64
			if perBand {
				if sigmas, err = noise.EstimateBands(noisy, estimator); err != nil {
					return flagError(err)
				}
				log.Logf("estimated σ per band (%s): %s", estimator, formatSigmas(sigmas))
				sigma = bandwhiten.Reference(sigmas, bandwhiten.ReferenceMedian)
			} else if sigma, err = denoise.ResolveSigma(noisy, sf.sigma, m, log); err != nil {
				return flagError(err)
			}
			start := time.Now()
			var result *msi.Cube
			if perBand {
				result, err = bandwhiten.Denoise(cmd.Context(), m.Denoise, noisy, sigmas, bandwhiten.Options{})
			} else {
				result, err = m.Denoise(cmd.Context(), noisy, sigma)
			}
			if err != nil {
				return flagError(err)
			}
			// The small dictionary goes first, so that a failure to write
			// either output leaves neither behind.
			var learned *dictfile.Model
			if l, ok := m.(interface{ Learned() *dictfile.Model }); ok && save != "" {
				learned = l.Learned()
			}
			if learned != nil {
				if err := learned.WriteFile(save, force); err != nil {
					return err
				}
			}
			result.Metadata = noisy.Metadata // the scene's, unchanged
			result.Processing = describe(m, sigma)
			if perBand {
				result.Processing += " (bands whitened to σ = " + fmt.Sprintf("%.4g", sigma) + " by their " + estimator + " estimates)"
			}
			if _, err := writeCube(out, result, cf.writeOptions(noisy.Stored, force), log); err != nil {
				if learned != nil {
					os.Remove(save)
				}
				return err
			}
			log.Logf("wrote %s (%.1f s in all)", out, time.Since(start).Seconds())
			if clean == nil {
				return nil
			}
			rows := make([]evalRow, 0, 2)
			for _, r := range []struct {
				name string
				cube *msi.Cube
			}{{input, noisy}, {out, result}} {
				rep, err := metrics.Evaluate(cmd.Context(), clean, r.cube)
				if err != nil {
					return err
				}
				rows = append(rows, evalRow{input: r.name, rep: rep, wavelengths: r.cube.Wavelengths})
			}
			return writeEvalTable(cmd.OutOrStdout(), rows, false)
		},
	}
	f := c.Flags()
	f.StringVarP(&input, "input", "i", "", pathHelp("noisy cube"))
	f.StringVarP(&out, "out", "o", "", pathHelp("denoised cube"))
	f.StringVarP(&method, "method", "m", denoise.Default, "denoising method: "+strings.Join(denoise.Names(), ", "))
	f.StringVar(&mf.dict, "dict", "", "2dsc: use this dictionary instead of learning one from the input")
	f.StringVar(&save, "save-dict", "", "2dsc: save the dictionary learned from the input to this file")
	f.StringVarP(&ref, "ref", "r", "", "clean reference: also print PSNR/SSIM/SAM/ERGAS of the input and the result")
	f.BoolVar(&force, "force", false, "overwrite existing outputs")
	sf.register(f, false)
	cf.register(f, true)
	f.IntVar(&nl.Wiener, "wiener", 0, "nonlocal: collaborative Wiener passes, -1 for none (default 2)")
	f.IntVar(&nl.Rounds, "rounds", 0, "nonlocal: low-rank rounds (default 2)")
	f.IntVar(&nl.Rank, "rank", 0, "nonlocal: dimension of the spectral subspace (default: from the data, at least 10 for σ ≤ 15, else 6); parafac: the CP rank (default: the smallest whose residual reaches the noise)")
	f.StringVar(&mf.ranks, "ranks", "", "lrta: the row, column and band subspace dimensions R1,R2,R3, 0 for one chosen by AIC (default: all by AIC)")
	f.IntVar(&nl.Group, "group", 0, "nonlocal: patches per low-rank group (default 256)")
	f.BoolVar(&perBand, "sigma-per-band", false, "estimate σ band by band, whiten the bands to their median σ, denoise, restore the bands' scale (for noise that differs between bands)")
	f.StringVar(&estimator, "sigma-estimator", noise.MAD, "with --sigma-per-band: mad (wavelet MAD per band), regression (HySime: each band regressed on the others) or min (the smaller)")
	f.IntVar(&tf.lines, "tile", 0, "denoise a cube ("+strings.Join(formats.WindowLabels(), ", ")+") in strips of this many lines (rounded down to the method's alignment, plus a halo), reading and writing it strip by strip; 0: only when the whole cube would exceed --max-memory")
	f.StringVar(&tf.maxMemory, "max-memory", "", "memory budget (e.g. 2G, 1536M): a larger cube ("+strings.Join(formats.WindowLabels(), ", ")+") is denoised in strips that fit it (default: half of the machine's RAM)")
	c.MarkFlagsMutuallyExclusive("dict", "save-dict")
	c.MarkFlagsMutuallyExclusive("sigma", "sigma-per-band")
	return c
}

// methodList is one line per method for the help text.
func methodList() string {
	var b strings.Builder
	for _, n := range denoise.Names() {
		s, _ := denoise.Lookup(n)
		fmt.Fprintf(&b, "  %-9s %s\n", n, s.Summary)
	}
	return b.String()
}

// describe is the output's metadata line: the method and its settings.
func describe(m denoise.Method, sigma float64) string {
	parts := []string{"tdsc " + version + " denoise --method " + m.Name()}
	for _, s := range m.Settings(sigma) {
		parts = append(parts, s.Name+"="+s.Value)
	}
	return strings.Join(parts, " ")
}

// parseRanks reads --ranks "R1,R2,R3" (whole numbers ≥ 0); "" is all zero.
func parseRanks(s string) ([3]int, error) {
	var r [3]int
	if s == "" {
		return r, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return r, fmt.Errorf("--ranks must be three whole numbers R1,R2,R3 (0: chosen from the data), got %q", s)
	}
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return r, fmt.Errorf("--ranks must be three whole numbers R1,R2,R3 (0: chosen from the data), got %q", s)
		}
		r[i] = n
	}
	return r, nil
}
