package gray

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"tdsc/internal/dictfile"
	"tdsc/internal/option"
	"tdsc/internal/tsc"
)

// AtomsOptions are the settings of Atoms, the pipeline of `tdsc atoms`
// (the paper's Fig. 5).
type AtomsOptions struct {
	Layout
	// Samples is the number of training patches (at least Learn.Atoms: the
	// atoms start as samples).
	Samples int
	// Luminance converts colour images to luminance (see ReadPNG).
	Luminance bool
	// Whiten whitens every image first (see Whiten).
	Whiten bool
	// Learn are the settings of dictionary learning; Learn.Seed also seeds
	// the sample of patches.
	Learn tsc.LearnOptions
	// ReadProgress, if not nil, is called after every image read (see
	// SampleOptions.Progress).
	ReadProgress func(done, total int)
}

// Validate checks o and returns an *option.Error naming the first bad
// setting (Field in the spelling of the command-line flags).
func (o *AtomsOptions) Validate() error {
	switch {
	case o.Model != TwoD && o.Model != Vector:
		return option.Errorf("model", o.Model, "unknown model %d", int(o.Model))
	case o.D < 2:
		return option.Errorf("patch", o.D, "patch must be at least 2, got %d", o.D)
	case o.Samples < 1:
		return option.Errorf("samples", o.Samples, "samples must be at least 1, got %d", o.Samples)
	case o.Samples < o.Learn.Atoms:
		return option.Errorf("samples", o.Samples, "samples (%d) must be at least the number of atoms (%d): the atoms start as samples", o.Samples, o.Learn.Atoms)
	case o.Learn.Threads < 0:
		return option.Errorf("threads", o.Learn.Threads, "threads must be ≥ 0, got %d", o.Learn.Threads)
	}
	return o.Learn.Validate()
}

// AtomsResult is what Atoms learned.
type AtomsResult struct {
	// Model is the dictionary, ready to be written as a dictionary file:
	// its description says the model, the scale and how atoms map to
	// patches.
	Model *dictfile.Model
	// Tiles are the atoms as D×D row-major images, ordered by use: the ℓ1
	// norm of their codes over the training patches, largest first (ties
	// by atom number).
	Tiles [][]float64
	// ReadTime and LearnTime are the wall times of sampling the patches
	// and of learning.
	ReadTime, LearnTime time.Duration
}

// Atoms draws o.Samples patches from the PNG files (Sample), learns a
// dictionary from them (tsc.Learn) and returns it with its atoms as
// pictures. It stops with ctx.Err() when ctx is cancelled. createdBy names
// the program in the dictionary file.
func Atoms(ctx context.Context, files []string, o AtomsOptions, createdBy string) (*AtomsResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	x, err := Sample(files, o.Layout, SampleOptions{
		Samples: o.Samples, Seed: o.Learn.Seed, Luminance: o.Luminance, Whiten: o.Whiten,
		Progress: o.ReadProgress,
	})
	if err != nil {
		return nil, err
	}
	t1 := time.Now()
	res, err := tsc.Learn(ctx, x, o.Learn)
	if err != nil {
		return nil, err
	}
	t2 := time.Now()
	d := o.D
	model := &dictfile.Model{
		Description: fmt.Sprintf("%s dictionary of %d×%d grayscale image patches (%s, patch means removed): %s",
			o.Model, d, d, scaleText(o.Whiten), layoutText(o.Model)),
		CreatedBy:  createdBy,
		Patch:      o.Shape(),
		Beta:       o.Learn.Beta,
		Seed:       o.Learn.Seed,
		Iterations: res.Iterations,
		Objective:  res.Objective,
		Atoms:      res.Dict,
	}
	return &AtomsResult{Model: model, Tiles: atomTiles(o.Layout, res), ReadTime: t1.Sub(t0), LearnTime: t2.Sub(t1)}, nil
}

// scaleText says in a dictionary file what scale its patches were on.
func scaleText(whiten bool) string {
	if whiten {
		return fmt.Sprintf("images whitened by the zero-phase filter f·exp(−(f/%g)⁴), f in cycles per pixel, then scaled to unit variance", WhitenF0)
	}
	return "pixels on [0, 1]"
}

// layoutText says how the atoms of a dictionary file map to image patches.
func layoutText(m Model) string {
	if m == Vector {
		return "atom j is the row-major d²-vector of a d×d patch (m = d², k = 1: ordinary sparse coding)"
	}
	return "atom j is the d×1×d tensor whose element (i, t) is pixel (row i, column t) of a d×d patch " +
		"(in the file, the k \"bands\" are the d columns); the t-product shifts it circularly along the columns"
}

// atomTiles returns every atom as a d×d row-major image, ordered by the ℓ1
// norm of its codes over the training patches, largest first (ties by
// atom number).
func atomTiles(l Layout, res *tsc.LearnResult) [][]float64 {
	b := res.Codes // R×N×K: B(q, j, t) at (j*K+t)*R+q
	use := make([]float64, b.M)
	for i, v := range b.Data {
		use[i%b.M] += math.Abs(v)
	}
	order := make([]int, b.M)
	for q := range order {
		order[q] = q
	}
	slices.SortStableFunc(order, func(p, q int) int {
		switch {
		case use[p] > use[q]:
			return -1
		case use[p] < use[q]:
			return 1
		}
		return 0
	})
	tiles := make([][]float64, len(order))
	for i, q := range order {
		tiles[i] = l.Unpack(res.Dict.Lateral(q))
	}
	return tiles
}
