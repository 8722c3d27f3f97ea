package cmd

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
)

func newNoiseCmd() *cobra.Command {
	var (
		input, out string
		sigma      float64
		seed       uint64
		force      bool
		cf         cubeFlags
	)
	c := &cobra.Command{
		Use:   "noise --input CLEAN --sigma S --seed N --out NOISY",
		Short: "Add seeded Gaussian noise to a cube (the Table 2 protocol)",
		Long: `noise adds i.i.d. Gaussian noise N(0, S²) on the [0, 255] scale, unclipped, from a
seeded generator: the same seed gives bit-identical output. --out ending in .hdr
writes a lossless ENVI float32 cube; a folder writes a 16-bit PNG stack, which
must clip the values to [0, 255] (a warning says how many).`,
		Example: "  tdsc noise --input balloons_ms --sigma 30 --seed 1 --out noisy30.hdr",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if input == "" || out == "" {
				return fmt.Errorf("--input and --out are required")
			}
			if !(sigma > 0) || math.IsInf(sigma, 0) {
				return fmt.Errorf("--sigma must be a positive number, got %v", sigma)
			}
			log := newReporter(cmd)
			clean, src, err := cf.open(input, log)
			if err != nil {
				return flagError(err)
			}
			noisy := noise.Add(nil, clean, sigma, seed)
			noisy.Header = clean.Header // the scene's metadata, unchanged
			info, err := msi.Write(out, noisy, cf.writeOptions(src, force))
			if err != nil {
				return err
			}
			if info.Clipped > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d of %d values were clipped to [0, 255] in the PNG stack %s; use an .hdr output for a lossless noisy cube\n",
					info.Clipped, len(noisy.Data), out)
			}
			log.Logf("wrote %s (%s, σ = %g, seed %d)", out, noisy.Size(), sigma, seed)
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&input, "input", "i", "", "clean cube: a band-stack folder, an ENVI .hdr, a .npy or a .mat[:VAR]")
	f.StringVarP(&out, "out", "o", "", "noisy cube: an ENVI .hdr or float .npy/.mat (lossless), or a PNG stack folder")
	f.Float64Var(&sigma, "sigma", 0, "noise standard deviation on the [0, 255] scale")
	f.Uint64Var(&seed, "seed", 1, "seed of the noise generator")
	f.BoolVar(&force, "force", false, "overwrite an existing output")
	cf.register(f, true)
	return c
}
