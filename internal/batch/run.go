package batch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"tdsc/internal/formats"
	"tdsc/internal/metrics"
	"tdsc/internal/metrics/scorejson"
	"tdsc/internal/msi"
	"tdsc/internal/noise"
	"tdsc/internal/report"
)

// Runner runs cells one after the other. Each cell is a child process
// `Exe denoise …` on the group's noisy cube: the child's peak memory is the
// cell's alone, what it allocates is returned when it ends, and a cell that
// crashes or is killed for memory fails alone.
type Runner struct {
	// Root is the output root.
	Root string
	// Exe is the tdsc executable that denoises.
	Exe string
	// Version is recorded in every result.
	Version string
	// Threads is passed to denoise as --threads when positive.
	Threads int
	// Force redoes cells whose results are current.
	Force bool
	// KeepOutputs keeps the denoised cubes beside their results.
	KeepOutputs bool
	// Quiet runs the children with --quiet instead of passing their log
	// lines on.
	Quiet bool
	// Report receives the log lines (nil: none).
	Report report.Reporter
}

// Summary counts what Run did.
type Summary struct {
	// Ran cells were denoised and scored; Current ones had a current
	// result already; Failed ones ran and failed (Failures says why, one
	// line each).
	Ran, Current, Failed int
	Failures             []string
}

// Run runs the cells of groups that have no current result. A failing
// cell is logged and counted, and the run goes on with the next; when ctx
// is cancelled the cell in flight is stopped (its child gets an interrupt)
// and Run returns ctx.Err(), having lost only that cell.
func (r *Runner) Run(ctx context.Context, groups []Group) (Summary, error) {
	log := report.OrDiscard(r.Report)
	var sum Summary
	total, done := CellCount(groups), 0
	fail := func(c Cell, err error) {
		sum.Failed++
		sum.Failures = append(sum.Failures, c.ID()+": "+err.Error())
		log.Logf("%s: FAILED: %v", c.ID(), err)
	}
	for _, g := range groups {
		var todo []Cell
		for _, c := range g.Cells {
			need, why := r.needed(c)
			if why != "" {
				log.Logf("%s", why)
			}
			if need {
				todo = append(todo, c)
			} else {
				sum.Current++
				done++
			}
		}
		if len(todo) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		clean, err := r.makeNoisy(g)
		if err != nil {
			for _, c := range todo {
				fail(c, err)
				done++
			}
			continue
		}
		for _, c := range todo {
			if err := ctx.Err(); err != nil {
				return sum, err
			}
			done++
			log.Logf("[%d/%d] %s", done, total, c.ID())
			res, err := r.runCell(ctx, c, clean)
			if ctxErr := ctx.Err(); ctxErr != nil {
				return sum, ctxErr
			}
			if err != nil {
				fail(c, err)
				continue
			}
			sum.Ran++
			log.Logf("%s: PSNR %.4f dB, SSIM %.4f, SAM %.4f°, ERGAS %.4f; %.1f s, %s peak", c.ID(),
				float64(res.PSNR), float64(res.SSIM), float64(res.SAM), float64(res.ERGAS), res.WallSeconds, megabytes(res.PeakRSSBytes))
		}
	}
	return sum, nil
}

// ResultPath is the result file of c under root.
func ResultPath(root string, c Cell) string {
	return filepath.Join(root, filepath.FromSlash(c.ID())+".json")
}

// NoisyPath is the noisy cube of g under root.
func NoisyPath(root string, g Group) string {
	return filepath.Join(root, filepath.FromSlash(g.Dir()), reservedSlug+".hdr")
}

// needed says whether c must run, and why when a result is there but is
// not current (a line for the log; empty otherwise).
func (r *Runner) needed(c Cell) (bool, string) {
	if r.Force {
		return true, ""
	}
	path := ResultPath(r.Root, c)
	if !fileExists(path) {
		return true, ""
	}
	res, err := ReadResult(path)
	switch {
	case err != nil:
		return true, fmt.Sprintf("%s: unreadable result (%v): redoing it", c.ID(), err)
	case res.Fingerprint != c.Fingerprint():
		return true, fmt.Sprintf("%s: the result was made by a different plan (fingerprint %s, this plan's is %s): redoing it",
			c.ID(), res.Fingerprint, c.Fingerprint())
	case r.KeepOutputs && !fileExists(r.outputPath(c)):
		return true, fmt.Sprintf("%s: the denoised cube was not kept: redoing it", c.ID())
	}
	return false, ""
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// outputPath is the denoised cube of c.
func (r *Runner) outputPath(c Cell) string {
	return filepath.Join(r.Root, filepath.FromSlash(c.ID())+".hdr")
}

// makeNoisy reads the clean scene of g, adds its noise and writes the noisy
// cube (atomically, replacing an older one: the noise is a function of the
// scene, σ and the seed, so the same plan writes the same bytes) in the
// scene's units, as tdsc noise does. It returns the clean cube, to score
// the cells against.
func (r *Runner) makeNoisy(g Group) (*msi.Cube, error) {
	clean, err := formats.Open(g.Scene.Path)
	if err != nil {
		return nil, err
	}
	path := NoisyPath(r.Root, g)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	noisy := noise.Add(nil, clean, g.Sigma, g.Seed)
	noisy.Processing = fmt.Sprintf("tdsc batch: %s with noise σ = %s, seed %d", g.Scene.Path, formatSigma(g.Sigma), g.Seed)
	if _, err := formats.Write(path, noisy, msi.WriteOptions{Force: true}.Like(clean.Stored, false)); err != nil {
		return nil, err
	}
	return clean, nil
}

// runCell denoises c's noisy cube in a child process, scores the result
// against clean and writes the result file.
func (r *Runner) runCell(ctx context.Context, c Cell, clean *msi.Cube) (*Result, error) {
	g := Group{Scene: c.Scene, Sigma: c.Sigma, Seed: c.Seed}
	out := r.outputPath(c)
	args := []string{"denoise", "--method", c.Method.Name}
	args = append(args, c.Method.Flags...)
	args = append(args, "--input", NoisyPath(r.Root, g), "--sigma", formatSigma(c.Sigma), "--out", out, "--force")
	if r.Threads > 0 {
		args = append(args, "--threads", strconv.Itoa(r.Threads))
	}
	if r.Quiet {
		args = append(args, "--quiet")
	}
	child := exec.CommandContext(ctx, r.Exe, args...)
	// An interrupt lets the child remove its temporary files; one that
	// does not stop within the delay is killed.
	child.Cancel = func() error { return child.Process.Signal(os.Interrupt) }
	child.WaitDelay = 30 * time.Second
	stderr := &childLog{id: c.ID(), log: report.OrDiscard(r.Report), forward: !r.Quiet}
	child.Stderr = stderr
	setDeathSignal(child)

	start := time.Now()
	err := runLocked(child)
	wall := time.Since(start)
	stderr.flush()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		removeCube(out)
		if last := stderr.lastLine(); last != "" {
			return nil, fmt.Errorf("denoise: %s", strings.TrimPrefix(last, "tdsc: "))
		}
		return nil, fmt.Errorf("denoise: %v", err)
	}
	x, err := formats.Open(out)
	var rep *metrics.Report
	if err == nil {
		rep, err = metrics.Evaluate(ctx, clean, x)
	}
	if !r.KeepOutputs {
		// Removed before the result is written, so that a run killed in
		// between leaves a cell to do again, not a done cell's cube.
		removeCube(out)
		if stderr.forward { // after the child's "wrote" line, the truth
			report.OrDiscard(r.Report).Logf("  %s: removed %s (--keep-outputs keeps the denoised cubes)", c.ID(), out)
		}
	}
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	res := &Result{
		Format: ResultFormat, Cell: c.ID(),
		Scene: c.Scene.Name, ScenePath: c.Scene.Path, Sigma: c.Sigma, Seed: c.Seed,
		Label: c.Method.Label, Method: c.Method.Name, Flags: c.Method.Flags, MethodIndex: c.Method.Index,
		PSNR: scorejson.Float(rep.PSNR), SSIM: scorejson.Float(rep.SSIM), SAM: scorejson.Float(rep.SAM), ERGAS: scorejson.Float(rep.ERGAS),
		WallSeconds:  wall.Seconds(),
		PeakRSSBytes: maxRSS(child.ProcessState),
		Threads:      r.Threads,
		Command:      append([]string{"tdsc"}, args...),
		Version:      r.Version, Host: host,
		Finished:    time.Now().UTC().Format(time.RFC3339),
		Fingerprint: c.Fingerprint(),
	}
	if r.KeepOutputs {
		res.Output = filepath.Base(out)
	}
	if err := writeResult(ResultPath(r.Root, c), res); err != nil {
		return nil, err
	}
	return res, nil
}

// runLocked runs cmd with the calling goroutine on one OS thread: the
// death signal of Linux follows the thread that started the child, which
// must therefore live as long as the child.
func runLocked(cmd *exec.Cmd) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Run()
}

// removeCube removes the ENVI pair at path (.hdr) if it is there.
func removeCube(path string) {
	stem := strings.TrimSuffix(path, filepath.Ext(path))
	os.Remove(stem + ".hdr")
	os.Remove(stem + ".img")
}

// megabytes formats a byte count for the log.
func megabytes(n int64) string {
	if n <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f MB", float64(n)/1e6)
}

// childLog is a child's stderr: whole lines are passed to the log, each
// with the cell's id in front, and the last one is kept for the error of a
// failed run.
type childLog struct {
	id      string
	log     report.Reporter
	forward bool

	mu   sync.Mutex
	part []byte
	// last is the last line, and errLine the last that was an error of
	// tdsc ("tdsc: …"), which a usage hint may follow.
	last, errLine string
}

func (w *childLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.part[:i]))
		w.part = w.part[i+1:]
	}
	return len(p), nil
}

func (w *childLog) line(s string) {
	s = strings.TrimRight(s, "\r")
	if s == "" {
		return
	}
	w.last = s
	if strings.HasPrefix(s, "tdsc: ") {
		w.errLine = s
	}
	if w.forward {
		w.log.Logf("  %s: %s", w.id, s)
	}
}

// flush passes on a last line without a newline.
func (w *childLog) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.part) > 0 {
		w.line(string(w.part))
		w.part = nil
	}
}

// lastLine is the last error line of tdsc, else the last line.
func (w *childLog) lastLine() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.errLine != "" {
		return w.errLine
	}
	return w.last
}
