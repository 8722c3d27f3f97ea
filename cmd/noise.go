package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"tdsc/internal/noise"
)

func newNoiseCmd() *cobra.Command {
	var (
		input, out             string
		spec                   noise.Spec
		sigmaRange, stripeCols string
		force                  bool
		cf                     cubeFlags
	)
	c := &cobra.Command{
		Use:   "noise --input CLEAN (--sigma S | --sigma-range LO:HI) --seed N --out NOISY",
		Short: "Add seeded noise to a cube: i.i.d. Gaussian (the Table 2 protocol), band-dependent, stripes, impulses",
		Long: `noise adds Gaussian noise on the [0, 255] scale, unclipped, from a seeded generator:
the same flags and seed give bit-identical output.

  --sigma S            i.i.d. N(0, S²) in every band (the paper's Table 2 protocol)
  --sigma-range LO:HI  band-dependent: each band's σ drawn uniformly from [LO, HI]
                       (the drawn σs are said on stderr)
  --stripes F          on a fraction F of the bands (chosen at random), full-height
                       vertical stripes: --stripe-columns LO:HI (default 0.1:0.2) of
                       the columns, each offset by a value uniform in
                       ±--stripe-amplitude (default 63.75)
  --impulse F          on a fraction F of the bands, salt-and-pepper noise: a fraction
                       --impulse-density (default 0.1) of the pixels set to 0 or 255

Stripes and impulses come from streams of their own, so turning them on leaves the
Gaussian part unchanged. --out ending in .hdr writes a lossless ENVI float32 cube
(its description records the noise); a folder writes a 16-bit PNG stack, which must
clip the values to [0, 255] (a warning says how many).`,
		Example: "  tdsc noise --input balloons_ms --sigma 30 --seed 1 --out noisy30.hdr\n" +
			"  tdsc noise --input balloons_ms --sigma-range 10:70 --stripes 0.2 --seed 1 --out mixed.hdr",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if input == "" || out == "" {
				return fmt.Errorf("--input and --out are required")
			}
			var err error
			if sigmaRange != "" {
				if spec.SigmaRange, err = noise.ParseRange("sigma-range", sigmaRange); err != nil {
					return flagError(err)
				}
				if cmd.Flags().Changed("sigma") {
					return fmt.Errorf("--sigma and --sigma-range exclude each other")
				}
			} else if !(spec.Sigma > 0) {
				return fmt.Errorf("--sigma must be a positive number, got %v (or give --sigma-range)", spec.Sigma)
			}
			if stripeCols != "" {
				if spec.StripeColumns, err = noise.ParseRange("stripe-columns", stripeCols); err != nil {
					return flagError(err)
				}
			}
			if err := spec.Resolve().Validate(); err != nil {
				return flagError(err)
			}
			log := newReporter(cmd)
			clean, err := cf.open(input, log)
			if err != nil {
				return flagError(err)
			}
			noisy, applied, err := noise.Simulate(nil, clean, spec)
			if err != nil {
				return flagError(err)
			}
			noisy.Metadata = clean.Metadata // the scene's, unchanged
			noisy.Processing = "tdsc " + version + " noise: " + spec.String()
			info, err := writeCube(out, noisy, cf.writeOptions(clean.Stored, force), log)
			if err != nil {
				return err
			}
			if info.Clipped > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d of %d values were clipped to [0, 255] in the PNG stack %s; use an .hdr output for a lossless noisy cube\n",
					info.Clipped, len(noisy.Data), out)
			}
			if !spec.SigmaRange.IsZero() {
				log.Logf("σ per band: %s", formatSigmas(applied.Sigmas))
			}
			if len(applied.StripeBands) > 0 {
				log.Logf("stripes in bands %s", formatBands(applied.StripeBands))
			}
			if len(applied.ImpulseBands) > 0 {
				log.Logf("impulses (%d pixels each) in bands %s", applied.ImpulsePixels, formatBands(applied.ImpulseBands))
			}
			log.Logf("wrote %s (%s, %s)", out, noisy.Size(), spec.Resolve().String())
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&input, "input", "i", "", pathHelp("clean cube"))
	f.StringVarP(&out, "out", "o", "", "noisy cube: an ENVI .hdr or float .npy/.mat (lossless), or a PNG stack folder")
	f.Float64Var(&spec.Sigma, "sigma", 0, "noise standard deviation on the [0, 255] scale, the same in every band")
	f.StringVar(&sigmaRange, "sigma-range", "", "LO:HI: each band's σ drawn uniformly from [LO, HI] instead")
	f.Float64Var(&spec.StripeBands, "stripes", 0, "fraction of the bands with vertical stripes (0: none)")
	f.StringVar(&stripeCols, "stripe-columns", "", "LO:HI: fraction of a striped band's columns with a stripe (default 0.1:0.2)")
	f.Float64Var(&spec.StripeAmplitude, "stripe-amplitude", 0, "largest stripe offset on the [0, 255] scale (default 63.75)")
	f.Float64Var(&spec.ImpulseBands, "impulse", 0, "fraction of the bands with salt-and-pepper noise (0: none)")
	f.Float64Var(&spec.ImpulseDensity, "impulse-density", 0, "fraction of an impulse band's pixels set to 0 or 255 (default 0.1)")
	f.Uint64Var(&spec.Seed, "seed", 1, "seed of the noise generator")
	f.BoolVar(&force, "force", false, "overwrite an existing output")
	cf.register(f, true)
	return c
}

// formatSigmas lists per-band noise levels on one line.
func formatSigmas(s []float64) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprintf("%.2f", v)
	}
	return strings.Join(parts, " ")
}

// formatBands lists 0-based band indices as 1-based band numbers.
func formatBands(bands []int) string {
	parts := make([]string, len(bands))
	for i, b := range bands {
		parts[i] = fmt.Sprint(b + 1)
	}
	return strings.Join(parts, " ")
}
