package pipeline

import (
	"context"
	"fmt"
	"math"

	"tdsc/internal/formats"
	"tdsc/internal/msi"
	"tdsc/internal/report"
)

// CheckMemory returns an error when command, which needs peak bytes a
// voxel of a height×width×bands cube at its peak (its declaration, from
// a measured peak) and FixedMemory besides, would need more than budget
// bytes (0: no limit), saying what helps. A peak of 0, or a size not
// known (0×0×0), checks nothing (the formats' own check of the cube alone
// still holds).
func CheckMemory(path, command string, height, width, bands int, peak float64, budget int64) error {
	need := peak*float64(height)*float64(width)*float64(bands) + FixedMemory
	if peak == 0 || budget <= 0 || height*width*bands == 0 || need <= float64(budget) {
		return nil
	}
	return fmt.Errorf("%s: tdsc %s needs about %g bytes a voxel of the %d×%d×%d cube, %s in all, more than the memory budget of %s: give a larger --max-memory if the machine has the memory, or a smaller cube",
		path, command, peak, height, width, bands, msi.FormatBytes(int64(min(need, math.MaxInt64/2))), msi.FormatBytes(budget))
}

// ReadWithin reads the cube of in whole, as read does, for command, which
// needs peak bytes a voxel of it (CheckMemory against in.Options.Budget):
// checked before the read where the format gives the size from its header
// (a file it cannot read is said by the read), and once read otherwise.
func ReadWithin(ctx context.Context, in formats.Source, command string, peak float64, log report.Reporter) (*msi.Cube, error) {
	if h, w, b, err := in.Size(); err == nil {
		if err := CheckMemory(in.Path, command, h, w, b, peak, in.Options.Budget); err != nil {
			return nil, err
		}
	}
	c, err := readSource(ctx, in, log)
	if err != nil {
		return nil, err
	}
	if err := CheckMemory(in.Path, command, c.Height, c.Width, c.Bands, peak, in.Options.Budget); err != nil {
		return nil, err
	}
	return c, nil
}
