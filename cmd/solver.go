package cmd

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/tsc"
)

// solverFlags are the settings shared by train and denoise. Their defaults
// come from denoise.Defaults, the single place where they are chosen.
type solverFlags struct {
	sigma, beta float64
	weights     string
	o           denoise.Options
}

func (s *solverFlags) register(f *pflag.FlagSet, training bool) {
	d := denoise.Defaults(1)
	f.Float64Var(&s.sigma, "sigma", 0, "noise standard deviation on the [0, 255] scale (estimated from the input when not given)")
	f.Float64Var(&s.beta, "beta", 0, "ℓ1 weight β (default: derived from σ, see README)")
	f.IntVar(&s.o.Patch, "patch", d.Patch, "patch side p in pixels")
	f.IntVar(&s.o.Depth, "depth", d.Depth, "patch depth q in bands")
	// The default step depends on σ, which is known only in resolve: the
	// flag's own default is not used when it is not given.
	f.IntVar(&s.o.Stride, "stride", 0, "spatial step between patches, 1..patch (spectral step is 1) (default: derived from σ, 1 for σ ≥ 20, else 2)")
	f.IntVar(&s.o.Atoms, "atoms", d.Atoms, "number of dictionary atoms")
	f.IntVar(&s.o.Samples, "samples", d.Samples, "training patches drawn at random from the input")
	f.IntVar(&s.o.TrainIters, "iters", d.TrainIters, "maximum outer training iterations")
	f.IntVar(&s.o.InnerIters, "inner-iters", d.InnerIters, "FISTA iterations per training iteration")
	f.Uint64Var(&s.o.Seed, "seed", d.Seed, "seed of the training sample and the initial dictionary")
	f.IntVar(&s.o.Threads, "threads", 0, "worker goroutines (default: all cores); the output does not depend on it")
	s.o.TrainTol, s.o.CodeTol = d.TrainTol, d.CodeTol
	if !training {
		f.IntVar(&s.o.CodeIters, "code-iters", d.CodeIters, "maximum FISTA iterations when coding every patch")
		f.StringVar(&s.weights, "weights", d.Weighting.String(), "averaging of overlapping patches: sparsity (weight 1/(1 + non-zeros of the code)) or uniform")
	} else {
		s.o.CodeIters = d.CodeIters
	}
}

// resolve checks the flags and fills σ, β and the step: β from --beta,
// else from σ by the default rule; the step from --stride, else from σ by
// its default rule; σ from --sigma, else estimated from the noisy cube (and
// said on stderr).
func (s *solverFlags) resolve(cmd *cobra.Command, noisy *msi.Cube, log *reporter) (denoise.Options, error) {
	f := cmd.Flags()
	if f.Changed("sigma") && (!(s.sigma > 0) || math.IsInf(s.sigma, 0)) {
		return s.o, fmt.Errorf("--sigma must be a positive number, got %v", s.sigma)
	}
	if f.Changed("beta") && (!(s.beta >= 0) || math.IsInf(s.beta, 0)) {
		return s.o, fmt.Errorf("--beta must be a finite number ≥ 0, got %v", s.beta)
	}
	if s.o.Threads < 0 {
		return s.o, fmt.Errorf("--threads must be ≥ 0, got %d", s.o.Threads)
	}
	o := s.o
	if f.Lookup("weights") != nil {
		w, err := denoise.ParseWeighting(s.weights)
		if err != nil {
			return o, fmt.Errorf("--weights: %w", err)
		}
		o.Weighting = w
	}
	if !f.Changed("sigma") {
		s.sigma = noise.EstimateMedian(noisy)
		log.Logf("estimated σ = %.2f (median over bands of the MAD of the finest diagonal wavelet band / 0.6745)", s.sigma)
		if !(s.sigma > 0) {
			if !f.Changed("beta") {
				return o, fmt.Errorf("could not estimate the noise level of the input (is it noise-free?): give --sigma or --beta")
			}
		}
	}
	if f.Changed("beta") {
		o.Beta = s.beta
	} else {
		o.Beta = denoise.BetaFor(s.sigma)
	}
	if !f.Changed("stride") {
		// A step larger than the patch would leave pixels uncovered: the
		// rule gives way to a small --patch.
		o.Stride = min(denoise.StrideFor(s.sigma), o.Patch)
	}
	return o, o.Validate(noisy.Height, noisy.Width, noisy.Bands)
}

// trainProgress reports learning iterations through log.
func trainProgress(log *reporter, total int) func(iter, total int, obj float64) {
	log.Start("training", "iterations", int64(total))
	return func(iter, _ int, obj float64) {
		log.Update(int64(iter), fmt.Sprintf("objective %.6g", obj))
	}
}

// codeProgress reports coded patches through log.
func codeProgress(log *reporter) func(done, total int) {
	started := false
	return func(done, total int) {
		if !started {
			log.Start("coding patches", "patches", int64(total))
			started = true
		}
		log.Update(int64(done), "")
	}
}

// adopt takes the patch geometry and, when neither --beta nor --sigma is
// given, the β of a dictionary file. Geometry flags that contradict the
// dictionary are an error.
func (s *solverFlags) adopt(cmd *cobra.Command, m *tsc.Model) error {
	f := cmd.Flags()
	if m.Patch.Height != m.Patch.Width {
		return fmt.Errorf("the dictionary is for %d×%d-pixel patches; denoise needs square ones", m.Patch.Height, m.Patch.Width)
	}
	if f.Changed("patch") && s.o.Patch != m.Patch.Height {
		return fmt.Errorf("the dictionary is for %d×%d-pixel patches but --patch is %d", m.Patch.Height, m.Patch.Width, s.o.Patch)
	}
	if f.Changed("depth") && s.o.Depth != m.Patch.Depth {
		return fmt.Errorf("the dictionary is for patches of %d bands but --depth is %d", m.Patch.Depth, s.o.Depth)
	}
	s.o.Patch, s.o.Depth, s.o.Atoms = m.Patch.Height, m.Patch.Depth, m.Atoms.N
	if !f.Changed("beta") && !f.Changed("sigma") && m.Beta > 0 {
		if err := f.Set("beta", fmt.Sprint(m.Beta)); err != nil {
			return err
		}
		if m.Sigma > 0 {
			if err := f.Set("sigma", fmt.Sprint(m.Sigma)); err != nil {
				return err
			}
		}
	}
	return nil
}
