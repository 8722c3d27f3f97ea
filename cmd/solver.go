package cmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"tdsc/internal/methods/twodsc"
	"tdsc/internal/option"
)

// solverFlags are the 2DSC settings shared by train and denoise. A flag
// left at zero means the library's default (twodsc.Options.Resolve), so the
// defaults are chosen in one place.
type solverFlags struct {
	sigma   float64
	weights string
	o       twodsc.Options
}

func (s *solverFlags) register(f *pflag.FlagSet, training bool) {
	// def is the default in a help text: 2dsc's for train, the method's
	// for denoise, whose methods share these flags.
	def := func(v any) string {
		if training {
			return fmt.Sprintf("(default %v)", v)
		}
		return fmt.Sprintf("(default: the method's; for 2dsc %v)", v)
	}
	f.Float64Var(&s.sigma, "sigma", 0, "noise standard deviation on the [0, 255] scale (estimated from the input when not given)")
	f.Float64Var(&s.o.Beta, "beta", 0, "ℓ1 weight β of 2DSC (default: 3σ)")
	f.IntVar(&s.o.Patch, "patch", 0, "patch side p in pixels "+def(twodsc.DefaultPatch))
	f.IntVar(&s.o.Depth, "depth", 0, "patch depth q in bands "+def(twodsc.DefaultDepth))
	f.IntVar(&s.o.Stride, "stride", 0, "spatial step between patches, 1..patch (spectral step is 1) "+def("1 for σ ≥ 20, else 2"))
	f.IntVar(&s.o.Atoms, "atoms", 0, "number of dictionary atoms "+def(twodsc.DefaultAtoms))
	f.IntVar(&s.o.Samples, "samples", 0, "training patches drawn at random from the input "+def(twodsc.DefaultSamples))
	f.IntVar(&s.o.TrainIters, "iters", 0, "maximum outer training iterations "+def(twodsc.DefaultTrainIters))
	f.IntVar(&s.o.InnerIters, "inner-iters", 0, fmt.Sprintf("FISTA iterations per training iteration (default %d)", twodsc.DefaultInnerIters))
	f.Uint64Var(&s.o.Seed, "seed", 0, fmt.Sprintf("seed of the training sample and the initial dictionary (default %d)", twodsc.DefaultSeed))
	f.IntVar(&s.o.Threads, "threads", 0, "worker goroutines (default: all cores); the output does not depend on it")
	if !training {
		f.IntVar(&s.o.CodeIters, "code-iters", 0, fmt.Sprintf("maximum FISTA iterations when coding every patch (default %d)", twodsc.DefaultCodeIters))
		f.StringVar(&s.weights, "weights", twodsc.Sparsity.String(), "averaging of overlapping patches: sparsity (weight 1/(1 + non-zeros of the code)) or uniform")
	}
}

// options returns the 2DSC settings the flags give. An explicit --sigma 0
// is an error: 0 stands for "not given" in the library.
func (s *solverFlags) options(f *pflag.FlagSet) (twodsc.Options, error) {
	o := s.o
	if f.Changed("sigma") && s.sigma == 0 {
		return o, fmt.Errorf("--sigma must be a positive number, got 0")
	}
	if f.Lookup("weights") != nil {
		w, err := twodsc.ParseWeighting(s.weights)
		if err != nil {
			return o, err
		}
		o.Weighting = w
	}
	return o, nil
}

// flagError names the flag of an *option.Error in err's message: a reason
// that starts with the setting's name gets dashes ("--beta must be …"),
// another gets the flag in front ("--weights: …"). Other errors pass as
// they are.
func flagError(err error) error {
	var oe *option.Error
	if !errors.As(err, &oe) {
		return err
	}
	msg := err.Error()
	reason := oe.Error()
	prefix := strings.TrimSuffix(msg, reason)
	if strings.HasPrefix(reason, oe.Field+" ") {
		return errors.New(prefix + "--" + reason)
	}
	return fmt.Errorf("%s--%s: %s", prefix, oe.Field, reason)
}
