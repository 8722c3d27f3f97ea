package pipeline

import (
	"runtime"
	"runtime/debug"
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

// TestOutsideGo checks that the memory counted outside Go is there (the
// test's code is resident and not Go's heap) and does not count what Go
// allocates: 96 MiB allocated and touched move it by less than a third of
// that.
func TestOutsideGo(t *testing.T) {
	before, ok := outsideGo()
	if !ok {
		t.Skip("the resident memory is not known on this system")
	}
	if before <= 0 {
		t.Errorf("nothing resident outside Go: %d", before)
	}
	buf := make([]byte, 96<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after, _ := outsideGo()
	if d := after - before; d > 32<<20 || d < -32<<20 {
		t.Errorf("96 MiB of Go's moved the memory outside Go by %d MiB", d>>20)
	}
	runtime.KeepAlive(buf)
}

// TestMemoryLimit checks that the Go memory limit for a budget leaves at
// least FixedMemory/2 and what is outside Go, and that restore puts the
// limit back.
func TestMemoryLimit(t *testing.T) {
	const budget = 4 << 30
	before := debug.SetMemoryLimit(-1)
	m := limitMemory(budget)
	got := debug.SetMemoryLimit(-1)
	outside, _ := outsideGo()
	if got > budget-FixedMemory/2 || got > budget-outside || got < budget/2 {
		t.Errorf("limit %d for a budget of %d with %d outside Go", got, budget, outside)
	}
	m.restore()
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Errorf("limit %d after restore, want %d", after, before)
	}
}
