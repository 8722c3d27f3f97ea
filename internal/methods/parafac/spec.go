package parafac

import "tdsc/internal/denoise"

// rankSetting is the setting of Options.Rank.
var rankSetting = denoise.Setting{Name: "rank", Kind: denoise.Int, Min: 1,
	Special: []denoise.Special{{Value: 0, Meaning: "by the discrepancy principle"}}, Help: "the CP rank"}

// fields are the settings of parafac.
var fields = denoise.Fields[Options]{
	denoise.Rule(rankSetting, func(o *Options) *int { return &o.Rank }, "the smallest whose residual reaches the noise", nil),
	denoise.Value(denoise.Iters, func(o *Options) *int { return &o.Iters }, DefaultIters),
	denoise.Value(denoise.Seed, func(o *Options) *uint64 { return &o.Seed }, defaultSeed),
}

// Spec declares the method parafac.
var Spec = denoise.Spec{
	Name:     "parafac",
	Summary:  "PARAFAC/CP decomposition of the cube (Liu et al. 2012), rank by the discrepancy principle (paper's baseline; slow)",
	Settings: fields.Settings(),
	New: func(c denoise.Config) (denoise.Method, error) {
		o := fields.Options(c.Values)
		o.Threads = c.Threads
		return &Denoiser{Report: c.Report, Options: o}, nil
	},
	// Peak RSS 542 MiB.
	BytesPerVoxel: 70,
}
