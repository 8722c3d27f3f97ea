// Package report defines how a long computation tells its caller what it is
// doing: log lines and the progress of stages. The command line implements
// it on stderr (a bar on a terminal, a plain line now and then otherwise);
// library callers pass Discard or their own.
package report

// Reporter receives log lines and the progress of one stage at a time:
// Start opens a stage of total units, Update says how many are done (with an
// optional detail), Finish closes it. Calls come from one goroutine at a
// time.
type Reporter interface {
	Logf(format string, args ...any)
	Start(stage, unit string, total int64)
	Update(done int64, detail string)
	Finish()
}

// Discard is a Reporter that drops everything.
var Discard Reporter = discard{}

type discard struct{}

func (discard) Logf(string, ...any)         {}
func (discard) Start(string, string, int64) {}
func (discard) Update(int64, string)        {}
func (discard) Finish()                     {}

// OrDiscard returns r, or Discard when r is nil.
func OrDiscard(r Reporter) Reporter {
	if r == nil {
		return Discard
	}
	return r
}

// Lazy returns update, which reports on r that done of total units of
// stage are done, opening the stage (Start) on its first call, and
// finish, which closes the stage if update opened it: for a pass that
// runs only when it is needed.
func Lazy(r Reporter, stage, unit string, total int64) (update func(done int64), finish func()) {
	started := false
	update = func(done int64) {
		if !started {
			r.Start(stage, unit, total)
			started = true
		}
		r.Update(done, "")
	}
	finish = func() {
		if started {
			r.Finish()
		}
	}
	return update, finish
}

// StagesOnly returns a Reporter that passes the stages to r (nil: none)
// and drops the log lines: for the method that denoises each strip of a
// cube, whose stages show as the strips' progress (Nester) while lines
// said once per strip would repeat for every strip.
func StagesOnly(r Reporter) Reporter { return stagesOnly{OrDiscard(r)} }

type stagesOnly struct{ Reporter }

func (stagesOnly) Logf(string, ...any) {}
