package pipeline

import (
	"context"
	"fmt"
	"math"
	"strings"

	"tdsc/internal/denoise"
	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/parallel"
	"tdsc/internal/report"
)

// NoiseJob adds seeded noise to a clean cube (tdsc noise): the noise Spec
// describes, or one of QRNN3D's cases, drawn on the working [0, 255]
// scale and written in the input's units, with what was drawn in the
// processing line. A voxel without data stays without: no noise is drawn
// into what is not there (impulses and dead lines would give it a value).
type NoiseJob struct {
	// Input is the clean cube's path, read with Read.
	Input string
	Read  msi.ReadOptions
	// Spec is the noise, checked by the caller (Spec.Resolve().Validate);
	// Case, if not 0, is the case to simulate instead, with Spec.Seed, or
	// with OverBase the sparse part of the case over Spec's noise.
	Spec     noise.Spec
	Case     noise.Case
	OverBase bool
	// Out is the noisy cube's path, written with the element type DType
	// (see WriteOptions); Force replaces an existing one.
	Out   string
	DType string
	Force bool
	// Program names the program and its version in the processing line.
	Program string
	// Report receives the log lines (nil: none).
	Report report.Reporter
}

// NoiseOutcome is what a NoiseJob drew and wrote.
type NoiseOutcome struct {
	// Noisy is the noisy cube, Applied what was drawn.
	Noisy   *msi.Cube
	Applied *noise.Applied
	// What says what was simulated: the noise (noise.Spec.String), or
	// the case and the seed.
	What string
	// Clipped is the number of values a PNG band stack clipped to
	// [0, 255].
	Clipped int
}

// Run runs the job; on error no output is left.
func (j *NoiseJob) Run(ctx context.Context) (*NoiseOutcome, error) {
	log := report.OrDiscard(j.Report)
	in, err := formats.NewSource(j.Input, j.Read)
	if err != nil {
		return nil, err
	}
	// The output is checked before the input is read: its name, folder
	// and existence, and, with the size from the input's header where the
	// format gives it, whether the format holds the result.
	target := formats.NewTarget(j.Out)
	early := msi.WriteOptions{Force: j.Force, DType: j.DType}
	var h, w, b int
	if j.DType != "input" {
		h, w, b, _ = in.Size() // a file it cannot read is said by the read
	}
	if err := target.Check(h, w, b, early); err != nil {
		return nil, err
	}
	clean, err := ReadWithin(ctx, in, "noise", NoisePeak, log)
	if err != nil {
		return nil, err
	}
	opts := WriteOptions(ctx, clean.Stored, j.DType, j.Force)
	if err := target.Check(clean.Height, clean.Width, clean.Bands, opts); err != nil {
		return nil, err
	}
	if scale := clean.Stored.Scale; j.Spec.Sigma > 0 && scale != 1 {
		log.Logf("σ = %s", denoise.InUnits(j.Spec.Sigma, scale))
	}
	// Simulating fills a new cube: abandoned when interrupted.
	out, err := parallel.Interruptible(ctx, func() (o *NoiseOutcome, err error) {
		o = new(NoiseOutcome)
		switch {
		case j.Case != 0 && j.OverBase:
			o.Noisy, o.Applied, err = noise.SimulateCaseOver(nil, clean, j.Case, j.Spec)
		case j.Case != 0:
			o.Noisy, o.Applied, err = noise.SimulateCase(nil, clean, j.Case, j.Spec.Seed)
		default:
			o.Noisy, o.Applied, err = noise.Simulate(nil, clean, j.Spec)
		}
		return o, err
	})
	if err != nil {
		return nil, err
	}
	noisy := out.Noisy
	for i, v := range clean.Data {
		if math.IsNaN(v) {
			noisy.Data[i] = v
		}
	}
	out.What = j.Spec.Resolve().String()
	switch {
	case j.Case != 0 && j.OverBase && j.Case != noise.CaseNonIID:
		out.What += fmt.Sprintf("; the sparse part of QRNN3D complex noise case %d (%s): %s", int(j.Case), j.Case.Name(), j.Case.Sparse())
	case j.Case != 0 && !j.OverBase:
		out.What = fmt.Sprintf("%s, seed %d", j.Case, j.Spec.Seed)
	}
	noisy.Metadata = clean.Metadata // the scene's, unchanged
	noisy.Processing = j.Program + " noise: " + strings.Join(append([]string{out.What}, out.Applied.Lines()...), "; ")
	info, err := writeCube(nil, target, noisy, opts, log)
	if err != nil {
		return nil, err
	}
	out.Clipped = info.Clipped
	return out, nil
}

// NoisePeak is the peak memory of a NoiseJob, in bytes a voxel of its
// input: the clean and the noisy cube as float64 (16), the output's
// encoding and the input's bytes as read. Measured by scripts/memory.sh
// on a 512×512×31 cube (docs/results.md): 21.4 for uint8 input, 24.4 for
// float32, rounded up.
const NoisePeak = 25
