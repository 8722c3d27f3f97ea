package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/methods"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/quality/metrics"
	"tdsc/internal/report"
	"tdsc/internal/stages/bandwhiten"
)

// denoiseFlags are the flags of tdsc denoise. The settings of the methods
// are generated from the registry (package methods): every setting that
// some method declares is a flag.
type denoiseFlags struct {
	input, out, ref, method string
	sigma                   float64
	threads                 int
	settings                settingFlags
	cf                      cubeFlags
	tf                      tileFlags
	perBand                 bool
	estimator               string
	force                   bool
}

func newDenoiseCmd() *cobra.Command { return newDenoiseCmdWith(new(denoiseFlags)) }

// newDenoiseCmdWith is the denoise command with its flags bound to df, so
// that a batch can parse a method's flags and build it as denoise does.
func newDenoiseCmdWith(df *denoiseFlags) *cobra.Command {
	c := &cobra.Command{
		Use:     "denoise --input NOISY --out OUT",
		Short:   "Denoise a cube (methods: " + strings.Join(methods.Names(), ", ") + ")",
		Long:    denoiseHelp(),
		Example: "  tdsc denoise --input noisy30.hdr --sigma 30 --out denoised30.hdr --ref balloons_ms",
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return df.run(cmd) },
	}
	f := c.Flags()
	f.StringVarP(&df.input, "input", "i", "", pathHelp("noisy cube"))
	f.StringVarP(&df.out, "out", "o", "", pathHelp("denoised cube"))
	f.StringVarP(&df.method, "method", "m", methods.Default().Name, "denoising method: "+strings.Join(methods.Names(), ", "))
	f.StringVarP(&df.ref, "ref", "r", "", "clean reference: also print PSNR/SSIM/SAM/ERGAS of the input and the result")
	f.BoolVar(&df.force, "force", false, "overwrite existing outputs")
	f.Float64Var(&df.sigma, "sigma", 0, "noise standard deviation on the [0, 255] scale (estimated from the input when not given)")
	f.IntVar(&df.threads, "threads", 0, "worker goroutines (default: all cores); the output does not depend on it")
	df.settings = registerSettings(c, declarations(methods.All()))
	df.cf.register(f, true)
	f.BoolVar(&df.perBand, "sigma-per-band", false, "estimate σ band by band, whiten the bands to their median σ, denoise, restore the bands' scale (for noise that differs between bands)")
	f.StringVar(&df.estimator, "sigma-estimator", noise.MAD, "with --sigma-per-band: mad (wavelet MAD per band), regression (HySime: each band regressed on the others) or min (the smaller)")
	f.IntVar(&df.tf.lines, "tile", 0, "denoise a cube ("+strings.Join(formats.WindowLabels(), ", ")+") in strips of this many lines (rounded down to the method's alignment, plus a halo), reading and writing it strip by strip; 0: only when the whole cube would exceed --max-memory")
	f.StringVar(&df.tf.maxMemory, "max-memory", "", "memory budget (e.g. 2G, 1536M): a larger cube ("+strings.Join(formats.WindowLabels(), ", ")+") is denoised in strips that fit it (default: half of the machine's RAM)")
	c.MarkFlagsMutuallyExclusive(denoise.Dict.Name, denoise.SaveDict.Name)
	c.MarkFlagsMutuallyExclusive("sigma", "sigma-per-band")
	_ = c.RegisterFlagCompletionFunc("method", completeMethods)
	_ = c.RegisterFlagCompletionFunc("sigma-estimator", cobra.FixedCompletions(
		[]string{noise.MAD, noise.Regression, noise.Smaller}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// completeMethods offers the names of the methods, with their summaries,
// for shell completion.
func completeMethods(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	var names []string
	for _, s := range methods.All() {
		names = append(names, s.Name+"\t"+s.Summary)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// denoiseHelp is the long help of denoise, from the registry.
func denoiseHelp() string {
	var list strings.Builder
	for _, s := range methods.All() {
		fmt.Fprintf(&list, "  %-9s %s\n", s.Name, s.Summary)
	}
	which := func(has func(denoise.Spec) bool) string {
		var names []string
		for _, s := range methods.All() {
			if has(s) {
				names = append(names, s.Name)
			}
		}
		return andList(names)
	}
	return `denoise estimates the clean cube from a noisy one with the method --method:

` + list.String() + `
` + wrap(`A setting's flag names the methods that read it and their defaults; a flag that
the chosen method does not read is an error. A method that learns a dictionary
from the input (`+which(func(s denoise.Spec) bool { return s.SavesDictionary })+`) keeps it with --save-dict; one that can take a
dictionary (`+which(func(s denoise.Spec) bool { return s.TakesDictionary })+`) codes with --dict instead of learning one, and with
neither --beta nor --sigma uses the β and σ the dictionary was learned with.`) + `

σ: --sigma, else estimated from the input (and said on stderr). --out is a PNG stack
folder (16-bit, clipped to [0, 255]), an ENVI .hdr (float32, lossless; the header
records the method and its settings), a .npy or a .mat. With --ref it also prints
the eval table of the input and the result on stdout.

` + wrap(`A cube in a format read in strips (`+strings.Join(formats.WindowLabels(), ", ")+`) whose run would not fit in --max-memory (or any, with --tile) is
read, denoised and written in strips of lines with a halo; for `+which(func(s denoise.Spec) bool { return s.ExactStrips })+` the
result is the whole cube's, bit for bit.`)
}

// build returns the method the flags of f name, with the settings they
// give, and the noise level a given dictionary records (Spec.Build).
// Errors name the flag.
func (d *denoiseFlags) build(f *pflag.FlagSet, log report.Reporter) (denoise.Spec, denoise.Method, float64, error) {
	spec, err := methods.Lookup(d.method)
	if err != nil {
		return spec, nil, 0, flagError(err)
	}
	v, err := spec.Parse(d.settings.given(f))
	if err != nil {
		return spec, nil, 0, flagError(err)
	}
	if f.Changed("sigma") {
		if err := denoise.CheckSigma(d.sigma); err != nil {
			return spec, nil, 0, flagError(err)
		}
	}
	m, known, err := spec.Build(v, f.Changed("sigma"), denoise.Env{Threads: d.threads, Report: log, CreatedBy: "tdsc " + version})
	return spec, m, known, flagError(err)
}

func (d *denoiseFlags) run(cmd *cobra.Command) error {
	f := cmd.Flags()
	if d.input == "" || d.out == "" {
		return fmt.Errorf("--input and --out are required")
	}
	if f.Changed("sigma-estimator") && !d.perBand {
		return fmt.Errorf("--sigma-estimator applies only with --sigma-per-band")
	}
	save := d.settings[denoise.SaveDict.Name].text
	if !d.force {
		if err := formats.RefuseExisting(d.out); err != nil {
			return err
		}
	}
	if err := refuseExisting(d.force, save); err != nil {
		return err
	}
	log := newReporter(cmd)
	spec, m, known, err := d.build(f, log)
	if err != nil {
		return err
	}
	if tiled, budget, err := d.tf.decide(d.input, d.out, &d.cf, spec, d.ref != "", d.perBand, log); err != nil {
		return flagError(err)
	} else if tiled {
		r := stripRun{input: d.input, out: d.out, save: save, force: d.force, sigma: d.sigma, known: known, cf: &d.cf,
			lines: d.tf.lines, budget: budget, spec: spec, method: m, log: log}
		return flagError(r.run(cmd.Context()))
	}
	noisy, err := d.cf.open(d.input, log)
	if err != nil {
		return flagError(err)
	}
	var clean *msi.Cube
	if d.ref != "" {
		if clean, err = d.cf.openLike(d.ref, noisy.Stored); err != nil {
			return err
		}
		if !clean.SameSize(noisy) {
			return fmt.Errorf("reference %s is %s but the input %s is %s", d.ref, clean.Size(), d.input, noisy.Size())
		}
	}
	start := time.Now()
	var (
		result *msi.Cube
		res    denoise.Result
		sigma  float64
	)
	if d.perBand {
		sigmas, err := noise.EstimateBands(noisy, d.estimator)
		if err != nil {
			return flagError(err)
		}
		log.Logf("estimated σ per band (%s): %s", d.estimator, formatSigmas(sigmas))
		sigma = bandwhiten.Reference(sigmas, bandwhiten.ReferenceMedian)
		result, err = bandwhiten.Denoise(cmd.Context(), func(ctx context.Context, c *msi.Cube, s float64) (*msi.Cube, error) {
			out, r, err := m.Denoise(ctx, c, s)
			res = r
			return out, err
		}, noisy, sigmas, bandwhiten.Options{})
		if err != nil {
			return flagError(err)
		}
	} else {
		if sigma, err = denoise.ResolveSigma(noisy, d.sigma, known, log); err != nil {
			return flagError(err)
		}
		if result, res, err = m.Denoise(cmd.Context(), noisy, sigma); err != nil {
			return flagError(err)
		}
	}
	// The small dictionary goes first, so that a failure to write either
	// output leaves neither behind.
	learned := res.Dictionary
	if save == "" {
		learned = nil
	}
	if learned != nil {
		if err := learned.WriteFile(save, d.force); err != nil {
			return err
		}
	}
	result.Metadata = noisy.Metadata // the scene's, unchanged
	result.Processing = describe(spec.Name, sigma, res)
	if d.perBand {
		result.Processing += " (bands whitened to σ = " + fmt.Sprintf("%.4g", sigma) + " by their " + d.estimator + " estimates)"
	}
	if _, err := writeCube(d.out, result, d.cf.writeOptions(noisy.Stored, d.force), log); err != nil {
		if learned != nil {
			os.Remove(save)
		}
		return err
	}
	log.Logf("wrote %s (%.1f s in all)", d.out, time.Since(start).Seconds())
	if clean == nil {
		return nil
	}
	rows := make([]evalRow, 0, 2)
	for _, r := range []struct {
		name string
		cube *msi.Cube
	}{{d.input, noisy}, {d.out, result}} {
		rep, err := metrics.Evaluate(cmd.Context(), clean, r.cube)
		if err != nil {
			return err
		}
		rows = append(rows, evalRow{input: r.name, rep: rep, wavelengths: r.cube.Wavelengths})
	}
	return writeEvalTable(cmd.OutOrStdout(), rows, false)
}

// describe is the output's metadata line: the method, the noise level and
// the settings the run used.
func describe(method string, sigma float64, res denoise.Result) string {
	parts := []string{"tdsc " + version + " denoise --method " + method, "sigma=" + fmt.Sprint(sigma)}
	for _, p := range res.Settings {
		parts = append(parts, p.Name+"="+p.Value)
	}
	return strings.Join(parts, " ")
}

// andList joins words as "a", "a and b" or "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// wrap fills the words of text into lines of at most helpWidth
// characters, for help paragraphs with generated words in them.
func wrap(text string) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		l := len([]rune(w))
		switch {
		case n == 0:
		case n+1+l > helpWidth:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}

// helpWidth is the width of help paragraphs.
const helpWidth = 84
