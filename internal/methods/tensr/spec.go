package tensr

import (
	"fmt"

	"tdsc/internal/denoise"
)

// fields are the settings of tensr, with its defaults (Defaults); Resolve
// and Validate apply them.
var fields = denoise.Fields[Options]{
	denoise.Value(denoise.Patch, func(o *Options) *int { return &o.Patch }, DefaultPatch),
	denoise.Value(denoise.Depth, func(o *Options) *int { return &o.Depth }, DefaultDepth),
	// The default step never exceeds the patch.
	denoise.Rule(denoise.Stride, func(o *Options) *int { return &o.Stride }, fmt.Sprint(DefaultStride),
		func(o *Options, sigma float64) int { return min(StrideFor(sigma), o.Patch) }),
	// The atoms take one count for the three modes or one per mode.
	denoise.Triple(denoise.Setting{Name: "atoms", Kind: denoise.IntList, Lengths: []int{1, 3}, Min: 1,
		Help: "atoms of the column, row and band dictionaries: one count for all three, or R1,R2,R3"},
		func(o *Options) *[3]int { return &o.Atoms }, fmt.Sprintf("%d per mode", DefaultAtoms), DefaultAtoms),
	denoise.Rule(denoise.Beta, func(o *Options) *float64 { return &o.Beta }, fmt.Sprintf("%gσ", betaPerSigma),
		func(_ *Options, sigma float64) float64 { return BetaFor(sigma) }),
	denoise.Value(denoise.Iters, func(o *Options) *int { return &o.Iters }, DefaultIters),
	denoise.Value(denoise.CodeIters, func(o *Options) *int { return &o.CodeIters }, DefaultCodeIters),
	denoise.Value(denoise.Samples, func(o *Options) *int { return &o.Samples }, DefaultSamples),
	denoise.Value(denoise.Seed, func(o *Options) *uint64 { return &o.Seed }, DefaultSeed),
}

// atomsSetting is the setting of Options.Atoms, for its errors.
var atomsSetting = fields[3].Setting

// Spec declares the method tensr.
var Spec = denoise.Spec{
	Name: "tensr",
	Summary: fmt.Sprintf("TenSR (Qi et al. 2015): %d×%d×%d patches over separable per-mode dictionaries, sparse cores (paper's baseline)",
		DefaultPatch, DefaultPatch, DefaultDepth),
	Settings: fields.Settings(),
	New: func(c denoise.Config) (denoise.Method, error) {
		o := fields.Options(c.Values)
		o.Threads = c.Threads
		return &Denoiser{Options: o, Report: c.Report}, nil
	},
	// Peak RSS 356 MiB.
	BytesPerVoxel: 46,
}
