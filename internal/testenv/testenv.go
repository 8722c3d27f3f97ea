// Package testenv locates the shared data that some tests need.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// DataDir returns the folder named by the environment variable TDSC_DATA
// (the shared CAVE scenes and metric references). When it is unset or
// missing the test is skipped with a message saying so, except under CI
// (CI=true), where the absence of the data is a failure.
func DataDir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv("TDSC_DATA")
	why := ""
	if dir == "" {
		why = "TDSC_DATA is not set"
	} else if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		why = "TDSC_DATA=" + dir + " is not a folder"
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s: the shared data is required under CI", why)
		}
		tb.Skipf("%s: skipping the test that needs the shared data (set it to ../shared/data)", why)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return abs
}

// Path returns DataDir joined with elem, failing the test if that path does
// not exist.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	p := filepath.Join(append([]string{DataDir(tb)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("shared data incomplete: %v", err)
	}
	return p
}
