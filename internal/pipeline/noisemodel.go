package pipeline

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"tdsc/internal/noise"
	"tdsc/internal/stages/sparsenoise"
)

// Mode is the setting of one part of the noise model: Auto (look for it
// and treat it when found), On (treat it whatever is found) or Off.
type Mode string

// The modes, in the spelling of the command line.
const (
	Auto Mode = "auto"
	On   Mode = "on"
	Off  Mode = "off"
)

// Modes lists the modes of a flag in the spelling of the command line:
// auto and off, and on too with allowOn. ParseMode takes them and shell
// completion offers them.
func Modes(allowOn bool) []string {
	if allowOn {
		return []string{string(Auto), string(On), string(Off)}
	}
	return []string{string(Auto), string(Off)}
}

// ParseMode reads a mode of the flag named flag; allowOn says whether the
// flag takes "on" as well as "auto" and "off".
func ParseMode(flag, s string, allowOn bool) (Mode, error) {
	modes := Modes(allowOn)
	if slices.Contains(modes, s) {
		return Mode(s), nil
	}
	return "", fmt.Errorf("--%s must be %s or %s, got %q", flag, strings.Join(modes[:len(modes)-1], ", "), modes[len(modes)-1], s)
}

// NoiseModel chooses which parts of the noise y = x + n + s a job looks
// for and treats (see package sparsenoise): the zero value looks for
// everything.
type NoiseModel struct {
	// Sparse: Auto fits the noise model of the whole cube (sparsenoise.Fit,
	// then DetectWith) and removes the sparse noise it finds (package
	// repair); Off assumes Gaussian noise alone.
	Sparse Mode
	// Stripes, Impulses and Dead switch off one kind of sparse noise
	// (Off): it is neither counted as found nor removed.
	Stripes, Impulses, Dead Mode
	// PerBand: On whitens the bands by their own σ; Off denoises with one
	// σ (the median of the bands' when sparse noise is removed); Auto
	// whitens when the bands' σ differ (BandsDiffer).
	PerBand Mode
	// Estimator names the estimator of the bands' σ for whitening
	// (noise.EstimateBands: mad, regression, min); empty for the sparse-
	// noise detector's σ, or mad when Sparse is Off.
	Estimator string
	// Signal chooses whether the noise is taken as signal-dependent:
	// SignalAuto (or the zero value) fits the bands' noise-level functions
	// (package noiselevel) and stabilises the variance when they say so,
	// SignalGaussian does not look, SignalPoissonGaussian stabilises with
	// Params or, without them, the fitted functions.
	Signal SignalModel
	// Params, when not nil, are the noise levels σ²(x) = A·x + B of a
	// sensor's calibration on the working scale, one for every band or
	// one per band: the noise is Poisson-Gaussian with them.
	Params []noise.Level
}

// SignalModel is the choice of the noise's dependence on the signal.
type SignalModel string

// The signal models, in the spelling of the command line.
const (
	SignalAuto            SignalModel = "auto"
	SignalGaussian        SignalModel = "gaussian"
	SignalPoissonGaussian SignalModel = "poisson-gaussian"
)

// SignalModels lists the signal models, the values of --noise-model.
func SignalModels() []string {
	return []string{string(SignalAuto), string(SignalGaussian), string(SignalPoissonGaussian)}
}

// ParseSignalModel reads the --noise-model flag.
func ParseSignalModel(s string) (SignalModel, error) {
	if slices.Contains(SignalModels(), s) {
		return SignalModel(s), nil
	}
	return "", fmt.Errorf("--noise-model must be %s, got %q", strings.Join(SignalModels(), ", "), s)
}

// signalAuto reports whether m chooses the signal model from the data
// (SignalAuto, or the zero value).
func (m NoiseModel) signalAuto() bool { return m.Signal == SignalAuto || m.Signal == "" }

// Path is the way a job denoised its cube.
type Path string

const (
	// PathGaussian: one σ for every band, the method run on the cube as
	// it is.
	PathGaussian Path = "one σ"
	// PathWhitened: the bands whitened by their σ, the method run at
	// their median (package bandwhiten).
	PathWhitened Path = "per-band σ"
	// PathRepair: sparse noise removed around the method (package
	// repair), missing voxels filled.
	PathRepair Path = "sparse noise removed"
	// PathFill: no sparse noise, but missing voxels: they are filled and
	// the method run once (package repair, one pass).
	PathFill Path = "missing voxels filled"
	// PathStabilised: signal-dependent noise, its variance stabilised
	// band by band (package vst), the stabilised cube denoised by one of
	// the paths above and the result inverted without bias.
	PathStabilised Path = "signal-dependent σ"
	// PathUnchanged: the noise is below detection (noise.BelowDetection)
	// and no σ was given: the input is written as it is.
	PathUnchanged Path = "unchanged, noise below detection"
)

// DifferRatio is the ratio of the largest to the smallest band σ above
// which the bands' noise is taken to differ. The detector's σ of i.i.d.
// Gaussian noise at σ = 5, 10, 30 and 50 on the shared CAVE scenes and
// crops differ by at most 1.17 (texture and a scene's own faint stripes
// inflate a quiet band a little), while noise drawn per band from {10,
// 30, 50, 70} differs by at least 70/50 = 1.4 unless every band drew the
// same level.
const DifferRatio = 1.3

// BandsDiffer reports whether the largest of sigmas is more than
// DifferRatio times the smallest.
func BandsDiffer(sigmas []float64) bool {
	lo, hi := slices.Min(sigmas), slices.Max(sigmas)
	return hi > DifferRatio*lo
}

// StripeSignificance is the offset, as a fraction of a band's σ, that
// one column of a striped band must reach for the band's stripes to call
// for their removal. Weaker stripes are left to the Gaussian denoiser:
// on i.i.d. Gaussian noise the detector reports stripes in the odd band
// of a CAVE scene (its own faint ones, or two or three columns of noise)
// with offsets up to 0.57σ, while the stripes of the mixed-noise cases
// reach at least 0.98σ in every band.
const StripeSignificance = 0.75

// significantStripes lists the striped bands of r that have a column
// offset of at least StripeSignificance times their σ.
func significantStripes(r *sparsenoise.Report) []int {
	var bands []int
	for _, b := range r.StripedBands() {
		for _, o := range r.StripeOffsets[b] {
			if math.Abs(o) >= StripeSignificance*r.Sigma[b] {
				bands = append(bands, b)
				break
			}
		}
	}
	return bands
}

// sparseFound reports whether r holds sparse noise worth removing:
// impulse or dead bands, or significant stripes.
func sparseFound(r *sparsenoise.Report) bool {
	return len(r.ImpulseBands()) > 0 || len(r.DeadBands()) > 0 || len(significantStripes(r)) > 0
}

// withParts returns r without the kinds of sparse noise m switches off.
// r is not changed.
func (m NoiseModel) withParts(r *sparsenoise.Report) *sparsenoise.Report {
	out := *r
	if m.Stripes == Off {
		out.StripeOffsets = make([][]float64, r.Bands)
	}
	var clear uint8
	if m.Impulses == Off {
		clear |= sparsenoise.Impulse
		out.Impulses = make([]int, r.Bands)
	}
	if m.Dead == Off {
		clear |= sparsenoise.Dead
		out.DeadColumns, out.DeadLines = make([][]int, r.Bands), make([][]int, r.Bands)
	}
	if clear != 0 {
		out.Mask = slices.Clone(r.Mask)
		for i, v := range out.Mask {
			out.Mask[i] = v &^ clear
		}
	}
	return &out
}

// choosePath decides how a job denoises: det is what the detector found
// (with m's parts switched off; nil when it did not run; with only the
// missing voxels when only they were looked for) and sigmaGiven
// whether σ was given. The note, if not empty, says a choice the user
// may not expect.
func (m NoiseModel) choosePath(det *sparsenoise.Report, sigmaGiven bool) (Path, string) {
	if det == nil {
		if m.PerBand == On {
			return PathWhitened, ""
		}
		return PathGaussian, ""
	}
	if sparseFound(det) {
		return PathRepair, ""
	}
	if det.Missing > 0 {
		return PathFill, ""
	}
	differ := BandsDiffer(det.Sigma)
	switch {
	case sigmaGiven:
		if differ && m.PerBand == Auto {
			return PathGaussian, "the bands' σ differ, but --sigma is used for every band (without it they would be whitened by their own)"
		}
		return PathGaussian, ""
	case m.PerBand == On, m.PerBand == Auto && differ:
		return PathWhitened, ""
	}
	return PathGaussian, ""
}
