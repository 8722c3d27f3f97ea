package cmd

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"tdsc/internal/denoise"
	"tdsc/internal/metrics"
	"tdsc/internal/msi"
	"tdsc/internal/tsc"
)

func newDenoiseCmd() *cobra.Command {
	var (
		sf                          solverFlags
		input, out, dict, save, ref string
		force                       bool
	)
	c := &cobra.Command{
		Use:   "denoise --input NOISY --out OUT",
		Short: "Denoise a cube with 2DSC",
		Long: `denoise codes every overlapping p×p×q patch of the input over a 2DSC dictionary and
averages the reconstructions. Without --dict it first learns the dictionary from the
input itself (the paper's protocol), and --save-dict keeps it. --out is a PNG stack
folder (16-bit, clipped to [0, 255]) or an ENVI .hdr (float32, lossless). With --ref
it also prints the eval table of the input and the result on stdout.

β: --beta, else derived from σ (--sigma, else estimated from the input). With --dict
and neither flag, the β the dictionary was learned with is used.`,
		Example: "  tdsc denoise --input noisy30.hdr --sigma 30 --out denoised30 --ref balloons_ms",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if input == "" || out == "" {
				return fmt.Errorf("--input and --out are required")
			}
			if err := refuseExisting(force, out, save); err != nil {
				return err
			}
			log := newReporter(cmd)
			noisy, err := msi.Open(input)
			if err != nil {
				return err
			}
			var clean *msi.Cube
			if ref != "" {
				if clean, err = msi.Open(ref); err != nil {
					return err
				}
				if !clean.SameSize(noisy) {
					return fmt.Errorf("reference %s is %s but the input %s is %s", ref, clean.Size(), input, noisy.Size())
				}
			}
			var model *tsc.Model
			if dict != "" {
				if model, err = tsc.ReadModel(dict); err != nil {
					return err
				}
				if err := sf.adopt(cmd, model); err != nil {
					return fmt.Errorf("%s: %w", dict, err)
				}
			}
			o, err := sf.resolve(cmd, noisy, log)
			if err != nil {
				return err
			}
			start := time.Now()
			if model == nil {
				o.TrainProgress = trainProgress(log, o.TrainIters)
				res, err := denoise.Train(cmd.Context(), noisy, o)
				log.Finish()
				if err != nil {
					return err
				}
				log.Logf("learned %d atoms in %d iterations (%.1f s)", o.Atoms, len(res.Objective), time.Since(start).Seconds())
				model = newModel(res, o, sf.sigma)
			}
			o.CodeProgress = codeProgress(log)
			codeStart := time.Now()
			result, err := denoise.Reconstruct(cmd.Context(), noisy, model.Atoms, o)
			log.Finish()
			if err != nil {
				return err
			}
			log.Logf("coded the patches in %.1f s", time.Since(codeStart).Seconds())
			// The small dictionary goes first, so that a failure to write
			// either output leaves neither behind.
			saveDict := save != "" && dict == ""
			if saveDict {
				if err := model.WriteFile(save, force); err != nil {
					return err
				}
			}
			if _, err := msi.Write(out, result, msi.WriteOptions{Force: force}); err != nil {
				if saveDict {
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
				rep, err := metrics.Evaluate(clean, r.cube)
				if err != nil {
					return err
				}
				rows = append(rows, evalRow{input: r.name, rep: rep, wavelengths: r.cube.Wavelengths})
			}
			return writeEvalTable(cmd.OutOrStdout(), rows, false)
		},
	}
	f := c.Flags()
	f.StringVarP(&input, "input", "i", "", "noisy cube: a band-stack folder or an ENVI .hdr")
	f.StringVarP(&out, "out", "o", "", "denoised cube: a PNG stack folder or an ENVI .hdr")
	f.StringVar(&dict, "dict", "", "use this dictionary instead of learning one from the input")
	f.StringVar(&save, "save-dict", "", "save the dictionary learned from the input to this file")
	f.StringVar(&ref, "ref", "", "clean reference: also print PSNR/SSIM/SAM/ERGAS of the input and the result")
	f.BoolVar(&force, "force", false, "overwrite existing outputs")
	sf.register(f, false)
	c.MarkFlagsMutuallyExclusive("dict", "save-dict")
	return c
}
