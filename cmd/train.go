package cmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"tdsc/internal/atomicfile"
	"tdsc/internal/denoise"
	"tdsc/internal/methods"
	"tdsc/internal/render"
	"tdsc/internal/stages/repair"
)

func newTrainCmd() *cobra.Command {
	var (
		cf                     cubeFlags
		settings               settingFlags
		input, out, atomsImage string
		sigma                  float64
		threads                int
		force                  bool
	)
	spec, trainer := methods.Trainer()
	c := &cobra.Command{
		Use:   "train --input NOISY --save-dict DICT.json",
		Short: "Learn a 2DSC dictionary from patches of a (noisy) cube, for --method " + spec.Name,
		Long: `train draws --samples random patches of p×p pixels × q bands from the input (means
removed), and learns --atoms atoms of size p²×1×q by alternating FISTA coding and
the Lagrange-dual dictionary update. The dictionary file records the settings and
the objective of every iteration; --atoms-png draws the atoms (each atom's q band
slices side by side, contrast-normalised per atom).`,
		Example: "  tdsc train --input noisy30.hdr --sigma 30 --save-dict dict30.json --atoms-png atoms30.png",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cf.start(cmd) // SIGINT and SIGTERM stop reading and writing cubes; reads are said on stderr
			if input == "" || out == "" {
				return fmt.Errorf("--input and --save-dict are required")
			}
			if err := checkOutputFiles(force, out, atomsImage); err != nil {
				return err
			}
			f := cmd.Flags()
			v, err := denoise.ParseSettings(trainer.Settings, settings.given(f))
			if err != nil {
				return flagError(err)
			}
			if f.Changed("sigma") {
				if err := denoise.CheckSigma(sigma); err != nil {
					return flagError(err)
				}
			}
			if err := denoise.CheckThreads(threads); err != nil {
				return flagError(err)
			}
			log := newReporter(cmd)
			noisy, err := cf.open(input)
			if err != nil {
				return flagError(err)
			}
			level, err := interruptible(cmd.Context(), func() (float64, error) { // estimating σ reads the whole cube
				return denoise.ResolveTrainSigma(noisy, sigma, v.Has(denoise.Beta), log)
			})
			if err != nil {
				return flagError(fmt.Errorf("%s: %w", input, err))
			}
			env := denoise.Env{Threads: threads, Report: log, CreatedBy: "tdsc " + version}
			var note string
			if env.Threads, note = denoise.ClampThreads(threads); note != "" {
				log.Logf("%s", note)
			}
			// Missing voxels are filled, as denoise fills them, so that
			// no patch of the sample holds a value that is no data.
			filled, _, err := repair.FillMissing(noisy)
			if err != nil {
				return fmt.Errorf("%s: %w", input, err)
			}
			model, err := trainer.Train(cmd.Context(), filled, v, level, env)
			if err != nil {
				return flagError(err)
			}
			obj := model.Objective
			log.Logf("learned %d atoms in %d iterations, objective %.6g", model.Atoms.N, len(obj), obj[len(obj)-1])
			if atomsImage != "" {
				if err := render.WritePNG(atomsImage, render.CubeAtoms(model), force); err != nil {
					return err
				}
			}
			if err := model.WriteFile(out, force); err != nil {
				if atomsImage != "" {
					os.Remove(atomsImage)
				}
				return err
			}
			log.Logf("wrote %s", out)
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&input, "input", "i", "", pathHelp("cube to learn from"))
	f.StringVar(&out, "save-dict", "", "dictionary file to write (JSON)")
	f.StringVar(&atomsImage, "atoms-png", "", "also draw the atoms into this PNG")
	deprecatedSpelling(f, "out", "o", "save-dict")
	f.BoolVar(&force, "force", false, "overwrite existing outputs")
	f.Float64Var(&sigma, "sigma", 0, "noise standard deviation on the [0, 255] scale (estimated from the input when not given)")
	f.IntVar(&threads, "threads", 0, "worker goroutines (default: all cores); the output does not depend on it")
	decls := make([]declared, len(trainer.Settings))
	for i, s := range trainer.Settings {
		decls[i] = declared{setting: s}
	}
	settings = registerSettings(c, decls)
	cf.register(c, false)
	cf.registerMemory(f, trainPeak)
	return c
}

// checkOutputFiles returns an error for the first of paths (files, not
// cubes) that exists, unless force is set, or whose folder does not exist
// or cannot be written (atomicfile.Check). Checking before the work
// starts saves a long run that could not write its result.
func checkOutputFiles(force bool, paths ...string) error {
	return atomicfile.Check(force, paths...)
}

// trainPeak is the peak memory of tdsc train, in bytes a voxel of its
// input: the cube as float64, its missing voxels filled in a copy, and the
// training sample. Measured by scripts/memory.sh on a 512×512×31 cube
// (docs/results.md): 13.0 for uint8 input, 15.9 for float32, rounded up.
const trainPeak = 16
