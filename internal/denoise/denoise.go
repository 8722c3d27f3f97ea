// Package denoise is the seam between tdsc's command line and its denoising
// methods. A method lives in one package under internal/methods and
// declares itself there with a Spec: its name, summary, settings
// (Setting: name, type, default, rule, help; each declared once, with the
// field of the method's options that holds it, as a Field), memory per
// voxel and capabilities (the dictionary settings; strips, by
// implementing Tiler). The registry (package methods) lists the Specs; the
// command line builds its flags, help, shell completion and errors from
// them, and turns flags into a Method with Spec.Parse and Spec.Build.
//
// This package holds what every method shares: the Method interface and
// the Result of a run, the settings several methods read (Beta, Patch, …)
// with their rules, and the noise level, which is resolved here, once,
// before a run (CheckSigma, ResolveSigma) and reaches a method only as
// the argument of Denoise.
package denoise

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"

	"tdsc/internal/dictfile"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/option"
	"tdsc/internal/report"
)

// Method denoises cubes. A method value holds its settings and nothing
// else: a run keeps nothing for the next, what it learned or chose is in
// its Result, and every method of the registry is safe for concurrent use
// by several goroutines.
type Method interface {
	// Denoise returns the estimate of the clean cube for noise of standard
	// deviation sigma on the [0, 255] scale (positive and finite: the
	// caller checks it with CheckSigma), and what the run used and learned.
	// It checks the settings against the cube, stops with ctx.Err() when
	// ctx is cancelled, and its result does not depend on the number of
	// threads.
	Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, Result, error)
	// Check returns the error Denoise would return for the method's
	// settings at noise level sigma on a cube of height×width×bands,
	// without the cube, so that a batch refuses them before it runs
	// anything. Settings are validated by one rule each (Setting), here
	// and in Denoise alike.
	Check(sigma float64, height, width, bands int) error
}

// Result is what a run of a method used and learned.
type Result struct {
	// Settings are the settings the run used, defaults resolved and what
	// it chose from the data (such as a rank), for the output's metadata.
	Settings []Param
	// Dictionary is the dictionary the run learned, for a method that
	// saves it (Spec.SavesDictionary); nil when it was given one.
	Dictionary *dictfile.Model
}

// Param is one name = value pair of a Result's settings.
type Param struct{ Name, Value string }

// Params turns name, value, name, value, … into Params, each value spelled
// by fmt.Sprint.
func Params(pairs ...any) []Param {
	out := make([]Param, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, Param{Name: fmt.Sprint(pairs[i]), Value: fmt.Sprint(pairs[i+1])})
	}
	return out
}

// Spec declares a method of the registry.
type Spec struct {
	// Name is what --method spells.
	Name string
	// Summary is one line for help texts.
	Summary string
	// Settings are the settings the method reads. A flag that is not one
	// of them (or of the capabilities' settings: Flags) does not apply to
	// the method.
	Settings []Setting
	// New builds the method from c. Its settings are checked by Check and
	// Denoise (with the noise level and the cube); New refuses only what
	// cannot be built, such as settings that contradict the given
	// dictionary.
	New func(c Config) (Method, error)
	// BytesPerVoxel is about the peak memory of a run per voxel of the
	// cube: the peak RSS of tdsc denoise on the full 512×512×31 balloons
	// scene at σ = 30 (docs/results.md) over its voxels, rounded up. It
	// decides when a cube is denoised in strips (package tile) and how
	// tall they are.
	BytesPerVoxel float64

	// TakesDictionary: the method codes with a given dictionary
	// (Config.Dictionary, the setting Dict) instead of learning one.
	TakesDictionary bool
	// SavesDictionary: a run returns the dictionary it learned in
	// Result.Dictionary, for the setting SaveDict.
	SavesDictionary bool
	// Train, if not nil, learns the method's dictionary on its own (tdsc
	// train).
	Train *Trainer
}

// Config is what a method is built from.
type Config struct {
	// Values are the settings given (zero: the method's default).
	Values Values
	// Dictionary is a dictionary to code with instead of learning one,
	// for a method that TakesDictionary; nil to learn one.
	Dictionary *dictfile.Model
	Env
}

// Env is what a method is built with besides its settings.
type Env struct {
	// Threads is the number of worker goroutines (0: GOMAXPROCS); the
	// output does not depend on it.
	Threads int
	// Report receives progress and log lines (nil: none).
	Report report.Reporter
	// CreatedBy names the program in files a method writes.
	CreatedBy string
}

// Trainer learns the dictionary of a method that takes one, on its own.
type Trainer struct {
	// Settings are the settings learning reads (a subset of the method's).
	Settings []Setting
	// Train learns a dictionary from the cube c for noise level sigma (0
	// when it is unknown and β is given: σ then sets only the defaults
	// that follow it), reporting its progress through env.Report.
	Train func(ctx context.Context, c *msi.Cube, v Values, sigma float64, env Env) (*dictfile.Model, error)
}

// ExactStrips reports whether the method's strip-by-strip result is its
// whole-cube result bit for bit: whether it is a Tiler, as built with its
// defaults.
func (s Spec) ExactStrips() bool {
	m, err := s.New(Config{})
	if err != nil {
		panic(fmt.Sprintf("denoise: method %s cannot be built with its defaults: %v", s.Name, err))
	}
	_, ok := m.(Tiler)
	return ok
}

// Flags returns the settings the method reads: its Settings, and Dict and
// SaveDict by its capabilities.
func (s Spec) Flags() []Setting {
	out := slices.Clone(s.Settings)
	if s.TakesDictionary {
		out = append(out, Dict)
	}
	if s.SavesDictionary {
		out = append(out, SaveDict)
	}
	return out
}

// Parse reads the settings given (flag name → value as typed) by the
// method's declarations. A flag the method does not read is an error
// that names every such flag and the ones it reads; a value its
// declaration refuses is an *option.Error.
func (s Spec) Parse(given map[string]string) (Values, error) {
	return parse(s.Name, s.Flags(), given)
}

// ParseSettings is Parse for the settings decls, such as a Trainer's.
func ParseSettings(decls []Setting, given map[string]string) (Values, error) {
	return parse("", decls, given)
}

func parse(method string, decls []Setting, given map[string]string) (Values, error) {
	find := func(name string) int { return slices.IndexFunc(decls, func(d Setting) bool { return d.Name == name }) }
	var stray []string
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if find(name) < 0 {
			stray = append(stray, "--"+name)
		}
	}
	if len(stray) > 0 {
		names := make([]string, len(decls))
		for i, d := range decls {
			names[i] = "--" + d.Name
		}
		verb := "does"
		if len(stray) > 1 {
			verb = "do"
		}
		return Values{}, fmt.Errorf("%s %s not apply to --method %s (it reads %s)", strings.Join(stray, ", "), verb, method, strings.Join(names, ", "))
	}
	v := Values{m: make(map[string]any, len(given))}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		x, err := decls[find(name)].Parse(given[name])
		if err != nil {
			return Values{}, err
		}
		v.m[name] = x
	}
	return v, nil
}

// Canonical returns the settings of v in the spelling that Parse reads
// back, by name.
func (v Values) Canonical(decls []Setting) map[string]string {
	out := make(map[string]string, len(v.m))
	for _, d := range decls {
		if x, ok := v.m[d.Name]; ok {
			out[d.Name] = d.Format(x)
		}
	}
	return out
}

// Build returns the method with the settings v (Parse). A given dictionary
// (Dict) is read from its file, and errors about it name the file. When
// the noise level is not given (sigmaGiven false) the dictionary's
// recorded β is used, unless Beta is given, and known is the noise level
// the dictionary was learned at, to denoise at (ResolveSigma); known is 0
// when the file records none or its β is not used.
func (s Spec) Build(v Values, sigmaGiven bool, env Env) (m Method, known float64, err error) {
	if err := CheckThreads(env.Threads); err != nil {
		return nil, 0, err
	}
	var note string
	if env.Threads, note = ClampThreads(env.Threads); note != "" {
		report.OrDiscard(env.Report).Logf("%s", note)
	}
	c := Config{Values: v, Env: env}
	path := v.String(Dict)
	if path != "" {
		if c.Dictionary, err = dictfile.Read(path); err != nil {
			return nil, 0, err
		}
		if d := c.Dictionary; !sigmaGiven && !v.Has(Beta) && d.Beta > 0 {
			c.Values, known = v.with(Beta, d.Beta), d.Sigma
		}
	}
	if m, err = s.New(c); err != nil {
		if path != "" {
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
		return nil, 0, err
	}
	return m, known, nil
}

// CheckThreads returns an *option.Error for "threads" when n is negative.
func CheckThreads(n int) error {
	if n < 0 {
		return option.Errorf("threads", n, "threads must be ≥ 0, got %d", n)
	}
	return nil
}

// MaxThreadsPerCore bounds the worker goroutines a run uses, per core:
// beyond a few per core workers add only scheduling and the buffers each
// holds (--threads 100000 ran 20–60 times slower than the default).
const MaxThreadsPerCore = 4

// ClampThreads returns n (≥ 0; 0 means all cores) bounded to
// MaxThreadsPerCore × the cores, and when it was bounded a note saying
// so. Outputs do not depend on the number of threads, so the bound
// changes nothing but the time.
func ClampThreads(n int) (int, string) {
	limit := MaxThreadsPerCore * runtime.NumCPU()
	if n <= limit {
		return n, ""
	}
	return limit, fmt.Sprintf("--threads %d is more than %d a core on %d cores: using %d (the output is the same for any number)", n, MaxThreadsPerCore, runtime.NumCPU(), limit)
}

// CheckSigma returns an *option.Error for "sigma" unless sigma is a
// positive, finite number: the one rule for the noise level a method is
// given, whether from a flag, a dictionary file or an estimate.
func CheckSigma(sigma float64) error {
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return option.Errorf("sigma", sigma, "sigma must be a finite number > 0, got %v", sigma)
	}
	return nil
}

// ResolveSigma returns the noise level to denoise with: sigma when it is
// given (not 0), else known (from a dictionary, Build) when it is not 0,
// else the estimate of noise.EstimateMedian from noisy, which it says
// through r (in the input's units too, see InUnits). The level is checked
// (CheckSigma); an estimate that fails the check is an *option.Error for
// "sigma" that asks for it.
func ResolveSigma(noisy *msi.Cube, sigma, known float64, r report.Reporter) (float64, error) {
	switch {
	case sigma != 0:
		return sigma, CheckSigma(sigma)
	case known != 0:
		return known, CheckSigma(known)
	}
	if err := noise.CheckSize(noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return 0, fmt.Errorf("%w, or a given --sigma", err)
	}
	s := noise.EstimateMedian(noisy)
	report.OrDiscard(r).Logf("estimated σ = %s (median over bands of the MAD of the finest diagonal wavelet band / 0.6745)", InUnits(s, noisy.Stored.Scale))
	if CheckSigma(s) != nil {
		return 0, option.Errorf("sigma", s, "could not estimate the noise level of the input (is it noise-free?): give it")
	}
	return s, nil
}

// InUnits says a noise level sigma on the working [0, 255] scale and, for
// an input whose units are not that scale (its Storage.Scale is neither 0
// nor 1), in the input's units (sigma / scale) first:
// "0.1176 in the input's units, 30 on the working [0, 255] scale", or
// "30.00".
func InUnits(sigma, scale float64) string {
	if scale == 0 || scale == 1 {
		return fmt.Sprintf("%.2f", sigma)
	}
	return fmt.Sprintf("%.4g in the input's units, %.4g on the working [0, 255] scale", sigma/scale, sigma)
}

// SigmaMismatch is how many times larger or smaller than the input's
// estimate a given σ may be before GivenSigmaWarning warns: a σ far from
// the noise smooths the scene away or leaves the noise in, as a σ given
// on the wrong scale does (30 for a cube of reflectance whose σ is 0.1).
const SigmaMismatch = 4

// GivenSigmaWarning returns a warning when the given σ is more than
// SigmaMismatch times the estimate or less than its 1/SigmaMismatch, or
// "" (scale is the input's Storage.Scale, for InUnits).
func GivenSigmaWarning(given, estimate, scale float64) string {
	switch {
	case given <= SigmaMismatch*estimate && given*SigmaMismatch >= estimate:
		return ""
	case estimate == 0:
		return fmt.Sprintf("warning: the given σ = %s, but no noise is found in the input (estimated σ 0)", InUnits(given, scale))
	}
	return fmt.Sprintf("warning: the given σ is %.3g times the σ estimated from the input (given: %s; estimated: %s); --sigma is on the working [0, 255] scale",
		given/estimate, InUnits(given, scale), InUnits(estimate, scale))
}

// ResolveTrainSigma returns the noise level to learn a dictionary with: as
// ResolveSigma without a known level, except that when none can be had
// and β is given (betaGiven) it returns 0, since β is all that learning
// needs (σ then sets only the default step).
func ResolveTrainSigma(noisy *msi.Cube, sigma float64, betaGiven bool, r report.Reporter) (float64, error) {
	s, err := ResolveSigma(noisy, sigma, 0, r)
	if err != nil && sigma == 0 && betaGiven {
		return 0, nil
	}
	return s, err
}

// Drafter is implemented by methods that have a cheaper draft of
// themselves: a first estimate good enough to be refined by a full run,
// such as the first pass of package repair, which only re-estimates the
// sparse noise from it.
type Drafter interface {
	Method
	// Draft returns the draft method, with the same settings where they
	// apply.
	Draft() Method
}

// SignalCounter is implemented by methods that denoise in a spectral
// subspace whose dimension they read from the data: the number of
// spectral directions that hold signal above the noise, counted on the
// cube they are given under the white noise of the σ they are given. A
// caller that knows better than that model how many directions hold signal
// gives the count: for signal-dependent noise, denoised on its stabilised
// cube, the count on the input under its noise-level functions, since the
// stabilising transform, nonlinear in every band, spreads a few spectral
// components over many more directions.
type SignalCounter interface {
	Method
	// WithSignalDirections returns the method counting k directions of
	// signal instead of counting them itself, its settings (a dimension
	// given, the least dimension of its rule) unchanged.
	WithSignalDirections(k int) Method
}

// RepairPreparer is implemented by methods that choose how they work from
// the statistics of the cube they are given (nonlocal: on eigen-images or
// on the bands) and whose first passes of a repair (package repair) may
// choose as the repair's later passes see the cube: those set the voxels
// the first pass filled (from a few neighbours, their noise not averaged
// away) to the pass before's estimate and subtract the stripes estimated
// again, so the first pass's cube, the fill and the stripes left in it,
// shows directions of signal the later passes' do not. A whole cube's
// first pass so chooses as its strips' passes do (StripPreparer on
// RepairLines).
type RepairPreparer interface {
	Method
	// PrepareRepair returns the method that runs the passes of the
	// repair of the cube whose first pass denoises first at the noise
	// level sigma, filled marking (in the cube's order) the voxels that
	// pass filled: the method itself when it has nothing to choose on
	// that cube.
	PrepareRepair(first *msi.Cube, filled []bool, sigma float64) (Method, error)
}
