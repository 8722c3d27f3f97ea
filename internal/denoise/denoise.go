// Package denoise is the seam between tdsc's command line and its denoising
// methods: every method is a Method, found by name in the registry that
// Lookup and Names read, built from a Config whose zero fields mean "the
// method's default".
//
// A method lives in its own package (twodsc for the paper's 2DSC pipeline,
// nonlocal for the nonlocal spectral-subspace denoiser); this package only
// names them, says which settings each reads, and resolves the noise level
// shared by all of them.
package denoise

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/option"
	"tdsc/internal/report"
)

// Method denoises cubes. Denoise returns the estimate of the clean cube
// for noise of standard deviation sigma > 0 on the [0, 255] scale, and
// stops with ctx.Err() when ctx is cancelled; the result does not depend on
// the number of threads. Settings lists what it ran with, for the output's
// metadata, once Denoise has resolved its defaults for sigma. Check
// returns the error Denoise would return for settings that cannot be used
// at noise level sigma on a cube of the given size, without the cube, so
// that a batch refuses them before it runs anything.
type Method interface {
	Name() string
	Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, error)
	Settings(sigma float64) []Setting
	Check(sigma float64, height, width, bands int) error
}

// Setting is one name = value pair of a method's settings.
type Setting struct{ Name, Value string }

// Spec describes a method of the registry.
type Spec struct {
	// Name is what --method spells.
	Name string
	// Summary is one line for help texts.
	Summary string
	// Options are the Config settings the method reads, by their flag
	// spelling; a setting not listed does not apply to the method.
	Options []string
	// New builds the method from c.
	New func(c Config) (Method, error)
	// BytesPerVoxel is about the peak memory of a run per voxel of the
	// cube: the peak RSS of tdsc denoise on the full 512×512×31 balloons
	// scene at σ = 30 (docs/results.md) over its voxels, rounded up. It
	// decides when a cube is denoised in strips (package tile) and how
	// tall they are.
	BytesPerVoxel float64
}

// Default is the name of the method used when none is named.
const Default = "nonlocal"

// Lookup returns the method spec called name, or an *option.Error for the
// field "method" that lists the known names.
func Lookup(name string) (Spec, error) {
	for _, s := range registry() {
		if s.Name == name {
			return s, nil
		}
	}
	return Spec{}, option.Errorf("method", name, "unknown method %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Names returns the names of every method, in the registry's order.
func Names() []string {
	var names []string
	for _, s := range registry() {
		names = append(names, s.Name)
	}
	return names
}

// Applies reports whether the setting opt (flag spelling) is read by s.
func (s Spec) Applies(opt string) bool { return slices.Contains(s.Options, opt) }

// ResolveSigma returns the noise level to denoise with: sigma when it is
// positive, else the level m knows (a 2dsc dictionary file records the σ
// it was learned for), else the estimate of noise.EstimateMedian, which it
// says through r. It is an *option.Error for "sigma" when sigma is negative
// or not finite, or when no positive level can be had.
func ResolveSigma(noisy *msi.Cube, sigma float64, m Method, r report.Reporter) (float64, error) {
	if sigma != 0 {
		if !(sigma > 0) || math.IsInf(sigma, 1) {
			return 0, option.Errorf("sigma", sigma, "sigma must be a positive number, got %v", sigma)
		}
		return sigma, nil
	}
	if k, ok := m.(interface{ KnownSigma() float64 }); ok && k.KnownSigma() > 0 {
		return k.KnownSigma(), nil
	}
	s := noise.EstimateMedian(noisy)
	report.OrDiscard(r).Logf("estimated σ = %.2f (median over bands of the MAD of the finest diagonal wavelet band / 0.6745)", s)
	if !(s > 0) {
		return 0, option.Errorf("sigma", s, "could not estimate the noise level of the input (is it noise-free?): give it")
	}
	return s, nil
}

// ResolveTrainSigma returns the noise level to learn a 2DSC dictionary
// with: as ResolveSigma (without a method), except that when no level can
// be had and beta is given it returns 0, since β is all that learning needs
// (σ then sets only the default step).
func ResolveTrainSigma(noisy *msi.Cube, sigma, beta float64, r report.Reporter) (float64, error) {
	s, err := ResolveSigma(noisy, sigma, nil, r)
	if err != nil && sigma == 0 && beta != 0 {
		return 0, nil
	}
	return s, err
}

// formatSettings turns name/value pairs into Settings.
func formatSettings(pairs ...any) []Setting {
	out := make([]Setting, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Setting{Name: fmt.Sprint(pairs[i]), Value: fmt.Sprint(pairs[i+1])})
	}
	return out
}
