package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestProgressEstimate follows an outer stage of 4 steps whose steps run
// two inner stages, on a fake clock, and checks the fraction done and the
// time left against the rule by hand: left = elapsed · (total − done) /
// done, the current step counted as (k + d/t)/K of a step.
func TestProgressEstimate(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	p := NewProgress(clock.now)
	if _, ok := p.Snapshot(); ok {
		t.Fatal("a snapshot with no stage open")
	}
	check := func(what string, done float64, left time.Duration, known bool, inner string) {
		t.Helper()
		s, ok := p.Snapshot()
		if !ok || math.Abs(s.Done-done) > 1e-12 || s.Known != known || (known && (s.Left-left).Abs() > time.Millisecond) || s.Inner != inner {
			t.Errorf("%s: done %v, left %v (known %v), inner %q; want %v, %v (%v), %q", what, s.Done, s.Left, s.Known, s.Inner, done, left, known, inner)
		}
	}
	p.StartSteps("denoising strips", "strips", 4)
	check("at the start", 0, 0, false, "")
	// Step 1: the stages a step runs are not known yet, so one more than
	// those seen is assumed. The first stage half done after 10 s: the
	// step counts as (0 + 0.5)/2, and 10·3.75/0.25 = 150 s are left.
	p.Start("pilot", "rows", 10)
	clock.advance(10 * time.Second)
	p.Update(5, "")
	check("first step, first stage half done", 0.25, 150*time.Second, true, "pilot 5/10 rows")
	if s, _ := p.Snapshot(); s.Count != 0 || !strings.HasPrefix(s.Line(), "denoising strips: 0/4 strips, pilot 5/10 rows") {
		t.Errorf("line %q", s.Line())
	}
	p.Finish()
	p.Start("Wiener", "rows", 4)
	clock.advance(10 * time.Second)
	p.Update(4, "")
	// The second stage done after 20 s: (1 + 1)/3 of the step, below 1;
	// 20·(4 − 2/3)/(2/3) = 100 s left.
	check("first step, second stage done", 2.0/3, 100*time.Second, true, "Wiener 4/4 rows")
	p.Finish()
	clock.advance(20 * time.Second)
	p.Update(1, "") // the step is done at 40 s, with 2 stages
	check("one step done", 1, 120*time.Second, true, "")
	// Step 2: K = 2 from the first step; the first stage half done after
	// 50 s is (0 + 0.5)/2 of a step: 1.25 done, 50·2.75/1.25 = 110 s.
	p.Start("pilot", "rows", 10)
	clock.advance(10 * time.Second)
	p.Update(5, "")
	check("second step", 1.25, 110*time.Second, true, "pilot 5/10 rows")
	if p.Finish() {
		t.Error("closing the inner stage closed the outer one")
	}
	if !p.Outer() {
		t.Error("the outer stage is not open after its inner stage closed")
	}
	p.Update(4, "")
	check("every step done", 4, 0, false, "")
	if !p.Finish() || p.Outer() {
		t.Error("Finish did not close the outer stage")
	}
	if _, ok := p.Snapshot(); ok {
		t.Error("a snapshot after the stage closed")
	}

	// A stage on its own: its units at the pace so far.
	p.Start("coding patches", "patches", 1000)
	clock.advance(4 * time.Second)
	p.Update(250, "")
	check("plain stage", 250, 12*time.Second, true, "")
	s, _ := p.Snapshot()
	if got, want := s.Line(), "coding patches: 250/1000 patches (62 patches/s, 12s left)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	// Another stage replaces it.
	p.Start("Wiener", "rows", 8)
	if s, _ := p.Snapshot(); s.Stage != "Wiener" || s.Done != 0 {
		t.Errorf("a new stage shows %+v", s)
	}
}

// TestLine checks the line of an outer stage: the steps finished, the
// inner stage, the time left, no rate.
func TestLine(t *testing.T) {
	s := Snapshot{Stage: "denoising strips", Unit: "strips", Count: 2, Done: 2.5, Total: 10, Inner: "pilot 3/6 rows", Elapsed: 25 * time.Second, Left: 75 * time.Second, Known: true}
	if got, want := s.Line(), "denoising strips: 2/10 strips, pilot 3/6 rows (1m15s left)"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	s = Snapshot{Stage: "finding the largest value", Unit: "lines", Total: 8000}
	if got, want := s.Line(), "finding the largest value: 0/8000 lines"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
}

func TestRate(t *testing.T) {
	for _, c := range []struct {
		perSecond float64
		unit      string
		want      string
	}{
		{324000.4, "patches", "324000 patches/s"},
		{1, "iterations", "1 iterations/s"},
		{0.25, "iterations", "4.0 s per step"},
	} {
		if got := Rate(c.perSecond, c.unit); got != c.want {
			t.Errorf("Rate(%v, %q) = %q, want %q", c.perSecond, c.unit, got, c.want)
		}
	}
}

// TestLazy checks that a lazy stage opens on its first update only.
func TestLazy(t *testing.T) {
	var r recorder
	_, finish := Lazy(&r, "pass", "lines", 10)
	finish()
	if len(r.calls) != 0 {
		t.Errorf("a pass that did not run reported %v", r.calls)
	}
	update, finish := Lazy(&r, "pass", "lines", 10)
	update(0)
	update(10)
	finish()
	want := []string{"start pass", "update 0", "update 10", "finish"}
	if len(r.calls) != len(want) {
		t.Fatalf("calls %v, want %v", r.calls, want)
	}
	for i := range want {
		if r.calls[i] != want[i] {
			t.Fatalf("calls %v, want %v", r.calls, want)
		}
	}
}

// recorder is a Reporter that records its stage calls.
type recorder struct{ calls []string }

func (r *recorder) Logf(string, ...any)            {}
func (r *recorder) Start(stage, _ string, _ int64) { r.calls = append(r.calls, "start "+stage) }
func (r *recorder) Update(done int64, _ string) {
	r.calls = append(r.calls, fmt.Sprint("update ", done))
}
func (r *recorder) Finish() { r.calls = append(r.calls, "finish") }

// TestStagesOnly checks that StagesOnly passes the stages and drops the
// log lines.
func TestStagesOnly(t *testing.T) {
	var r recorder
	s := StagesOnly(&r)
	s.Logf("a line")
	s.Start("stage", "rows", 3)
	s.Update(1, "")
	s.Finish()
	if want := []string{"start stage", "update 1", "finish"}; fmt.Sprint(r.calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v", r.calls, want)
	}
	StagesOnly(nil).Logf("to no one")
}
