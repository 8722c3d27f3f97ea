package tensr

import (
	"fmt"

	"tdsc/internal/denoise"
)

// The settings of tensr, with its defaults (Defaults); their rules are
// the ones Validate applies.
var (
	patchSetting  = denoise.Patch.WithDefault(DefaultPatch)
	depthSetting  = denoise.Depth.WithDefault(DefaultDepth)
	strideSetting = denoise.Stride.WithDefault(DefaultStride)
	// atomsSetting takes one count for the three modes or one per mode.
	atomsSetting = denoise.Setting{Name: "atoms", Kind: denoise.IntList, Lengths: []int{1, 3}, Min: 1,
		Default: fmt.Sprintf("%d per mode", DefaultAtoms),
		Help:    "atoms of the column, row and band dictionaries: one count for all three, or R1,R2,R3"}
	betaSetting      = denoise.Beta.WithDefault(fmt.Sprintf("%gσ", betaPerSigma))
	itersSetting     = denoise.Iters.WithDefault(DefaultIters)
	codeItersSetting = denoise.CodeIters.WithDefault(DefaultCodeIters)
	samplesSetting   = denoise.Samples.WithDefault(DefaultSamples)
	seedSetting      = denoise.Seed.WithDefault(DefaultSeed)
)

// Spec declares the method tensr.
var Spec = denoise.Spec{
	Name: "tensr",
	Summary: fmt.Sprintf("TenSR (Qi et al. 2015): %d×%d×%d patches over separable per-mode dictionaries, sparse cores (paper's baseline)",
		DefaultPatch, DefaultPatch, DefaultDepth),
	Settings: []denoise.Setting{patchSetting, depthSetting, strideSetting, atomsSetting, betaSetting, itersSetting,
		codeItersSetting, samplesSetting, seedSetting},
	New: func(c denoise.Config) (denoise.Method, error) {
		v := c.Values
		o := Options{
			Patch: v.Int(patchSetting), Depth: v.Int(depthSetting), Stride: v.Int(strideSetting), Beta: v.Float(betaSetting),
			Iters: v.Int(itersSetting), CodeIters: v.Int(codeItersSetting), Samples: v.Int(samplesSetting),
			Seed: v.Uint(seedSetting), Threads: c.Threads,
		}
		switch atoms := v.Ints(atomsSetting); len(atoms) {
		case 1:
			o.Atoms = [3]int{atoms[0], atoms[0], atoms[0]}
		case 3:
			o.Atoms = [3]int(atoms)
		}
		return &Denoiser{Options: o, Report: c.Report}, nil
	},
	// Peak RSS 356 MiB.
	BytesPerVoxel: 46,
}
