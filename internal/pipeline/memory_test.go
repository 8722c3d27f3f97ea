package pipeline

import (
	"strings"
	"testing"
)

// TestCheckMemory counts peak bytes a voxel and FixedMemory against the
// budget: refused one byte over, taken at it; no budget, no declaration
// or no size known checks nothing.
func TestCheckMemory(t *testing.T) {
	const h, w, b, peak = 100, 200, 10, 25.0
	need := int64(peak*h*w*b) + FixedMemory
	if err := CheckMemory("c.hdr", "noise", h, w, b, peak, need); err != nil {
		t.Errorf("at the budget: %v", err)
	}
	err := CheckMemory("c.hdr", "noise", h, w, b, peak, need-1)
	if err == nil || !strings.Contains(err.Error(), "c.hdr: tdsc noise needs about 25 bytes a voxel of the 100×200×10 cube") {
		t.Errorf("one byte over: %v", err)
	}
	for _, c := range []struct {
		h    int
		peak float64
		b    int64
	}{{h, peak, 0}, {h, 0, 1}, {0, peak, 1}} {
		if err := CheckMemory("c.hdr", "noise", c.h, w, b, c.peak, c.b); err != nil {
			t.Errorf("height %d, peak %g, budget %d: %v", c.h, c.peak, c.b, err)
		}
	}
}
