package cmd

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// logInterval is how often a plain progress line is printed when stderr is
// not a terminal (logs of batch jobs should stay short).
const logInterval = 5 * time.Second

// reporter writes progress and log lines to stderr: a progress bar when
// stderr is a terminal, a plain line every few seconds otherwise, nothing
// with --quiet. Results never go through it.
type reporter struct {
	w     io.Writer
	quiet bool
	tty   bool

	bar   *progressbar.ProgressBar
	desc  string
	unit  string
	total int64
	start time.Time
	last  time.Time
}

func newReporter(cmd *cobra.Command) *reporter {
	quiet, _ := cmd.Flags().GetBool("quiet")
	w := cmd.ErrOrStderr()
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &reporter{w: w, quiet: quiet, tty: tty}
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
// as in "patches"), which names the rate.
func (r *reporter) Start(desc, unit string, total int64) {
	r.Finish()
	r.desc, r.unit, r.total = desc, unit, total
	r.start, r.last = time.Now(), time.Now()
	if r.quiet || !r.tty {
		return
	}
	r.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(r.w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// Update reports that done of total steps are complete; detail (may be
// empty) is shown beside the count.
func (r *reporter) Update(done int64, detail string) {
	if r.quiet {
		return
	}
	if r.bar != nil {
		if detail != "" {
			r.bar.Describe(r.desc + " " + detail)
		}
		_ = r.bar.Set64(done)
		return
	}
	now := time.Now()
	if now.Sub(r.last) < logInterval && done < r.total {
		return
	}
	r.last = now
	line := fmt.Sprintf("%s: %d/%d", r.desc, done, r.total)
	if detail != "" {
		line += " " + detail
	}
	if el := now.Sub(r.start).Seconds(); el > 0 && done > 0 && done < r.total {
		left := time.Duration(float64(r.total-done) / float64(done) * el * float64(time.Second))
		line += fmt.Sprintf(" (%s, %s left)", rate(float64(done)/el, r.unit), left.Round(time.Second))
	}
	fmt.Fprintln(r.w, line)
}

// Finish ends the current stage, if any.
func (r *reporter) Finish() {
	if r.bar != nil {
		_ = r.bar.Finish()
		r.bar = nil
	}
}

// rate formats a speed in units per second, or in seconds per unit when a
// step takes longer than a second (where "0/s" would say nothing).
func rate(perSecond float64, unit string) string {
	if perSecond >= 1 {
		return fmt.Sprintf("%.0f %s/s", perSecond, unit)
	}
	return fmt.Sprintf("%.1f s per step", 1/perSecond)
}
