package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/option"
	"tdsc/internal/report"
	"tdsc/internal/stages/bandwhiten"
	"tdsc/internal/stages/noiselevel"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/stages/subspace"
	"tdsc/internal/stages/vst"
	"tdsc/internal/tile"
)

// FitRatio bounds how far the noise σ of a stabilised cube may be from
// the transform's Scale for the Poisson-Gaussian model to fit: a σ more
// than FitRatio times larger or smaller is an error. With the right noise
// levels the detector's σ of the stabilised shared CAVE crops is within
// 1.2 of it (texture inflates it a little); a gain or read-noise variance
// off by a factor of 4 or more, or given in the input's units instead of
// the working scale's, falls outside.
const FitRatio = 2.0

// stabiliser is the variance-stabilising transform of a job and where its
// noise levels came from ("given" or "fitted").
type stabiliser struct {
	*vst.Transform
	source string
}

// stabiliser decides whether the job stabilises the variance of noisy,
// and returns the transform (nil for the Gaussian model): with the known
// levels of NoiseModel.Params, else with the noise-level functions
// fitted, when the model is Poisson-Gaussian or when it is automatic and
// the fit finds the noise signal-dependent. stream is the noise-level
// functions and band means streamed in the noise model's pass (detect);
// when it is nil (the sparse noise was not looked for) they are
// streamed here over the same windows of lines (streamedLevels), with
// the impulses and dead pixels of det (nil: none) left out. A given σ
// keeps the Gaussian model, said on log when the noise looks
// signal-dependent.
func (j *Job) stabiliser(noisy *msi.Cube, det *sparsenoise.Report, stream *noiselevel.Stream, log report.Reporter) (*stabiliser, error) {
	if j.Noise.Signal == SignalGaussian {
		return nil, nil
	}
	if stream != nil {
		return j.streamedStabiliser(noisy.Bands, stream, log)
	}
	means := func() []float64 { return vst.Means(withoutSparse(noisy, det)) }
	return j.chooseStabiliser(noisy.Bands, means, func() *noiselevel.Report {
		var mask []uint8
		if det != nil {
			mask = sparseMask(det)
		}
		t := time.Now()
		stream := streamedLevels(noisy, mask)
		fit := stream.Report()
		log.Logf("%s (fitted over windows of lines%s in %.1f s)", fit.Summary(), strideNote(stream.Stride()), time.Since(t).Seconds())
		return fit
	}, log)
}

// streamedStabiliser is chooseStabiliser with the band means and the
// noise-level functions that stream holds (noiseModel).
func (j *Job) streamedStabiliser(bands int, stream *noiselevel.Stream, log report.Reporter) (*stabiliser, error) {
	return j.chooseStabiliser(bands, stream.Means, func() *noiselevel.Report {
		r := stream.Report()
		log.Logf("%s (fitted over the noise model's windows%s)", r.Summary(), strideNote(stream.Stride()))
		return r
	}, log)
}

// streamedLevels returns the noise-level functions of the cube c, in
// memory, fitted as the noise model's pass fits them (noiseModel): a
// noiselevel.Stream given the noise model's windows of lines, the voxels
// of mask (nil: none) left out.
//
// Why not noiselevel.Estimate on the whole cube: the stream keeps a
// subsample of a large cube's windows and finds stuck values window by
// window, and its functions are not Estimate's. On five 256×256 and
// 512×512 cubes of 224 bands with Poisson-Gaussian noise (2, 16) and
// QRNN3D's case 5, the strips ended 0.006–0.19 dB above the whole runs
// that fitted with Estimate; with the streamed functions the whole runs
// rose by 0.002–0.12 dB, to within 0.05 dB of their strips on four of
// them (0.17 on the fifth), and the 256×256 cube without the mixture
// fell by 0.0003 dB to its strips' PSNR; the fifteen 31-band cubes of
// scripts/poisson.sh, whose streams keep every window, kept their bytes
// (docs/results.md).
func streamedLevels(c *msi.Cube, mask []uint8) *noiselevel.Stream {
	window := modelWindowLines(c.Height, c.Width, c.Bands)
	stream := noiselevel.NewStream(c.Height, c.Width, c.Bands)
	for y0 := 0; y0 < c.Height; y0 += window {
		n := min(window, c.Height-y0)
		var lines []uint8
		if mask != nil {
			lines = sparsenoise.CropMask(mask, c, y0, n)
		}
		stream.Add(c.Crop(y0, 0, 0, n, c.Width, c.Bands), lines)
	}
	return stream
}

// stabilisedModel returns the noise model of a stabilised cube, whose
// lines (with the impulse and dead pixels of the input missing) lines
// gives, as every run fits it, whole or in strips: its σ and stripes
// fitted in windows of window lines (sparsenoise.FitCubeWide), its
// impulses, dead columns and lines, missing voxels and Mask those of
// input, the input's model (withNoiseOf). It returns the fit's time.
func (j *Job) stabilisedModel(ctx context.Context, lines tile.Reader, window int, input *sparsenoise.Report, log report.Reporter) (*sparsenoise.Report, time.Duration, error) {
	fitted, took, err := j.fitModel(ctx, lines, "noise model of the stabilised cube", func(ctx context.Context, r tile.Reader, progress func(lines, pass int)) (*sparsenoise.Report, error) {
		return sparsenoise.FitCubeWide(ctx, r, window, progress)
	}, log)
	if err != nil {
		return nil, 0, err
	}
	return withNoiseOf(input, fitted), took, nil
}

// chooseStabiliser is stabiliser's decision for a cube of the given
// bands, whose band means (with the sparse noise left out) means returns
// and whose noise-level functions fit fits (and says on log), each called
// only when needed. The model is not SignalGaussian.
func (j *Job) chooseStabiliser(bands int, means func() []float64, fit func() *noiselevel.Report, log report.Reporter) (*stabiliser, error) {
	m := j.Noise
	if m.Params != nil {
		levels, err := noise.ExpandLevels("noise-params", m.Params, bands)
		if err != nil {
			return nil, err
		}
		a, b := make([]float64, len(levels)), make([]float64, len(levels))
		for band, l := range levels {
			if l.A == 0 && l.B == 0 {
				return nil, option.Errorf("noise-params", l.String(), "band %d: a = 0 and b = 0 is no noise", band+1)
			}
			a[band], b[band] = l.A, l.B
		}
		log.Logf("noise: Poisson-Gaussian, σ²(x) = a·x + b as given: %s", noise.Levels(levels))
		return &stabiliser{vst.FromMeans(means(), a, b), "given"}, nil
	}
	found := fit()
	switch {
	case j.Sigma != 0:
		if found.SignalDependent {
			log.Logf("the given --sigma is one σ for every value: the noise is denoised as Gaussian (without --sigma its variance would be stabilised)")
		}
		return nil, nil
	case !found.SignalDependent && m.signalAuto():
		return nil, nil
	case !found.SignalDependent:
		log.Logf("--noise-model %s: stabilising with the fitted functions, although they are not signal-dependent", m.Signal)
	}
	a, b := make([]float64, bands), make([]float64, bands)
	functions := found.Functions
	if pooled, ok := pooledFunction(found.Bands); ok {
		log.Logf("the bands' fits agree with one function within their standard errors: stabilising every band with a = %.4g, b = %.4g", pooled.A, pooled.B)
		functions = slices.Repeat([]noiselevel.Function{pooled}, bands)
	}
	for band, f := range functions {
		a[band], b[band] = f.A, f.B
		if a[band] == 0 && b[band] == 0 {
			// A band without measurable noise: stabilised as if of unit
			// variance, which only scales it.
			b[band] = 1
		}
	}
	return &stabiliser{vst.FromMeans(means(), a, b), "fitted"}, nil
}

// withoutSparse returns noisy with the impulses and dead pixels of det
// (nil: none) missing (NaN), so that the transform's band means leave
// them out: salt and pepper on half of a band's pixels would move its
// mean far from the data's. noisy itself when there are none.
func withoutSparse(noisy *msi.Cube, det *sparsenoise.Report) *msi.Cube {
	if det == nil {
		return noisy
	}
	mask := sparseMask(det)
	if mask == nil {
		return noisy
	}
	c := noisy.Clone()
	for i, m := range mask {
		if m != 0 {
			c.Data[i] = math.NaN()
		}
	}
	return c
}

// countSignal returns m counting the spectral directions that hold signal
// in input, the cube before its transform, under the noise-level functions
// of s (subspace.SignalDirections, with the impulses and dead pixels of
// det left out), when m reads such a count from the data
// (denoise.SignalCounter); m itself otherwise, and when too few pixels are
// whole to count them (subspace.ErrFewPixels: impulses in many bands). On
// the stabilised cube the method would count more: the transform,
// nonlinear in every band, spreads the few spectral components of a scene
// of dark background and bright objects over many directions (superballs' 160×160 crop at a = 2, b = 16:
// rank 27 on the stabilised cube against 10 on its i.i.d. twin, whose
// extra directions keep noise and take twice the time).
func (s *stabiliser) countSignal(m denoise.Method, input *msi.Cube, det *sparsenoise.Report, log report.Reporter) (denoise.Method, error) {
	counter, ok := m.(denoise.SignalCounter)
	if !ok {
		return m, nil
	}
	k, err := subspace.SignalDirections(withoutSparse(input, det), s.A, s.B, SignalZ)
	if errors.Is(err, subspace.ErrFewPixels) {
		log.Logf("too few pixels without impulses, dead or missing voxels to count the directions of signal in the input: the method counts them on the stabilised cube")
		return m, nil
	} else if err != nil {
		return nil, err
	}
	log.Logf("spectral directions holding signal in the input under its noise-level functions: %d", k)
	return counter.WithSignalDirections(k), nil
}

// SignalZ is how many standard errors above zero the signal's power along
// a spectral direction must be for countSignal to count it: that of the
// nonlocal method's own count (nonlocal.ChooseRank).
const SignalZ = 3

// pooledFunction returns the inverse-variance weighted mean of the fitted
// bands' functions, and whether every band agrees with it: the sum of
// the squared deviations of a, and that of b, over their standard errors
// within PoolChi2 standard deviations of a χ² with n − 1 degrees of
// freedom (n the fitted bands with a standard error). A band's own fit
// carries its estimation error into its transform, and bands that differ
// only by that error make the stabilised cube's spectra jagged where the
// clean ones are smooth (224 bands of the chart crop at a = 2, b = 16:
// 49.05 dB with each band's fit, 49.75 with the true a and b, 49.85 on the
// i.i.d. twin); a sensor whose bands truly differ keeps its own.
func pooledFunction(bands []noiselevel.Band) (noiselevel.Function, bool) {
	pool := func(value func(noiselevel.Band) (float64, float64)) (float64, bool) {
		var sw, swx float64
		n := 0
		for _, band := range bands {
			if v, se := value(band); band.Fitted && se > 0 {
				w := 1 / (se * se)
				sw, swx = sw+w, swx+w*v
				n++
			}
		}
		if n < 2 {
			return 0, false
		}
		mean := swx / sw
		var chi2 float64
		for _, band := range bands {
			if v, se := value(band); band.Fitted && se > 0 {
				chi2 += (v - mean) * (v - mean) / (se * se)
			}
		}
		df := float64(n - 1)
		return mean, chi2 <= df+PoolChi2*math.Sqrt(2*df)
	}
	a, okA := pool(func(b noiselevel.Band) (float64, float64) { return b.A, b.SEA })
	b, okB := pool(func(b noiselevel.Band) (float64, float64) { return b.B, b.SEB })
	return noiselevel.Function{A: a, B: b}, okA && okB
}

// PoolChi2 is the number of standard deviations of its χ² distribution
// above its mean at which the bands' fits no longer agree with one
// function (see pooledFunction): about the 99.9th percentile for many
// bands.
const PoolChi2 = 3

// sparseMask returns the impulses and dead pixels of det, the voxels a
// noise-level fit leaves out, or nil when it found none.
func sparseMask(det *sparsenoise.Report) []uint8 {
	var mask []uint8
	for i, v := range det.Mask {
		if bits := v & (sparsenoise.Impulse | sparsenoise.Dead); bits != 0 {
			if mask == nil {
				mask = make([]uint8, len(det.Mask))
			}
			mask[i] = bits
		}
	}
	return mask
}

// checkFit returns an error when the noise σ of the stabilised cube work
// (the median of the model's band σ in det, else noise.EstimateMedian's)
// is more than FitRatio times from the Scale the model gives it.
func (s *stabiliser) checkFit(work *msi.Cube, det *sparsenoise.Report) error {
	var sigma float64
	if det != nil && det.Sigma != nil {
		sigma = bandwhiten.Reference(det.Sigma, bandwhiten.ReferenceMedian)
	} else {
		sigma = noise.EstimateMedian(work)
	}
	ratio := sigma / s.Scale
	if ratio <= FitRatio && ratio >= 1/FitRatio {
		return nil
	}
	hint := "check --noise-params: they are on the working [0, 255] scale"
	if s.source == "fitted" {
		hint = "give --noise-model gaussian, or the sensor's --noise-params"
	}
	return fmt.Errorf("the Poisson-Gaussian model with the %s a and b does not fit: the stabilised cube's noise σ is %.4g, %.2f times the %.4g the model gives it (%s)",
		s.source, sigma, ratio, s.Scale, hint)
}
