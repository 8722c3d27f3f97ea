package lrta

import "tdsc/internal/denoise"

// fields are the settings of lrta.
var fields = denoise.Fields[Options]{
	denoise.Triple(denoise.Setting{Name: "ranks", Kind: denoise.IntList, Lengths: []int{3}, Min: 1,
		Special: []denoise.Special{{Value: 0, Meaning: "chosen by AIC"}}, Help: "the row, column and band subspace dimensions"},
		func(o *Options) *[3]int { return &o.Ranks }, "all chosen by AIC", 0),
	denoise.Value(denoise.Iters, func(o *Options) *int { return &o.Iters }, DefaultIters),
}

// ranksSetting is the setting of Options.Ranks, for its errors.
var ranksSetting = fields[0].Setting

// Spec declares the method lrta.
var Spec = denoise.Spec{
	Name:     "lrta",
	Summary:  "low-rank tensor approximation with multiway Wiener filtering (Renard et al. 2008), ranks by AIC (paper's baseline)",
	Settings: fields.Settings(),
	New: func(c denoise.Config) (denoise.Method, error) {
		o := fields.Options(c.Values)
		o.Threads = c.Threads
		return &Denoiser{Options: o, Report: c.Report}, nil
	},
	// Peak RSS 503 MiB.
	BytesPerVoxel: 65,
}
