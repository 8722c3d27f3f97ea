package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBatchShardedResume runs a small plan the way a cluster would: two
// shards through GNU parallel, one of them first killed (SIGKILL, as a
// lost node or an exceeded time limit) once its first cell is done and
// then rerun, and checks that the merged report equals that of a single
// unsharded run, that the rerun kept the finished cell, and that nothing
// half-written is left. It runs the tdsc executable that TestMain puts on
// PATH (this test binary under the name tdsc).
func TestBatchShardedResume(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: denoises 9 cells")
	}
	parallel, err := exec.LookPath("parallel")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("GNU parallel is not installed: it is required under CI (apt-get install parallel)")
		}
		t.Skip("GNU parallel is not installed (apt-get install parallel): skipping the sharded batch run")
	}
	tdsc, err := exec.LookPath("tdsc")
	if err != nil {
		t.Fatalf("tdsc is not on PATH: %v", err)
	}
	crop, err := filepath.Abs(filepath.Join("..", "testdata", "balloons_crop128"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fast := []string{"--samples", "300", "--iters", "2", "--stride", "5", "--code-iters", "5"}
	plan := map[string]any{
		"scenes": []string{crop},
		"sigmas": []float64{15, 40},
		"methods": []map[string]any{
			{"label": "2dsc", "method": "2dsc", "flags": fast},
			{"label": "sc", "method": "sc", "flags": append([]string{"--atoms", "40"}, fast...)},
		},
		"out": "sharded",
	}
	data, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sharded := filepath.Join(dir, "sharded")
	run := func(name string, args ...string) string {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir = dir
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		if err := c.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String() + stderr.String()
	}

	// Shard 1 alone, killed as soon as its first result is there.
	first := exec.Command(tdsc, "batch", "--plan", planFile, "--shard", "1/2", "--threads", "1", "-q")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	var done []string
	for len(done) == 0 {
		if time.Now().After(deadline) {
			first.Process.Kill()
			first.Wait()
			t.Fatal("shard 1 wrote no result within 2 minutes")
		}
		time.Sleep(20 * time.Millisecond)
		done, _ = filepath.Glob(filepath.Join(sharded, "*", "*", "*.json"))
	}
	first.Process.Kill()
	first.Wait()
	if len(done) > 1 {
		t.Logf("shard 1 finished %d cells before it was killed", len(done))
	}

	// Both shards through GNU parallel; the rerun of shard 1 keeps what
	// the killed run finished.
	log := run(parallel, "--halt", "now,fail=1", tdsc, "batch", "--plan", planFile, "--threads", "1", "--shard", "{}/2", ":::", "1", "2")
	if !strings.Contains(log, "batch: 2 cells (shard 1/2 of 4)") || !strings.Contains(log, "batch: 2 cells (shard 2/2 of 4)") {
		t.Errorf("the parallel run's log does not show both shards:\n%s", log)
	}
	if !regexp.MustCompile(`(?m)^batch: [0-9]+ denoised, [1-9][0-9]* done before, 0 failed$`).MatchString(log) {
		t.Errorf("the rerun of shard 1 redid the cell the killed run had finished:\n%s", log)
	}

	// The same plan in one process, elsewhere.
	run(tdsc, "batch", "--plan", planFile, "--out", filepath.Join(dir, "single"), "--threads", "2", "-q")
	for format, lines := range map[string]int{"": 6, "--csv": 5} {
		args := []string{"batch", "report", sharded}
		if format != "" {
			args = append(args, format)
		}
		got := run(tdsc, args...)
		args[2] = filepath.Join(dir, "single")
		want := run(tdsc, args...)
		if got != want {
			t.Errorf("report %s of the sharded run:\n%s\nof the single run:\n%s", format, got, want)
		}
		if strings.Contains(got, "—") || strings.Count(got, "\n") != lines {
			t.Errorf("report %s is not complete (2 rows and 2 means of 2 methods):\n%s", format, got)
		}
	}

	// Nothing half-written: no temporary files, no denoised cubes (not
	// kept), a noisy cube and two results per group.
	filepath.WalkDir(sharded, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") || !d.IsDir() && !strings.HasPrefix(name, "noisy.") && !strings.HasSuffix(name, ".json") {
			t.Errorf("left behind: %s", path)
		}
		return nil
	})
	again := run(tdsc, "batch", "--plan", planFile)
	if !strings.Contains(again, "batch: 0 denoised, 4 done before, 0 failed") {
		t.Errorf("a rerun of the finished plan did something:\n%s", again)
	}
}
