package pipeline

import (
	"context"
	"fmt"

	"tdsc/internal/denoise"
	"tdsc/internal/msi"
	"tdsc/internal/report"
	"tdsc/internal/stages/repair"
	"tdsc/internal/stages/sparsenoise"
	"tdsc/internal/tile"
)

// stripStabiliser stabilises the strips of a cube with signal-dependent
// noise as the whole run stabilises the cube: the stripes of the input's
// noise model subtracted, then the transform of the whole cube (its a, b
// and band means); the impulses and dead pixels are those the input's
// model finds in the strip, since the transform, steep at the dark end of
// a band, would make outliers of dark pixels' noise (see Job.detect).
type stripStabiliser struct {
	*stabiliser
	// input is the input's noise model, parts the parts of it treated,
	// and stripes the offsets subtracted before the transform (nil: none).
	input   *sparsenoise.Report
	parts   NoiseModel
	stripes [][]float64
}

// forward returns the lines c of the input stabilised (transform), and
// the input's impulses and dead pixels in them (pixels).
func (t *stripStabiliser) forward(c *msi.Cube) (*msi.Cube, *sparsenoise.Report) {
	return t.transform(c), t.pixels(c)
}

// transform returns the lines c of the input with the stripes subtracted
// and stabilised.
func (t *stripStabiliser) transform(c *msi.Cube) *msi.Cube {
	if t.stripes != nil {
		c = repair.SubtractStripes(c, t.stripes)
	}
	return t.Forward(nil, c)
}

// pixels returns what the input's model finds in its lines c, for their
// impulses and dead pixels.
func (t *stripStabiliser) pixels(c *msi.Cube) *sparsenoise.Report {
	return t.parts.withParts(sparsenoise.DetectWith(c, t.input))
}

// stabilisedLines reads the lines of a cube stabilised
// (stripStabiliser.forward).
type stabilisedLines struct {
	tile.Reader
	stab *stripStabiliser
}

// ReadLines returns the lines, stabilised.
func (r stabilisedLines) ReadLines(y0, n int) (*msi.Cube, error) {
	c, err := r.Reader.ReadLines(y0, n)
	if err != nil {
		return nil, err
	}
	return r.stab.transform(c), nil
}

// sceneLines reads the lines of a cube stabilised with the input's
// impulse and dead pixels in them missing (withoutSparse): what the noise
// model of the stabilised cube is fitted on, as the whole run detects on
// it (Job.runWhole).
type sceneLines stabilisedLines

// ReadLines returns the lines, stabilised, the input's impulse and dead
// pixels missing.
func (r sceneLines) ReadLines(y0, n int) (*msi.Cube, error) {
	c, err := r.Reader.ReadLines(y0, n)
	if err != nil {
		return nil, err
	}
	z, pixels := r.stab.forward(c)
	return withoutSparse(z, pixels), nil
}

// signalSampleValues bounds the values of the lines of a cube in strips
// that the directions of signal are counted on (64 MiB of float64s), and
// signalSampleBlock is the lines of each of the blocks spread evenly over
// the cube that make them up when the cube has more.
const (
	signalSampleValues = 1 << 23
	signalSampleBlock  = 16
)

// stabilisedStrips returns how the strips of in are denoised when the
// noise is signal-dependent and stab is its transform, input the input's
// noise model (fitted in windows of window lines): as the whole run
// denoises the cube (Job.runWhole), every strip has the model's stripes
// subtracted, is stabilised, denoised by the path that the noise model of
// the stabilised cube chooses (fitted in a second model pass over the
// stabilised lines, the impulses and dead pixels the input's) and
// inverted. The method counts its directions of signal on a sample of
// the input's lines (countSignal, signalSample). It sets out's Path,
// Stabilised, Sigma, BandSigmas and Found.
func (j *Job) stabilisedStrips(ctx context.Context, in tile.Reader, stored msi.Storage, stab *stabiliser, input *sparsenoise.Report, window int, out *Outcome, log report.Reporter) (*stripNoise, error) {
	t := &stripStabiliser{stabiliser: stab, input: input, parts: j.Noise}
	if j.Noise.Stripes != Off && len(significantStripes(input)) > 0 {
		t.stripes = input.StripeOffsets
		log.Logf("stripes subtracted from the input before stabilising: %d bands", len(input.StripedBands()))
	}
	method := j.Method
	if _, ok := method.(denoise.SignalCounter); ok {
		sample, err := t.signalSample(in, signalSampleValues)
		if err != nil {
			return nil, err
		}
		if method, err = stab.countSignal(method, sample, nil, log); err != nil {
			return nil, err
		}
	}
	log.Logf("variance stabilised band by band (generalised Anscombe transform with the %s a and b): the noise σ is %.4g on the stabilised cube", stab.source, stab.Scale)
	lines := stabilisedLines{in, t}
	// The stabilised cube's σ and stripes, measured without the input's
	// impulses and dead pixels; those and the missing voxels are the
	// input's.
	model, took, err := j.stabilisedModel(ctx, sceneLines(lines), window, input, log)
	if err != nil {
		return nil, err
	}
	out.Detect += took
	out.Found = model
	sayFound(stored.Scale, model, "on the stabilised cube (impulses and dead pixels as found in the input): ", took, log)
	if err := stab.checkFit(nil, model); err != nil {
		return nil, fmt.Errorf("%s: %w", j.Input, err)
	}
	s, err := j.stripPath(lines, model, stored, out, log)
	if err != nil {
		return nil, err
	}
	s.stab, s.method = t, method
	out.Path, out.Stabilised = PathStabilised, stab.Transform
	s.how = fmt.Sprintf(" (signal-dependent noise: variance stabilised with the %s a and b of every band, noise σ %.4g after it, inverted without bias)", stab.source, stab.Scale) + s.how
	return s, nil
}

// signalSample returns the lines of in that the directions of signal are
// counted on, as the whole run counts them on the whole input: the
// model's stripes subtracted and the impulses and dead pixels missing
// (NaN). All of them when they are at most limit values; else blocks of
// signalSampleBlock lines spread evenly from the first line to the last,
// as many as make up that many values, one after the other. The sample
// depends on the cube's size alone.
func (t *stripStabiliser) signalSample(in tile.Reader, limit int) (*msi.Cube, error) {
	height, width, bands := in.Size()
	lines := min(height, max(2, limit/(width*bands)))
	block, count := height, 1
	if lines < height {
		block = min(lines, signalSampleBlock)
		count = lines / block
	}
	sample := msi.NewCube(block*count, width, bands)
	plane := block * width
	for i := range count {
		y0 := 0
		if count > 1 {
			y0 = i * (height - block) / (count - 1)
		}
		c, err := in.ReadLines(y0, block)
		if err != nil {
			return nil, err
		}
		pixels := t.pixels(c)
		if t.stripes != nil {
			c = repair.SubtractStripes(c, t.stripes)
		}
		c = withoutSparse(c, pixels)
		for b := range bands {
			copy(sample.Band(b)[i*plane:], c.Band(b))
		}
	}
	return sample, nil
}

// strideNote says the subsample of windows a noise-level fit in strips
// was made from (noiselevel.Stream), "" for all of them.
func strideNote(stride int) string {
	if stride == 1 {
		return ""
	}
	return fmt.Sprintf(", every %d%s of a band's 4×4 windows", stride, ordinal(stride))
}

// ordinal returns the English ordinal suffix of n.
func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return "th"
	case n%10 == 1:
		return "st"
	case n%10 == 2:
		return "nd"
	case n%10 == 3:
		return "rd"
	}
	return "th"
}
