package batch

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// lines is a report.Reporter that keeps the log lines.
type lines []string

func (l *lines) Logf(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }
func (*lines) Start(string, string, int64)       {}
func (*lines) Update(int64, string)              {}
func (*lines) Finish()                           {}

// TestNeeded checks when a cell runs again: no result, a result of another
// fingerprint (said on the log), an unreadable result, --force, and
// --keep-outputs when the earlier run did not keep the cube.
func TestNeeded(t *testing.T) {
	root := t.TempDir()
	putResult(t, root, "s", 10, 1, "m", 0, 30, 0.8)
	c := Cell{Scene: Scene{"s", "/d/s"}, Sigma: 10, Seed: 1, Method: ResolvedMethod{Label: "m", Slug: "m", Name: "a"}}
	r := &Runner{Root: root}
	if need, why := r.needed(c); need || why != "" {
		t.Errorf("current result: needed = %v, %q", need, why)
	}
	if need, _ := (&Runner{Root: root, Force: true}).needed(c); !need {
		t.Error("--force: not needed")
	}
	if need, why := (&Runner{Root: root, KeepOutputs: true}).needed(c); !need || !strings.Contains(why, "not kept") {
		t.Errorf("--keep-outputs without the cube: needed = %v, %q", need, why)
	}
	other := c
	other.Method.Flags = []string{"--k=1"}
	if need, why := r.needed(other); !need || !strings.Contains(why, "s/sigma10-seed1/m: the result was made by a different plan (fingerprint "+c.Fingerprint()+", this plan's is "+other.Fingerprint()+")") {
		t.Errorf("other fingerprint: needed = %v, %q", need, why)
	}
	missing := c
	missing.Seed = 2
	if need, why := r.needed(missing); !need || why != "" {
		t.Errorf("no result: needed = %v, %q", need, why)
	}
	os.WriteFile(ResultPath(root, c), []byte("{"), 0o644)
	if need, why := r.needed(c); !need || !strings.Contains(why, "unreadable result") {
		t.Errorf("broken result: needed = %v, %q", need, why)
	}
}

// TestChildLog checks that a child's stderr reaches the log line by line,
// whatever the writes' boundaries, and that the error line is kept.
func TestChildLog(t *testing.T) {
	var got lines
	w := &childLog{id: "c", log: &got, forward: true}
	for _, p := range []string{"learn", "ed 30 atoms\r\n\ntdsc: --stride 9 is", " too large\nRun 'tdsc denoise --help' for usage.\n", "tail"} {
		w.Write([]byte(p))
	}
	w.flush()
	want := []string{"  c: learned 30 atoms", "  c: tdsc: --stride 9 is too large", "  c: Run 'tdsc denoise --help' for usage.", "  c: tail"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("log %q, want %q", got, want)
	}
	if w.lastLine() != "tdsc: --stride 9 is too large" {
		t.Errorf("error line %q", w.lastLine())
	}
	quiet := &childLog{id: "c", log: &got, forward: false}
	quiet.Write([]byte("only this\n"))
	if len(got) != len(want) || quiet.lastLine() != "only this" {
		t.Errorf("quiet: logged %q, last line %q", got[len(want):], quiet.lastLine())
	}
}
