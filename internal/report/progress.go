package report

import (
	"fmt"
	"strings"
	"time"
)

// Nester is a Reporter that shows a stage whose every step runs stages of
// its own (a strip denoised by a method that reports its stages) as one
// line: StartSteps opens that outer stage; while it is open, Start opens
// an inner stage, shown as the outer step's detail and counted as a
// fraction of the step, Update moves the inner stage when one is open and
// the outer one otherwise, and Finish closes the inner stage when one is
// open and the outer one otherwise.
type Nester interface {
	Reporter
	StartSteps(stage, unit string, total int64)
}

// StartSteps opens on r a stage of total steps that run stages of their
// own: as Nester's StartSteps when r is one, else as Start (where the
// inner stages replace it).
func StartSteps(r Reporter, stage, unit string, total int64) {
	if n, ok := r.(Nester); ok {
		n.StartSteps(stage, unit, total)
		return
	}
	r.Start(stage, unit, total)
}

// Progress is the state of one progress line, for a Nester to draw: the
// stage shown, how far it is, and an estimate of the time left. Its stage
// calls are Nester's (Start, StartSteps, Update, Finish). The estimate
// assumes that what is left goes at the pace of what is done since the
// stage started: left = elapsed · (total − done) / done, where done counts
// the steps finished and, within an outer step, the fraction of it that
// the inner stages have done. That fraction is (k + d/t)/K for the k-th
// inner stage (from 0) of the step, d of its t units done, and K inner
// stages a step: the most an earlier step ran, or in the first step the
// stages seen so far and one more, so that the first step's fraction
// stays below 1 whatever the count of its stages. The zero value is not
// usable: see NewProgress.
type Progress struct {
	now   func() time.Time
	outer *stageState // the stage of StartSteps, or nil
	inner *stageState // the stage of Start, or nil
	// stepStages counts the inner stages started in the current outer
	// step; perStep is the most a finished step started.
	stepStages, perStep int
}

// stageState is one open stage.
type stageState struct {
	name, unit  string
	total, done int64
	detail      string
	start       time.Time
}

// NewProgress returns a Progress that reads the time from now (time.Now,
// or a fake clock in tests).
func NewProgress(now func() time.Time) *Progress { return &Progress{now: now} }

// Start opens a stage of total units: an inner stage while an outer one
// is open, else the stage shown, replacing any other.
func (p *Progress) Start(stage, unit string, total int64) {
	p.inner = &stageState{name: stage, unit: unit, total: total, start: p.now()}
	if p.outer != nil {
		p.stepStages++
	}
}

// StartSteps opens an outer stage of total steps, replacing any other.
func (p *Progress) StartSteps(stage, unit string, total int64) {
	*p = Progress{now: p.now, outer: &stageState{name: stage, unit: unit, total: total, start: p.now()}}
}

// Update says that done units of the open stage (the inner one if open)
// are done, with detail (may be empty). An outer step done ends the
// count of the inner stages of that step.
func (p *Progress) Update(done int64, detail string) {
	s := p.inner
	if s == nil {
		s = p.outer
	}
	if s == nil {
		return
	}
	if s == p.outer && done > s.done {
		p.perStep = max(p.perStep, p.stepStages)
		p.stepStages = 0
	}
	s.done, s.detail = done, detail
}

// Finish closes the inner stage if one is open, else the stage shown. It
// reports whether a stage shown was closed (not an inner one).
func (p *Progress) Finish() (closed bool) {
	if p.outer != nil && p.inner != nil {
		p.inner = nil
		return false
	}
	closed = p.outer != nil || p.inner != nil
	*p = Progress{now: p.now}
	return closed
}

// Outer reports whether an outer stage (StartSteps) is open.
func (p *Progress) Outer() bool { return p.outer != nil }

// Snapshot is what a progress line shows.
type Snapshot struct {
	// Stage and Unit name the stage shown; Count of Total units are done,
	// and Done with the fraction of the current step, in an outer stage.
	Stage, Unit  string
	Count, Total int64
	Done         float64
	// Detail is the stage's detail; Inner the inner stage in progress, as
	// "NAME D/T UNIT", or "".
	Detail, Inner string
	// Elapsed is the time since the stage started; Left the estimate of
	// the time left, when Known.
	Elapsed, Left time.Duration
	Known         bool
}

// Snapshot returns what the progress line shows now; ok is false when no
// stage is open.
func (p *Progress) Snapshot() (s Snapshot, ok bool) {
	shown := p.outer
	if shown == nil {
		shown = p.inner
	}
	if shown == nil {
		return s, false
	}
	s = Snapshot{Stage: shown.name, Unit: shown.unit, Count: shown.done, Done: float64(shown.done), Total: shown.total, Detail: shown.detail, Elapsed: p.now().Sub(shown.start)}
	if p.outer != nil && p.inner != nil {
		in := p.inner
		s.Inner = in.name
		if in.total > 0 {
			s.Inner += fmt.Sprintf(" %d/%d %s", in.done, in.total, in.unit)
			stages := p.perStep
			if stages == 0 {
				stages = p.stepStages + 1 // the first step: one more stage to come, at least
			}
			stages = max(stages, p.stepStages)
			frac := (float64(p.stepStages-1) + min(1, float64(in.done)/float64(in.total))) / float64(stages)
			s.Done += min(frac, 1)
		}
	}
	if s.Done > 0 && s.Elapsed > 0 && s.Done < float64(s.Total) {
		s.Left = time.Duration(float64(s.Elapsed) * (float64(s.Total) - s.Done) / s.Done)
		s.Known = true
	}
	return s, true
}

// Line formats s as one line: "STAGE: DONE/TOTAL UNIT DETAIL, INNER (RATE,
// LEFT left)", the parts that are empty or not known left out; the rate
// only for a stage without inner stages, whose units it counts.
func (s Snapshot) Line() string {
	line := fmt.Sprintf("%s: %d/%d %s", s.Stage, s.Count, s.Total, s.Unit)
	if s.Detail != "" {
		line += " " + s.Detail
	}
	if s.Inner != "" {
		line += ", " + s.Inner
	}
	var paren []string
	if s.Inner == "" && s.Done > 0 && s.Elapsed > 0 && s.Known {
		paren = append(paren, Rate(s.Done/s.Elapsed.Seconds(), s.Unit))
	}
	if s.Known {
		paren = append(paren, s.Left.Round(time.Second).String()+" left")
	}
	if len(paren) > 0 {
		line += " (" + strings.Join(paren, ", ") + ")"
	}
	return line
}

// Rate formats a speed in units per second, or in seconds per unit when a
// step takes longer than a second (where "0/s" would say nothing).
func Rate(perSecond float64, unit string) string {
	if perSecond >= 1 {
		return fmt.Sprintf("%.0f %s/s", perSecond, unit)
	}
	return fmt.Sprintf("%.1f s per step", 1/perSecond)
}
