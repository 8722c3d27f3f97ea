package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/methods"
	"tdsc/internal/noise"
	"tdsc/internal/pipeline"
	"tdsc/internal/report"
	"tdsc/internal/shard"
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
	noise                   noiseFlags
	saveMask, saveResidual  string
	mask                    string
	force                   bool
	shard                   string
}

// noiseFlags are the noise model's flags, as typed (pipeline.NoiseModel).
type noiseFlags struct {
	sparse, stripes, impulses, dead, perBand, estimator string
	signal, params                                      string
}

// register adds the noise model's flags to c.
func (n *noiseFlags) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&n.sparse, "sparse-noise", string(pipeline.Auto), "auto: look for stripes, dead columns or lines and impulses, say what was found, and remove it around the method; off: Gaussian noise only (no detection)")
	f.StringVar(&n.stripes, "stripes", string(pipeline.Auto), "auto or off: with off, stripes are neither looked for nor removed")
	f.StringVar(&n.impulses, "impulses", string(pipeline.Auto), "auto or off: with off, impulses are neither looked for nor removed")
	f.StringVar(&n.dead, "dead-lines", string(pipeline.Auto), "auto or off: with off, dead columns and lines are neither looked for nor removed")
	f.StringVar(&n.perBand, "sigma-per-band", string(pipeline.Auto), "on: whiten the bands to their median σ, denoise, restore the bands' scale; off: one σ; auto: whiten when the bands' σ differ (by more than ×"+
		fmt.Sprint(pipeline.DifferRatio)+") or sparse noise is removed (--sigma-per-band alone means on)")
	f.StringVar(&n.signal, "noise-model", string(pipeline.SignalAuto), "auto: fit every band's noise variance a·x + b and, when it grows with the signal, stabilise it (generalised Anscombe transform), denoise and invert without bias; gaussian: one σ per band, no fit; poisson-gaussian: stabilise with --noise-params, or the fitted a and b")
	f.StringVar(&n.params, "noise-params", "", "A,B: the sensor's noise variance A·x + B on the working [0, 255] scale, for every band, or a file of one pair \"A B\" per band: Poisson-Gaussian noise with these, not fitted")
	f.StringVar(&n.estimator, "sigma-estimator", "", "the bands' σ for whitening: mad (wavelet MAD per band), regression (HySime: each band regressed on the others) or min (the smaller) (default: the sparse-noise detector's, mad with --sparse-noise off)")
	for _, name := range []string{"sparse-noise", "stripes", "impulses", "dead-lines"} {
		fixedValues(c, name, pipeline.Modes(false))
	}
	fixedValues(c, "sigma-per-band", pipeline.Modes(true))
	bareValue(c, "sigma-per-band", string(pipeline.On))
	fixedValues(c, "sigma-estimator", noise.Estimators)
	fixedValues(c, "noise-model", pipeline.SignalModels())
}

// model returns the noise model the flags give.
func (n *noiseFlags) model() (pipeline.NoiseModel, error) {
	var m pipeline.NoiseModel
	for _, p := range []struct {
		flag, text string
		dst        *pipeline.Mode
		on         bool
	}{
		{"sparse-noise", n.sparse, &m.Sparse, false}, {"stripes", n.stripes, &m.Stripes, false},
		{"impulses", n.impulses, &m.Impulses, false}, {"dead-lines", n.dead, &m.Dead, false},
		{"sigma-per-band", n.perBand, &m.PerBand, true},
	} {
		v, err := pipeline.ParseMode(p.flag, p.text, p.on)
		if err != nil {
			return m, err
		}
		*p.dst = v
	}
	m.Estimator = n.estimator
	var err error
	if m.Signal, err = pipeline.ParseSignalModel(n.signal); err != nil {
		return m, err
	}
	if n.params != "" {
		if m.Params, err = noise.ReadLevels("noise-params", n.params); err != nil {
			return m, flagError(err)
		}
	}
	return m, nil
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
	f.StringVarP(&df.out, "out", "o", "", outPathHelp("denoised cube"))
	f.StringVarP(&df.method, "method", "m", methods.Default().Name, "denoising method: "+strings.Join(methods.Names(), ", "))
	f.StringVarP(&df.ref, "ref", "r", "", "clean reference: also print PSNR/SSIM/SAM/ERGAS of the input and the result")
	f.BoolVar(&df.force, "force", false, "overwrite existing outputs")
	f.Float64Var(&df.sigma, "sigma", 0, "noise standard deviation on the working [0, 255] scale, of every band (estimated from the input when not given; a warning when 4 times from the estimate)")
	f.IntVar(&df.threads, "threads", 0, "worker goroutines (default: all cores); the output does not depend on it")
	df.settings = registerSettings(c, declarations(methods.All()))
	df.cf.register(c, true)
	df.noise.register(c)
	f.StringVar(&df.saveMask, "save-mask", "", "also write the pixels treated as missing: a cube of 0 (kept), 1 (impulse), 2 (dead column or line), 3 (both), with 4 added for a missing voxel (no data); "+formats.WritePaths())
	f.StringVar(&df.saveResidual, "save-residual", "", "also write the removed component, input − result (it should look like noise); "+formats.WritePaths())
	f.StringVar(&df.mask, "mask", "", "a cube of the input's height and width, one band (every band) or the input's bands, whose nonzero voxels mark the input's as missing: not used as data, written back as they were; "+formats.Paths())
	f.IntVar(&df.tf.lines, "tile", 0, "denoise a cube ("+strings.Join(formats.WindowLabels(), ", ")+") in strips of this many lines (rounded down to the method's alignment, plus a halo), reading and writing it strip by strip; 0: only when the whole cube would exceed --max-memory")
	f.StringVar(&df.tf.maxMemory, "max-memory", "", "memory budget (e.g. 2G, 1536M): a larger cube ("+strings.Join(formats.WindowLabels(), ", ")+") is denoised in strips that fit it (default: half of the machine's RAM)")
	f.StringVar(&df.shard, "shard", "", "denoise only the I-th of N contiguous shares of the strips, I/N with 1 ≤ I ≤ N (e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT), writing it beside --out; the shard that finishes last writes --out, the same file as one run (implies strips)")
	c.MarkFlagsMutuallyExclusive(denoise.Dict.Name, denoise.SaveDict.Name)
	_ = c.RegisterFlagCompletionFunc("method", completeMethods)
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

` + wrap(`Noise: by default the input is searched for sparse noise (stripes, dead columns
or lines, impulses) and for a σ per band that it does not inflate, and what was found is said
on stderr. Sparse noise that was found is removed around the method: stripe offsets subtracted,
impulse and dead pixels filled as missing, the bands whitened by their σ, then a second pass from
the first's result (a method with a cheaper draft runs it for the first pass). Without sparse noise, bands
whose σ differ by more than ×`+fmt.Sprint(pipeline.DifferRatio)+` are whitened and denoised (as
--sigma-per-band on); otherwise the method runs with one σ, exactly as with --sparse-noise off.
--stripes, --impulses and --dead-lines off leave one kind alone; --sparse-noise off skips the
search. A given --sigma is the σ of every band: nothing is whitened. --save-mask and
--save-residual write what was treated as missing and what was removed.`) + `

σ: --sigma, on the working [0, 255] scale, else estimated from the input; said on
stderr in the input's units too, with a warning when a given σ is more than 4 times
from the estimate. --out is a PNG stack folder (16-bit, clipped to [0, 255]), an
ENVI .hdr (float32, lossless, in the input's units; the header records them and the
method and its settings), a .npy or a .mat. With --ref it also prints the eval table
of the input and the result on stdout.

Missing voxels (an ENVI data ignore value, NaN in a float file, the nonzero voxels
of --mask) are left out of the noise estimates, filled with the mirror image of the
data beside them before denoising and written back exactly as they were.

` + wrap(`A cube in a format read in strips (`+strings.Join(formats.WindowLabels(), ", ")+`) whose run would not fit in --max-memory (or any, with --tile) is
read, denoised and written in strips of lines with a halo; for `+which(denoise.Spec.ExactStrips)+` the
result is the whole cube's, bit for bit on Gaussian noise; the default learns its pilot's
dictionary and its rank once from the whole cube, and each strip comes close to the
whole run. The sparse noise and the bands' σ are found as on the whole cube, from one
noise model of the whole cube fitted over windows of lines before any strip, and so
is a signal-dependent noise level: each strip is then stabilised with the whole
cube's transform.`) + `

` + wrap(`--shard I/N denoises only the I-th of N shares of the strips, into a hidden part
beside --out (with its lines of --save-mask and --save-residual); started together on
machines that share a file system, the shard that finishes last writes --out (and the
mask and the residual), the files one run writes, byte for byte. Give every shard the
same flags (--threads aside): a shard that finds another's part made with other flags
fails and says which.`)
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
	model, err := d.noise.model()
	if err != nil {
		return err
	}
	// The cube is read whole only when it fits --max-memory: the same
	// budget bounds the read and sizes the strips.
	d.cf.maxMemory = d.tf.maxMemory
	d.cf.start(cmd) // SIGINT and SIGTERM stop reading --ref and writing the outputs
	ro, err := d.cf.readOptionsFor(d.input)
	if err != nil {
		return flagError(err)
	}
	job := &pipeline.Job{
		Input: d.input, Read: ro, Sigma: d.sigma, Noise: model, Mask: d.mask, Ref: d.ref,
		Out: d.out, SaveDictionary: d.settings[denoise.SaveDict.Name].text, SaveMask: d.saveMask, SaveResidual: d.saveResidual,
		DType: d.cf.dtype, Force: d.force, Program: "tdsc " + version, Report: d.cf.log,
	}
	if d.mask != "" {
		if job.MaskRead, err = d.cf.maskOptions(d.mask); err != nil {
			return fmt.Errorf("--mask: %w", flagError(err))
		}
	}
	if job.Spec, job.Method, job.Known, err = d.build(f, d.cf.log); err != nil {
		return err
	}
	job.Strips.Lines = d.tf.lines
	if d.shard != "" {
		if job.Strips.Shard, err = shard.Parse(d.shard); err != nil {
			return flagError(err)
		}
		job.Strips.Key = outputSettings(f)
	}
	if job.Strips.Budget, err = memoryBudget(d.tf.maxMemory); err != nil {
		return err
	}
	if d.ref != "" {
		if job.RefRead, err = d.cf.readOptionsFor(d.ref); err != nil {
			return flagError(err)
		}
	}
	done, err := pipeline.Run(cmd.Context(), job)
	if err != nil {
		return flagError(err)
	}
	if len(done.Scores) == 0 {
		return nil
	}
	rows := make([]evalRow, len(done.Scores))
	for i, sc := range done.Scores {
		rows[i] = evalRow{input: sc.Path, rep: sc.Report, wavelengths: sc.Wavelengths}
	}
	return writeEvalTable(cmd.OutOrStdout(), rows, false)
}

// outputSettings returns the flags given to denoise that decide its
// output, one "--name=value" a line in the order of their names: every
// flag but those that change only how it runs (--shard, --threads,
// --quiet, --force), the key of a sharded run's parts.
func outputSettings(f *pflag.FlagSet) string {
	var b strings.Builder
	f.Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "shard", "threads", "quiet", "force":
			return
		}
		fmt.Fprintf(&b, "--%s=%s\n", fl.Name, fl.Value)
	})
	return b.String()
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
