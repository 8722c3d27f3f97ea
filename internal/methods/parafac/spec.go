package parafac

import "tdsc/internal/denoise"

// The settings of parafac.
var (
	rankSetting = denoise.Setting{Name: "rank", Kind: denoise.Int, Min: 1,
		Special: []denoise.Special{{Value: 0, Meaning: "by the discrepancy principle"}},
		Default: "the smallest whose residual reaches the noise", Help: "the CP rank"}
	itersSetting = denoise.Iters.WithDefault(DefaultIters)
	seedSetting  = denoise.Seed.WithDefault(defaultSeed)
)

// Spec declares the method parafac.
var Spec = denoise.Spec{
	Name:     "parafac",
	Summary:  "PARAFAC/CP decomposition of the cube (Liu et al. 2012), rank by the discrepancy principle (paper's baseline; slow)",
	Settings: []denoise.Setting{rankSetting, itersSetting, seedSetting},
	New: func(c denoise.Config) (denoise.Method, error) {
		return &Denoiser{Report: c.Report, Options: Options{
			Rank: c.Values.Int(rankSetting), Iters: c.Values.Int(itersSetting), Seed: c.Values.Uint(seedSetting), Threads: c.Threads,
		}}, nil
	},
	// Peak RSS 542 MiB.
	BytesPerVoxel: 70,
}
