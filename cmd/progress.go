package cmd

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"tdsc/internal/report"
)

// logInterval is how often a plain progress line is printed when stderr is
// not a terminal (logs of batch jobs should stay short).
const logInterval = 5 * time.Second

// barSteps is the resolution of the bar: steps per unit of the stage shown
// (an outer stage's steps are few and long).
const barSteps = 100

// reporter writes progress and log lines to stderr: one progress line
// (report.Progress: the stage, the inner stage of an outer step, the time
// left), drawn as a bar when stderr is a terminal and printed as a plain
// line when a stage starts and every few seconds otherwise; nothing with
// --quiet. Results never go through it.
type reporter struct {
	w     io.Writer
	quiet bool
	tty   bool

	progress *report.Progress
	bar      *progressbar.ProgressBar
	last     time.Time // when the last plain line was printed
	lastLine string    // and what it said
}

func newReporter(cmd *cobra.Command) *reporter {
	quiet, _ := cmd.Flags().GetBool("quiet")
	w := cmd.ErrOrStderr()
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &reporter{w: w, quiet: quiet, tty: tty, progress: report.NewProgress(time.Now)}
}

// Logf prints one log line unless quiet.
func (r *reporter) Logf(format string, args ...any) {
	if r.quiet {
		return
	}
	if r.bar != nil {
		_ = r.bar.Clear()
	}
	fmt.Fprintf(r.w, format+"\n", args...)
}

// Start begins a stage named desc of total steps, each one unit (plural,
// as in "patches"), which names the rate; within an outer stage
// (StartSteps) it is shown as the outer step's progress.
func (r *reporter) Start(desc, unit string, total int64) {
	inner := r.progress.Outer()
	if !inner {
		r.closeBar()
	}
	r.progress.Start(desc, unit, total)
	r.show(!inner)
}

// StartSteps begins an outer stage of total steps, each running stages of
// its own (report.Nester).
func (r *reporter) StartSteps(desc, unit string, total int64) {
	r.closeBar()
	r.progress.StartSteps(desc, unit, total)
	r.show(true)
}

// Update reports that done of total steps of the stage are complete;
// detail (may be empty) is shown beside the count.
func (r *reporter) Update(done int64, detail string) {
	r.progress.Update(done, detail)
	r.show(false)
}

// Finish ends the current stage, if any (the inner one, in an outer
// stage).
func (r *reporter) Finish() {
	if r.progress.Finish() {
		r.closeBar()
	}
}

// show draws the progress line: the bar on a terminal, else a plain line
// when a stage begins (start), when it is complete, and every logInterval.
func (r *reporter) show(start bool) {
	s, ok := r.progress.Snapshot()
	if r.quiet || !ok {
		return
	}
	if r.tty {
		if start || r.bar == nil {
			r.closeBar()
			r.bar = progressbar.NewOptions64(max(1, s.Total*barSteps),
				progressbar.OptionSetWriter(r.w),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionSetPredictTime(false), // the line says the time left
				progressbar.OptionClearOnFinish(),
			)
		}
		r.bar.Describe(s.Line())
		_ = r.bar.Set64(int64(s.Done * barSteps))
		return
	}
	now := time.Now()
	if !start && now.Sub(r.last) < logInterval && (s.Done < float64(s.Total) || s.Inner != "") {
		return
	}
	line := s.Line()
	if line == r.lastLine {
		return // a stage said done twice
	}
	r.last, r.lastLine = now, line
	fmt.Fprintln(r.w, line)
}

// closeBar clears the bar, if any.
func (r *reporter) closeBar() {
	if r.bar != nil {
		_ = r.bar.Finish()
		r.bar = nil
	}
}
