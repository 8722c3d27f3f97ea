package pipeline

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"runtime/metrics"

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

// outsideMargin is what the memory resident outside the Go runtime may
// grow by after it is measured, within a strip (OpenBLAS allocates its
// buffers on its first calls).
const outsideMargin = 32 << 20

// memoryLimit keeps the process's resident memory within a budget through
// the Go runtime's memory limit (debug.SetMemoryLimit), which makes the
// collector return garbage rather than let the heap grow to twice what is
// live, but binds only the memory Go manages. The rest — the program's
// code, OpenBLAS's buffers, other C allocations — is counted as the
// process's resident memory less Go's own (outsideGo), measured by update,
// and the limit is the budget less that and outsideMargin, and at least
// FixedMemory/2 below the budget (all of it where the resident memory is
// not known).
type memoryLimit struct {
	budget, before int64
}

// limitMemory sets the limit for budget (update) and returns the limit
// that restore puts back.
func limitMemory(budget int64) *memoryLimit {
	m := &memoryLimit{budget: budget, before: debug.SetMemoryLimit(-1)}
	m.update()
	return m
}

// update measures the memory outside Go and sets the limit again.
func (m *memoryLimit) update() {
	reserve := int64(FixedMemory / 2)
	if outside, ok := outsideGo(); ok {
		reserve = max(reserve, outside+outsideMargin)
	}
	debug.SetMemoryLimit(max(m.budget-reserve, m.budget/2))
}

// restore puts back the limit from before limitMemory.
func (m *memoryLimit) restore() { debug.SetMemoryLimit(m.before) }

// outsideGo returns the process's resident memory that the Go runtime
// does not manage: the resident set less the memory Go has mapped and not
// returned to the system (runtime/metrics), which counts Go's own at
// most, so the result is at least what is outside.
func outsideGo() (int64, bool) {
	rss, ok := residentMemory()
	if !ok {
		return 0, false
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	goResident := int64(s[0].Value.Uint64() - s[1].Value.Uint64())
	return max(0, rss-goResident), true
}
