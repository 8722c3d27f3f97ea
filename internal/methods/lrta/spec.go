package lrta

import "tdsc/internal/denoise"

// The settings of lrta.
var (
	ranksSetting = denoise.Setting{Name: "ranks", Kind: denoise.IntList, Lengths: []int{3}, Min: 1,
		Special: []denoise.Special{{Value: 0, Meaning: "chosen by AIC"}}, Default: "all chosen by AIC",
		Help: "the row, column and band subspace dimensions"}
	itersSetting = denoise.Iters.WithDefault(DefaultIters)
)

// Spec declares the method lrta.
var Spec = denoise.Spec{
	Name:     "lrta",
	Summary:  "low-rank tensor approximation with multiway Wiener filtering (Renard et al. 2008), ranks by AIC (paper's baseline)",
	Settings: []denoise.Setting{ranksSetting, itersSetting},
	New: func(c denoise.Config) (denoise.Method, error) {
		o := Options{Iters: c.Values.Int(itersSetting), Threads: c.Threads}
		copy(o.Ranks[:], c.Values.Ints(ranksSetting))
		return &Denoiser{Options: o, Report: c.Report}, nil
	},
	// Peak RSS 503 MiB.
	BytesPerVoxel: 65,
}
