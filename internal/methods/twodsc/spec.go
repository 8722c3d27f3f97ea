package twodsc

import (
	"context"
	"fmt"

	"tdsc/internal/denoise"
	"tdsc/internal/dictfile"
	"tdsc/internal/msi"
	"tdsc/internal/report"
)

// The settings of the pipeline, with the defaults of the method 2dsc
// (Defaults); their rules are the ones Validate applies.
var (
	betaSetting       = denoise.Beta.WithDefault(fmt.Sprintf("%gσ", float64(betaPerSigma)))
	patchSetting      = denoise.Patch.WithDefault(DefaultPatch)
	depthSetting      = denoise.Depth.WithDefault(DefaultDepth)
	strideSetting     = denoise.Stride.WithDefault(fmt.Sprintf("1 for σ ≥ %d, else 2", fineStrideSigma))
	atomsSetting      = denoise.Atoms.WithDefault(DefaultAtoms)
	samplesSetting    = denoise.Samples.WithDefault(DefaultSamples)
	itersSetting      = denoise.Iters.WithDefault(DefaultTrainIters)
	innerItersSetting = denoise.InnerIters.WithDefault(DefaultInnerIters)
	codeItersSetting  = denoise.CodeIters.WithDefault(DefaultCodeIters)
	seedSetting       = denoise.Seed.WithDefault(DefaultSeed)
)

// weightsSetting is the setting of Options.Weighting, spelled as Weighting.String.
var weightsSetting = denoise.Setting{
	Name: "weights", Kind: denoise.Enum, Choices: []string{Sparsity.String(), Uniform.String()}, Default: Sparsity.String(),
	Help: "averaging of overlapping patches: sparsity (weight 1/(1 + non-zeros of the code)) or uniform",
}

// PipelineSettings are the settings of the pipeline (OptionsFrom reads
// them) with the spatial step stride and the coding iterations codeIters,
// whose defaults differ between the methods that run the pipeline.
func PipelineSettings(stride, codeIters denoise.Setting) []denoise.Setting {
	return []denoise.Setting{betaSetting, patchSetting, depthSetting, stride, atomsSetting, samplesSetting,
		itersSetting, innerItersSetting, codeIters, weightsSetting, seedSetting}
}

// OptionsFrom returns the pipeline's settings given in v (PipelineSettings);
// those not given are zero, their defaults.
func OptionsFrom(v denoise.Values) Options {
	return Options{
		Beta: v.Float(betaSetting), Patch: v.Int(patchSetting), Depth: v.Int(depthSetting), Stride: v.Int(strideSetting),
		Atoms: v.Int(atomsSetting), Samples: v.Int(samplesSetting), TrainIters: v.Int(itersSetting),
		InnerIters: v.Int(innerItersSetting), CodeIters: v.Int(codeItersSetting),
		Weighting: weightingNamed(v.String(weightsSetting)), Seed: v.Uint(seedSetting),
	}
}

// Spec declares the method 2dsc.
var Spec = denoise.Spec{
	Name:     "2dsc",
	Summary:  fmt.Sprintf("the paper's two-dimensional sparse coding of %d×%d×%d patches (local)", DefaultPatch, DefaultPatch, DefaultDepth),
	Settings: PipelineSettings(strideSetting, codeItersSetting),
	New:      func(c denoise.Config) (denoise.Method, error) { return newDenoiser(c, false) },
	// Peak RSS 396 MiB.
	BytesPerVoxel:   52,
	TakesDictionary: true,
	SavesDictionary: true,
	ExactStrips:     true,
	Train: &denoise.Trainer{
		Settings: []denoise.Setting{betaSetting, patchSetting, depthSetting, strideSetting, atomsSetting,
			samplesSetting, itersSetting, innerItersSetting, seedSetting},
		Train: train,
	},
}

// SCSpec declares the method sc: the pipeline with Vectorised set.
var SCSpec = denoise.Spec{
	Name: "sc",
	Summary: fmt.Sprintf("conventional sparse coding of the same patches as 2dsc, each a p²q-vector (the paper's baseline; %d atoms)",
		VectorisedAtoms(DefaultDepth)),
	Settings: replace(PipelineSettings(strideSetting, codeItersSetting), denoise.Atoms.WithDefault(fmt.Sprintf("%d × depth", DefaultAtoms))),
	New:      func(c denoise.Config) (denoise.Method, error) { return newDenoiser(c, true) },
	// Peak RSS 414 MiB.
	BytesPerVoxel: 54,
	ExactStrips:   true,
}

// replace returns decls with the setting of s's name replaced by s.
func replace(decls []denoise.Setting, s denoise.Setting) []denoise.Setting {
	for i, d := range decls {
		if d.Name == s.Name {
			decls[i] = s
		}
	}
	return decls
}

// newDenoiser builds the pipeline from c, vectorised for sc.
func newDenoiser(c denoise.Config, vectorised bool) (denoise.Method, error) {
	o := OptionsFrom(c.Values)
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
	o := OptionsFrom(v)
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
