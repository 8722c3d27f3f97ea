package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"tdsc/internal/denoise"
	"tdsc/internal/methods"
	"tdsc/internal/pipeline"
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
			ro, err := cf.readOptionsFor(input)
			if err != nil {
				return flagError(err)
			}
			job := &pipeline.TrainJob{Input: input, Read: ro, Trainer: trainer, Values: v, Sigma: sigma, Threads: threads,
				Out: out, AtomsImage: atomsImage, Force: force, Program: "tdsc " + version, Report: cf.log}
			_, err = job.Run(cmd.Context())
			return flagError(err)
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
	cf.registerMemory(f, pipeline.TrainPeak)
	return c
}
