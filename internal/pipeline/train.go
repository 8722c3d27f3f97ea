package pipeline

import (
	"context"
	"fmt"
	"os"

	"tdsc/internal/atomicfile"
	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/parallel"
	"tdsc/internal/render"
	"tdsc/internal/report"
	"tdsc/internal/stages/repair"
)

// TrainJob learns the dictionary of a method on its own (tdsc train): it
// reads the input, resolves σ (given, else estimated; none is needed when
// β is given), fills the missing voxels as denoising fills them, so that
// no patch of the sample holds a value that is no data, learns, and
// writes the dictionary file and, on request, the picture of its atoms
// (both or neither).
type TrainJob struct {
	// Input is the cube's path, read with Read.
	Input string
	Read  msi.ReadOptions
	// Trainer learns the dictionary with the settings Values (parsed by
	// its Settings).
	Trainer *denoise.Trainer
	Values  denoise.Values
	// Sigma is the noise level on the [0, 255] scale, 0 to estimate it.
	Sigma float64
	// Threads is the number of worker goroutines (0: GOMAXPROCS).
	Threads int
	// Out is the dictionary file's path; AtomsImage, if not empty, the
	// PNG the atoms are drawn into (render.CubeAtoms).
	Out, AtomsImage string
	// Force replaces existing outputs.
	Force bool
	// Program names the program and its version in the dictionary file.
	Program string
	// Report receives the log lines and progress (nil: none).
	Report report.Reporter
}

// TrainOutcome is what a TrainJob learned.
type TrainOutcome struct {
	// Sigma is the noise level learning ran at (0: unknown, β given).
	Sigma float64
	// Atoms is the number of atoms, Iterations the number of learning
	// iterations and Objective the last one's objective.
	Atoms, Iterations int
	Objective         float64
}

// Run runs the job. Existing outputs are refused before any work, unless
// j.Force; on error no output is left.
func (j *TrainJob) Run(ctx context.Context) (*TrainOutcome, error) {
	log := report.OrDiscard(j.Report)
	if err := atomicfile.Check(j.Force, j.Out, j.AtomsImage); err != nil {
		return nil, err
	}
	if err := denoise.CheckThreads(j.Threads); err != nil {
		return nil, err
	}
	threads, note := denoise.ClampThreads(j.Threads)
	if note != "" {
		log.Logf("%s", note)
	}
	in, err := formats.NewSource(j.Input, j.Read)
	if err != nil {
		return nil, err
	}
	noisy, err := ReadWithin(ctx, in, "train", TrainPeak, log)
	if err != nil {
		return nil, err
	}
	sigma, err := parallel.Interruptible(ctx, func() (float64, error) { // estimating σ reads the whole cube
		return denoise.ResolveTrainSigma(noisy, j.Sigma, j.Values.Has(denoise.Beta), log)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.Input, err)
	}
	filled, _, err := repair.FillMissing(noisy)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.Input, err)
	}
	model, err := j.Trainer.Train(ctx, filled, j.Values, sigma, denoise.Env{Threads: threads, Report: log, CreatedBy: j.Program})
	if err != nil {
		return nil, err
	}
	obj := model.Objective
	out := &TrainOutcome{Sigma: sigma, Atoms: model.Atoms.N, Iterations: len(obj), Objective: obj[len(obj)-1]}
	log.Logf("learned %d atoms in %d iterations, objective %.6g", out.Atoms, out.Iterations, out.Objective)
	if j.AtomsImage != "" {
		if err := render.WritePNG(j.AtomsImage, render.CubeAtoms(model), j.Force); err != nil {
			return nil, err
		}
	}
	if err := model.WriteFile(j.Out, j.Force); err != nil {
		if j.AtomsImage != "" {
			os.Remove(j.AtomsImage)
		}
		return nil, err
	}
	log.Logf("wrote %s", j.Out)
	return out, nil
}

// TrainPeak is the peak memory of a TrainJob, in bytes a voxel of its
// input: the cube as float64, its missing voxels filled in a copy, and the
// training sample. Measured by scripts/memory.sh on a 512×512×31 cube
// (docs/results.md): 13.0 for uint8 input, 15.9 for float32, rounded up.
const TrainPeak = 16
