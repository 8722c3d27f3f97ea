package pipeline

import (
	"fmt"
	"math"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/report"
)

// Masked is a voxel a mask file marked missing, with the value it had.
type Masked struct {
	Index int     // in the cube's Data
	Value float64 // on the working scale (NaN if it was missing already)
}

// ApplyMask reads the mask at path with opts and marks missing (NaN) the
// voxels of c that it marks: a mask is a cube of c's height and width with
// one band (the same pixels in every band) or c's bands, in any format,
// whose voxels are nonzero (or NaN) where c has no data. It returns the
// voxels it marked with their values, for Restore.
func ApplyMask(c *msi.Cube, path string, opts msi.ReadOptions) ([]Masked, error) {
	m, err := formats.OpenWith(path, opts)
	if err != nil {
		return nil, fmt.Errorf("--mask: %w", err)
	}
	if m.Height != c.Height || m.Width != c.Width || m.Bands != 1 && m.Bands != c.Bands {
		return nil, fmt.Errorf("--mask %s is %s: want %d×%d×1 (every band) or %s, the input's size", path, m.Size(), c.Height, c.Width, c.Size())
	}
	n := c.Height * c.Width
	var masked []Masked
	for b := range c.Bands {
		marks := m.Band(min(b, m.Bands-1))
		for i, v := range marks {
			if v != 0 { // NaN too
				k := b*n + i
				masked = append(masked, Masked{Index: k, Value: c.Data[k]})
				c.Data[k] = math.NaN()
			}
		}
	}
	return masked, nil
}

// Restore puts back into result what the input had where it had no data:
// NaN (written as the input's no-data value, or NaN) where noisy is
// missing, and the values of masked, which a mask marked.
func Restore(result, noisy *msi.Cube, masked []Masked) {
	for i, v := range noisy.Data {
		if math.IsNaN(v) {
			result.Data[i] = v
		}
	}
	for _, m := range masked {
		result.Data[m.Index] = m.Value
	}
}

// checkMissing says on log how many voxels of noisy are missing, and is
// an error when every one is.
func (j *Job) checkMissing(noisy *msi.Cube, log report.Reporter) (int, error) {
	missing := noisy.Missing()
	switch {
	case missing == len(noisy.Data):
		return 0, fmt.Errorf("%s: every voxel is missing (no data): nothing to denoise", j.Input)
	case missing > 0:
		log.Logf("%d of %d voxels (%.3g %%) are missing (no data): left out of the noise estimates, filled before denoising and written back as they were",
			missing, len(noisy.Data), 100*float64(missing)/float64(len(noisy.Data)))
	}
	return missing, nil
}
