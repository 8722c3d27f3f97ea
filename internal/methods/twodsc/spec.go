package twodsc

import (
	"context"
	"fmt"

	"tdsc/internal/denoise"
	"tdsc/internal/dictfile"
	"tdsc/internal/msi"
	"tdsc/internal/report"
)

// Fields are the settings of the pipeline, with the defaults of the
// method 2dsc (Defaults); Resolve and Validate apply them.
var Fields = denoise.Fields[Options]{
	denoise.Rule(denoise.Beta, func(o *Options) *float64 { return &o.Beta }, fmt.Sprintf("%gσ", float64(betaPerSigma)),
		func(_ *Options, sigma float64) float64 { return BetaFor(sigma) }),
	denoise.Value(denoise.Patch, func(o *Options) *int { return &o.Patch }, DefaultPatch),
	denoise.Value(denoise.Depth, func(o *Options) *int { return &o.Depth }, DefaultDepth),
	// The default step never exceeds the patch, so that a small Patch is
	// still covered.
	denoise.Rule(denoise.Stride, func(o *Options) *int { return &o.Stride }, fmt.Sprintf("1 for σ ≥ %d, else 2", fineStrideSigma),
		func(o *Options, sigma float64) int { return min(StrideFor(sigma), o.Patch) }),
	atomsField(fmt.Sprint(DefaultAtoms)),
	denoise.Value(denoise.Samples, func(o *Options) *int { return &o.Samples }, DefaultSamples),
	denoise.Value(denoise.Iters, func(o *Options) *int { return &o.TrainIters }, DefaultTrainIters),
	denoise.Value(denoise.InnerIters, func(o *Options) *int { return &o.InnerIters }, DefaultInnerIters),
	denoise.Value(denoise.CodeIters, func(o *Options) *int { return &o.CodeIters }, DefaultCodeIters),
	denoise.Choice(denoise.Setting{Name: "weights", Kind: denoise.Enum,
		Help: "averaging of overlapping patches: sparsity (weight 1/(1 + non-zeros of the code)) or uniform"},
		func(o *Options) *Weighting { return &o.Weighting }, Sparsity, Uniform),
	denoise.Value(denoise.Seed, func(o *Options) *uint64 { return &o.Seed }, DefaultSeed),
}

// atomsField is the setting of Options.Atoms, whose default help texts
// show as text: DefaultAtoms, or VectorisedAtoms(Depth) when Vectorised.
func atomsField(text string) denoise.Field[Options] {
	return denoise.Rule(denoise.Atoms, func(o *Options) *int { return &o.Atoms }, text, func(o *Options, _ float64) int {
		if o.Vectorised {
			return VectorisedAtoms(o.Depth)
		}
		return DefaultAtoms
	})
}

// trainSettings are the settings that learning reads (tdsc train).
var trainSettings = []string{"beta", "patch", "depth", "stride", "atoms", "samples", "iters", "inner-iters", "seed"}

// Spec declares the method 2dsc.
var Spec = denoise.Spec{
	Name:     "2dsc",
	Summary:  fmt.Sprintf("the paper's two-dimensional sparse coding of %d×%d×%d patches (local)", DefaultPatch, DefaultPatch, DefaultDepth),
	Settings: Fields.Settings(),
	New:      func(c denoise.Config) (denoise.Method, error) { return newDenoiser(c, false) },
	// Peak RSS 396 MiB.
	BytesPerVoxel:   52,
	TakesDictionary: true,
	SavesDictionary: true,
	Train: &denoise.Trainer{
		Settings: Fields.Only(trainSettings...).Settings(),
		Train:    train,
	},
}

// SCSpec declares the method sc: the pipeline with Vectorised set.
var SCSpec = denoise.Spec{
	Name: "sc",
	Summary: fmt.Sprintf("conventional sparse coding of the same patches as 2dsc, each a p²q-vector (the paper's baseline; %d atoms)",
		VectorisedAtoms(DefaultDepth)),
	Settings: Fields.With(atomsField(fmt.Sprintf("%d × depth", DefaultAtoms))).Settings(),
	New:      func(c denoise.Config) (denoise.Method, error) { return newDenoiser(c, true) },
	// Peak RSS 414 MiB.
	BytesPerVoxel: 54,
}

// newDenoiser builds the pipeline from c, vectorised for sc.
func newDenoiser(c denoise.Config, vectorised bool) (denoise.Method, error) {
	o := Fields.Options(c.Values)
	o.Threads, o.Vectorised = c.Threads, vectorised
	d := &Denoiser{Options: o, CreatedBy: c.CreatedBy, Report: c.Report}
	if c.Dictionary != nil {
		if err := d.Options.Adopt(c.Dictionary); err != nil {
			return nil, err
		}
		d.Model = c.Dictionary
	}
	return d, nil
}

// train is the Trainer of 2dsc: TrainModel with its progress reported.
func train(ctx context.Context, c *msi.Cube, v denoise.Values, sigma float64, env denoise.Env) (*dictfile.Model, error) {
	o := Fields.Options(v)
	o.Threads = env.Threads
	log := report.OrDiscard(env.Report)
	log.Start("training", "iterations", int64(o.Resolve(sigma).TrainIters))
	o.TrainProgress = func(iter, _ int, obj float64) {
		log.Update(int64(iter), fmt.Sprintf("objective %.6g", obj))
	}
	m, err := TrainModel(ctx, c, o, sigma, env.CreatedBy)
	log.Finish()
	return m, err
}
