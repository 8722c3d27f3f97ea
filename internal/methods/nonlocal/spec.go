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
		Help: "collaborative Wiener passes"}
	roundsSetting = denoise.Setting{Name: "rounds", Kind: denoise.Int, Min: 1, Help: "low-rank rounds"}
	rankSetting   = denoise.Setting{Name: "rank", Kind: denoise.Int, Min: 1, Special: []denoise.Special{{Value: 0, Meaning: "from the data"}},
		Help: "dimension of the spectral subspace, at most the number of bands"}
	groupSetting = denoise.Setting{Name: "group", Kind: denoise.Int, Min: 2, Help: "patches per low-rank group"}
)

// fields are the settings of nonlocal: those of its stages, then the
// pilot's, which are the 2DSC pipeline's with the pilot's own step and
// coding iterations.
var fields = append(denoise.Fields[Options]{
	denoise.Value(wienerSetting, func(o *Options) *int { return &o.Wiener }, DefaultWiener),
	denoise.Value(roundsSetting, func(o *Options) *int { return &o.Rounds }, DefaultRounds),
	denoise.Rule(rankSetting, func(o *Options) *int { return &o.Rank },
		fmt.Sprintf("from the data, at least %d for σ ≤ %d, else %d", lowNoiseRank, lowNoiseSigma, highNoiseRank), nil),
	denoise.Value(groupSetting, func(o *Options) *int { return &o.Group }, DefaultGroup),
}, denoise.Within(twodsc.Fields.With(
	// The pilot needs no step 1 nor 2: the stages after it do not gain
	// from them (0.00–0.02 dB, docs/results.md), and step 4 codes a
	// quarter of the patches of step 2; it never exceeds the patch.
	denoise.Rule(denoise.Stride, func(o *twodsc.Options) *int { return &o.Stride }, fmt.Sprint(pilotStride),
		func(o *twodsc.Options, _ float64) int { return min(pilotStride, o.Patch) }),
).With(
	// Nor 2dsc's 50 coding iterations: 30 change no final PSNR by more
	// than 0.004 dB on any full scene at σ = 10 or 50 and take 7–24 % off
	// the pilot (docs/results.md).
	denoise.Value(denoise.CodeIters, func(o *twodsc.Options) *int { return &o.CodeIters }, pilotCodeIters),
), func(o *Options) *twodsc.Options { return &o.Pilot })...)

// Spec declares the method nonlocal.
var Spec = denoise.Spec{
	Name:     "nonlocal",
	Summary:  "a 2DSC pilot, then collaborative Wiener and spectral-subspace low-rank stages on groups of similar patches",
	Settings: fields.Settings(),
	New: func(c denoise.Config) (denoise.Method, error) {
		o := fields.Options(c.Values)
		o.Threads = c.Threads
		return &Denoiser{Report: c.Report, Options: o}, nil
	},
	// Peak RSS 872 MiB when declared; 615–699 MiB since the faster
	// default (docs/results.md), kept as a margin for the strips.
	BytesPerVoxel: 113,
}
