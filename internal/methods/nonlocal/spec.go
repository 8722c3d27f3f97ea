package nonlocal

import (
	"fmt"

	"tdsc/internal/denoise"
	"tdsc/internal/methods/twodsc"
)

// The settings of the nonlocal stages; the pilot's are those of the 2DSC
// pipeline, with the pilot's own step.
var (
	wienerSetting = denoise.Setting{Name: "wiener", Kind: denoise.Int, Min: 1, Special: []denoise.Special{{Value: -1, Meaning: "none"}},
		Default: fmt.Sprint(DefaultWiener), Help: "collaborative Wiener passes"}
	roundsSetting = denoise.Setting{Name: "rounds", Kind: denoise.Int, Min: 1, Default: fmt.Sprint(DefaultRounds), Help: "low-rank rounds"}
	rankSetting   = denoise.Setting{Name: "rank", Kind: denoise.Int, Min: 1, Special: []denoise.Special{{Value: 0, Meaning: "from the data"}},
		Default: fmt.Sprintf("from the data, at least %d for σ ≤ %d, else %d", lowNoiseRank, lowNoiseSigma, highNoiseRank),
		Help:    "dimension of the spectral subspace, at most the number of bands"}
	groupSetting = denoise.Setting{Name: "group", Kind: denoise.Int, Min: 2, Default: fmt.Sprint(DefaultGroup), Help: "patches per low-rank group"}
)

// Spec declares the method nonlocal.
var Spec = denoise.Spec{
	Name:    "nonlocal",
	Summary: "a 2DSC pilot, then collaborative Wiener and spectral-subspace low-rank stages on groups of similar patches",
	Settings: append([]denoise.Setting{wienerSetting, roundsSetting, rankSetting, groupSetting},
		twodsc.PipelineSettings(denoise.Stride.WithDefault(pilotStride), denoise.CodeIters.WithDefault(pilotCodeIters))...),
	New: func(c denoise.Config) (denoise.Method, error) {
		return &Denoiser{Report: c.Report, Options: Options{
			Pilot: twodsc.OptionsFrom(c.Values), Threads: c.Threads,
			Wiener: c.Values.Int(wienerSetting), Rounds: c.Values.Int(roundsSetting),
			Rank: c.Values.Int(rankSetting), Group: c.Values.Int(groupSetting),
		}}, nil
	},
	// Peak RSS 872 MiB when declared; 615–699 MiB since the faster
	// default (docs/results.md), kept as a margin for the strips.
	BytesPerVoxel: 113,
}
