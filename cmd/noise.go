package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"tdsc/internal/formats"
	"tdsc/internal/noise"
	"tdsc/internal/pipeline"
)

func newNoiseCmd() *cobra.Command {
	var (
		input, out                       string
		spec                             noise.Spec
		sigmaRange, stripeCols, deadFrac string
		caseName, noiseParams            string
		force                            bool
		cf                               cubeFlags
	)
	c := &cobra.Command{
		Use:   "noise --input CLEAN (--sigma S | --sigma-range LO:HI | --noise-params A,B | --case 1…5) --seed N --out NOISY",
		Short: "Add seeded noise to a cube: i.i.d. Gaussian (the Table 2 protocol), band-dependent, Poisson-Gaussian, stripes, impulses, dead columns, QRNN3D's cases",
		Long: `noise adds Gaussian noise on the [0, 255] scale, unclipped, from a seeded generator:
the same flags and seed give bit-identical output.

  --sigma S            i.i.d. N(0, S²) in every band (the paper's Table 2 protocol)
  --sigma-range LO:HI  band-dependent: each band's σ drawn uniformly from [LO, HI]
                       (the drawn σs are said on stderr)
  --noise-params A,B   signal-dependent (Poisson-Gaussian), a photon-counting sensor's:
                       y = A·Poisson(x/A) + N(0, B), variance A·x + B (A = 0: Gaussian of
                       variance B); one pair for every band, or a text file of one pair
                       "A B" per band. The σ of i.i.d. Gaussian noise of the same mean
                       power is said on stderr; --gaussian-twin adds that noise instead,
                       with the same seed (the i.i.d. twin to compare a denoiser on)
  --stripes F          on a fraction F of the bands (chosen at random), full-height
                       vertical stripes: --stripe-columns LO:HI (default 0.1:0.2) of
                       the columns, each offset by a value uniform in
                       ±--stripe-amplitude (default 63.75)
  --impulse F          on a fraction F of the bands, salt-and-pepper noise: a fraction
                       --impulse-density (default 0.1) of the pixels set to 0 or 255
  --dead-columns F     on a fraction F of the bands, dead columns set to 0: a number
  --dead-lines F       (lines) drawn from ceil(LO·W) … ceil(HI·W) for --dead-fraction
                       LO:HI (default 0.05:0.15)

  --case N             one of the five "complex noise" cases of QRNN3D (Wei, Fu and
                       Huang 2020), by number or name: 1 noniid (every band's σ drawn
                       from 10, 30, 50, 70), 2 stripe (1 plus stripes on 10 bands),
                       3 deadline (1 plus dead columns on 10 bands), 4 impulse (1 plus
                       salt and pepper of density 0.1, 0.3, 0.5 or 0.7 on 10 bands),
                       5 mixture (1 plus stripes, dead columns and impulses on three
                       disjoint thirds of the bands). Same distributions as QRNN3D's
                       generators, not the same numbers (another random generator).
                       Excludes the sparse flags above; with --sigma, --sigma-range or
                       --noise-params, the case's sparse part is drawn over that noise
                       instead of its own σ per band.

Every part comes from a stream of its own, so turning one on leaves the Gaussian
part and the others unchanged (the five cases of one seed share their Gaussian
noise). What was drawn is said on stderr and recorded in the header's description. --out ending in .hdr writes a lossless ENVI float32 cube
(its description records the noise); a folder writes a 16-bit PNG stack, which must
clip the values to [0, 255] (a warning says how many). The noisy cube is in the
input's units; its missing voxels (no data) stay missing.`,
		Example: "  tdsc noise --input balloons_ms --sigma 30 --seed 1 --out noisy30.hdr\n" +
			"  tdsc noise --input balloons_ms --sigma-range 10:70 --stripes 0.2 --seed 1 --out mixed.hdr\n" +
			"  tdsc noise --input balloons_ms --case mixture --seed 1 --out c5.hdr\n" +
			"  tdsc noise --input balloons_ms --noise-params 2,16 --seed 1 --out pg.hdr\n" +
			"  tdsc noise --input balloons_ms --noise-params 2,16 --gaussian-twin --seed 1 --out twin.hdr\n" +
			"  tdsc noise --input balloons_ms --noise-params 2,16 --case stripe --seed 1 --out pg-stripes.hdr",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cf.start(cmd) // SIGINT and SIGTERM stop reading and writing cubes; reads are said on stderr
			if input == "" || out == "" {
				return fmt.Errorf("--input and --out are required")
			}
			var (
				qrnnCase noise.Case
				err      error
			)
			if caseName != "" {
				if qrnnCase, err = noise.ParseCase("case", caseName); err != nil {
					return flagError(err)
				}
				for _, name := range []string{"stripes", "stripe-columns", "stripe-amplitude",
					"impulse", "impulse-density", "dead-columns", "dead-lines", "dead-fraction"} {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--case and --%s exclude each other: a case sets the sparse part of the noise", name)
					}
				}
			}
			// The base noise: a case's own unless one is given.
			baseGiven := cmd.Flags().Changed("sigma") || sigmaRange != "" || noiseParams != ""
			switch {
			case noiseParams != "":
				if spec.PoissonGaussian, err = noise.ReadLevels("noise-params", noiseParams); err != nil {
					return flagError(err)
				}
				if cmd.Flags().Changed("sigma") || sigmaRange != "" {
					return fmt.Errorf("--noise-params and --sigma or --sigma-range exclude each other: the Poisson-Gaussian noise has its own variance, A·x + B")
				}
			case sigmaRange != "":
				if spec.SigmaRange, err = noise.ParseRange("sigma-range", sigmaRange); err != nil {
					return flagError(err)
				}
				if cmd.Flags().Changed("sigma") {
					return fmt.Errorf("--sigma and --sigma-range exclude each other")
				}
			case caseName == "" && !(spec.Sigma > 0), caseName != "" && baseGiven && !(spec.Sigma > 0):
				return fmt.Errorf("--sigma must be a positive number, got %v (or give --sigma-range, --noise-params or --case)", spec.Sigma)
			}
			if spec.GaussianTwin && noiseParams == "" {
				return fmt.Errorf("--gaussian-twin needs --noise-params: it adds i.i.d. Gaussian noise of their mean power")
			}
			if stripeCols != "" {
				if spec.StripeColumns, err = noise.ParseRange("stripe-columns", stripeCols); err != nil {
					return flagError(err)
				}
			}
			if deadFrac != "" {
				if spec.DeadFraction, err = noise.ParseRange("dead-fraction", deadFrac); err != nil {
					return flagError(err)
				}
			}
			if err := spec.Resolve().Validate(); err != nil {
				return flagError(err)
			}
			ro, err := cf.readOptionsFor(input)
			if err != nil {
				return flagError(err)
			}
			job := &pipeline.NoiseJob{Input: input, Read: ro, Spec: spec, Case: qrnnCase, OverBase: caseName != "" && baseGiven, Out: out, DType: cf.dtype, Force: force,
				Program: "tdsc " + version, Report: cf.log}
			done, err := job.Run(cmd.Context())
			if err != nil {
				return flagError(err)
			}
			if done.Clipped > 0 {
				limit, where := "[0, 255]", "the PNG stack "+out
				if formats.ForWrite(out).Info().Name != "png" {
					limit, where = "the range of "+cf.dtype, out // an integer --dtype
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d of %d values were clipped to %s in %s; use an .hdr output (or a float --dtype) for a lossless noisy cube\n",
					done.Clipped, len(done.Noisy.Data), limit, where)
			}
			for _, line := range done.Applied.Lines() {
				cf.log.Logf("%s", line)
			}
			cf.log.Logf("wrote %s (%s, %s)", out, done.Noisy.Size(), done.What)
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&input, "input", "i", "", pathHelp("clean cube"))
	f.StringVarP(&out, "out", "o", "", "noisy cube: an ENVI .hdr or float .npy/.mat (lossless), or a PNG stack folder (an existing folder, or a path without an extension)")
	f.Float64Var(&spec.Sigma, "sigma", 0, "noise standard deviation on the [0, 255] scale, the same in every band")
	f.StringVar(&sigmaRange, "sigma-range", "", "LO:HI: each band's σ drawn uniformly from [LO, HI] instead")
	f.Float64Var(&spec.StripeBands, "stripes", 0, "fraction of the bands with vertical stripes (0: none)")
	f.StringVar(&stripeCols, "stripe-columns", "", "LO:HI: fraction of a striped band's columns with a stripe (default 0.1:0.2)")
	f.Float64Var(&spec.StripeAmplitude, "stripe-amplitude", 0, "largest stripe offset on the [0, 255] scale (default 63.75)")
	f.Float64Var(&spec.ImpulseBands, "impulse", 0, "fraction of the bands with salt-and-pepper noise (0: none)")
	f.Float64Var(&spec.ImpulseDensity, "impulse-density", 0, "fraction of an impulse band's pixels set to 0 or 255 (default 0.1)")
	f.Float64Var(&spec.DeadColumnBands, "dead-columns", 0, "fraction of the bands with dead columns, set to 0 (0: none)")
	f.Float64Var(&spec.DeadLineBands, "dead-lines", 0, "fraction of the bands with dead lines, set to 0 (0: none)")
	f.StringVar(&deadFrac, "dead-fraction", "", "LO:HI: fraction of such a band's columns (lines) that are dead (default 0.05:0.15)")
	f.StringVar(&noiseParams, "noise-params", "", "A,B: Poisson-Gaussian noise A·Poisson(x/A) + N(0, B) in every band (gain A, read-noise variance B on the [0, 255] scale), or a file of one pair \"A B\" per band")
	f.BoolVar(&spec.GaussianTwin, "gaussian-twin", false, "with --noise-params: add i.i.d. Gaussian noise of their mean power instead (the same seed, sparse parts and description)")
	f.StringVar(&caseName, "case", "", "QRNN3D complex noise case: 1 noniid, 2 stripe, 3 deadline, 4 impulse, 5 mixture (by number or name)")
	fixedValues(c, "case", noise.CaseNames())
	f.Uint64Var(&spec.Seed, "seed", 1, "seed of the noise generator")
	f.BoolVar(&force, "force", false, "overwrite an existing output")
	cf.register(c, true)
	cf.registerMemory(f, pipeline.NoisePeak)
	return c
}
