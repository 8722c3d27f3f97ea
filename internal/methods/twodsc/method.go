package twodsc

import (
	"context"
	"fmt"
	"time"

	"tdsc/internal/denoise"
	"tdsc/internal/dictfile"
	"tdsc/internal/msi"
	"tdsc/internal/option"
	"tdsc/internal/report"
	"tdsc/internal/tile"
	"tdsc/internal/tsc"
)

// Denoiser is the whole pipeline of the methods 2dsc and sc: learn a
// dictionary from the noisy cube (the paper's protocol) unless Model gives
// one, then code every patch over it (Reconstruct). It keeps nothing from
// one run to the next, and may be used by several goroutines at once.
type Denoiser struct {
	// Options are the settings; zero fields take their defaults for the
	// noise level given to Denoise (Options.Resolve).
	Options Options
	// Model, if not nil, is the dictionary to code with instead of learning
	// one; Options.Adopt has reconciled Options with it.
	Model *dictfile.Model
	// CreatedBy names the program in a learned model's file.
	CreatedBy string
	// Report, if not nil, receives the stages' progress and log lines.
	Report report.Reporter
}

// Adopt reconciles o with the dictionary file m: the patch geometry and
// atom count come from m, and a Patch or Depth that contradicts it is an
// *option.Error. (The β and σ that m records are the caller's to use:
// denoise.Spec.Build.)
func (o *Options) Adopt(m *dictfile.Model) error {
	if m.Patch.Height != m.Patch.Width {
		return fmt.Errorf("the dictionary is for %d×%d-pixel patches; denoising needs square ones", m.Patch.Height, m.Patch.Width)
	}
	if o.Patch != 0 && o.Patch != m.Patch.Height {
		return option.Errorf("patch", o.Patch, "patch %d: the dictionary is for %d×%d-pixel patches", o.Patch, m.Patch.Height, m.Patch.Width)
	}
	if o.Depth != 0 && o.Depth != m.Patch.Depth {
		return option.Errorf("depth", o.Depth, "depth %d: the dictionary is for patches of %d bands", o.Depth, m.Patch.Depth)
	}
	o.Patch, o.Depth, o.Atoms = m.Patch.Height, m.Patch.Depth, m.Atoms.N
	return nil
}

// NewModel wraps a learned dictionary with the settings o (resolved) and
// the noise level sigma that made it.
func NewModel(res *tsc.LearnResult, o Options, sigma float64, createdBy string) *dictfile.Model {
	return &dictfile.Model{
		CreatedBy:  createdBy,
		Patch:      dictfile.PatchShape{Height: o.Patch, Width: o.Patch, Depth: o.Depth},
		Beta:       o.Beta,
		Sigma:      sigma,
		Seed:       o.Seed,
		Iterations: len(res.Objective),
		Objective:  res.Objective,
		Atoms:      res.Dict,
	}
}

// TrainModel learns a dictionary from the cube c as the train command
// does: o with its zero fields resolved for the noise level sigma
// (Resolve), checked against the cube (Validate), Train, and the result
// wrapped with its settings (NewModel). A sigma of 0 (unknown) is allowed
// when o.Beta is given: σ then sets only the default step and is not
// recorded. createdBy names the program in the model.
func TrainModel(ctx context.Context, c *msi.Cube, o Options, sigma float64, createdBy string) (*dictfile.Model, error) {
	o = o.Resolve(sigma)
	if err := o.Validate(c.Height, c.Width, c.Bands); err != nil {
		return nil, err
	}
	res, err := Train(ctx, c, o)
	if err != nil {
		return nil, err
	}
	return NewModel(res, o, sigma, createdBy), nil
}

// TileGeometry returns the strips under which denoising a cube strip by
// strip (package tile), after PrepareTiles, gives the whole cube's result
// bit for bit (Options.TileGeometry).
func (d *Denoiser) TileGeometry(sigma float64) tile.Geometry {
	o := d.Options.Resolve(sigma)
	return o.TileGeometry()
}

// PrepareTiles readies the denoising of the cube of r strip by strip:
// unless Model gives the dictionary, it learns it as Denoise of the whole
// cube would (the same sample, gathered from the strips with its progress
// reported), and returns it in the Result
// (not for sc, whose dictionary is not saved) with the Denoiser that codes
// every strip with it. That one reports its stages but no log lines: the
// caller reports the strips, the stages as their progress.
func (d *Denoiser) PrepareTiles(ctx context.Context, r tile.Reader, strips []tile.Strip, sigma float64) (denoise.Method, denoise.Result, error) {
	strip := &Denoiser{Options: d.Options, Model: d.Model, CreatedBy: d.CreatedBy, Report: report.StagesOnly(d.Report)}
	if d.Model != nil {
		return strip, denoise.Result{}, nil
	}
	o := d.Options.Resolve(sigma)
	h, w, b := r.Size()
	if err := o.Validate(h, w, b); err != nil {
		return nil, denoise.Result{}, err
	}
	log := report.OrDiscard(d.Report)
	x, g, err := sampleTiles(ctx, r, strips, o, log)
	if err != nil {
		return nil, denoise.Result{}, err
	}
	m, err := d.learn(log, o, sigma, func(o Options) (*tsc.LearnResult, error) {
		return learn(ctx, x, g, o)
	})
	if err != nil {
		return nil, denoise.Result{}, err
	}
	strip.Model = m
	return strip, o.result(m), nil
}

// learn runs train (Train, or learning from sampleTiles' patches, with o) with its progress and
// outcome reported through log, and wraps the dictionary with its
// settings.
func (d *Denoiser) learn(log report.Reporter, o Options, sigma float64, train func(Options) (*tsc.LearnResult, error)) (*dictfile.Model, error) {
	start := time.Now()
	log.Start("training", "iterations", int64(o.TrainIters))
	o.TrainProgress = func(iter, _ int, obj float64) {
		log.Update(int64(iter), fmt.Sprintf("objective %.6g", obj))
	}
	res, err := train(o)
	log.Finish()
	if err != nil {
		return nil, err
	}
	log.Logf("learned %d atoms in %d iterations (%.1f s)", o.Atoms, len(res.Objective), time.Since(start).Seconds())
	return NewModel(res, o, sigma, d.CreatedBy), nil
}

// result is the Result of a run with resolved settings o that learned the
// dictionary learned (nil when it was given one); a vectorised dictionary
// is not returned, as its file would not describe it.
func (o *Options) result(learned *dictfile.Model) denoise.Result {
	res := denoise.Result{Settings: denoise.Params("beta", o.Beta, "patch", o.Patch, "depth", o.Depth, "stride", o.Stride,
		"atoms", o.Atoms, "weights", o.Weighting, "seed", o.Seed)}
	if !o.Vectorised {
		res.Dictionary = learned
	}
	return res
}

// Check returns the error Denoise would return for noise level sigma on a
// cube of height×width×bands.
func (d *Denoiser) Check(sigma float64, height, width, bands int) error {
	o := d.Options.Resolve(sigma)
	return o.Validate(height, width, bands)
}

// Denoise returns the estimate of the clean cube for noise of standard
// deviation sigma > 0 on the [0, 255] scale, and in the Result the
// dictionary it learned. It stops with ctx.Err() when ctx is cancelled.
func (d *Denoiser) Denoise(ctx context.Context, noisy *msi.Cube, sigma float64) (*msi.Cube, denoise.Result, error) {
	log := report.OrDiscard(d.Report)
	o := d.Options.Resolve(sigma)
	if err := o.Validate(noisy.Height, noisy.Width, noisy.Bands); err != nil {
		return nil, denoise.Result{}, err
	}
	model, learned := d.Model, (*dictfile.Model)(nil)
	if model == nil {
		m, err := d.learn(log, o, sigma, func(o Options) (*tsc.LearnResult, error) { return Train(ctx, noisy, o) })
		if err != nil {
			return nil, denoise.Result{}, err
		}
		model, learned = m, m
	}
	started := false
	o.CodeProgress = func(done, total int) {
		if !started {
			log.Start("coding patches", "patches", int64(total))
			started = true
		}
		log.Update(int64(done), "")
	}
	codeStart := time.Now()
	out, err := Reconstruct(ctx, noisy, model.Atoms, o)
	log.Finish()
	if err != nil {
		return nil, denoise.Result{}, err
	}
	log.Logf("coded the patches in %.1f s", time.Since(codeStart).Seconds())
	return out, o.result(learned), nil
}
