package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// cancelOn is a stderr that calls cancel as soon as a write contains
// marker: a Ctrl-C at a known stage of a run, without timing.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(string(p), c.marker) {
		c.cancel()
	}
	return len(p), nil
}

// runTDSC runs the command line args in process, as Main does but with the
// given context and stderr.
func runTDSC(ctx context.Context, stderr io.Writer, args ...string) error {
	root := newRoot(io.Discard, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// dirNames lists the names in dir, hidden ones (temporary files) included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestInterruptLeavesNoOutput cancels train and denoise the way SIGINT does
// (through the command's context) in the middle of a run and checks that the
// run fails with context.Canceled and leaves no output, finished or not.
func TestInterruptLeavesNoOutput(t *testing.T) {
	dir := t.TempDir()
	crop := filepath.Join("..", "testdata", "balloons_crop128")
	noisy := filepath.Join(dir, "n.hdr")
	if err := runTDSC(context.Background(), io.Discard, "noise", "--input", crop, "--sigma", "30", "--out", noisy); err != nil {
		t.Fatal(err)
	}
	inputs := []string{"n.hdr", "n.img"}

	// denoise: interrupted when learning is over and coding begins.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelOn{marker: "learned ", cancel: cancel}
	err := runTDSC(ctx, stderr, "denoise", "--method", "2dsc", "--input", noisy, "--sigma", "30", "--samples", "2000", "--iters", "3",
		"--out", filepath.Join(dir, "out.hdr"), "--save-dict", filepath.Join(dir, "d.json"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("denoise: got error %v, want context.Canceled (stderr: %s)", err, stderr.buf.String())
	}
	if strings.Contains(stderr.buf.String(), "coded the patches") {
		t.Errorf("denoise finished coding although interrupted before: %s", stderr.buf.String())
	}
	if names := dirNames(t, dir); !slices.Equal(names, inputs) {
		t.Errorf("interrupted denoise left %v beside its input", names)
	}

	// denoise in strips: interrupted once the dictionary is learned, before
	// the strips are written; the output written so far is removed.
	ctx, cancel = context.WithCancel(context.Background())
	stderr = &cancelOn{marker: "learned ", cancel: cancel}
	err = runTDSC(ctx, stderr, "denoise", "--method", "2dsc", "--input", noisy, "--sigma", "30", "--samples", "2000", "--iters", "3",
		"--tile", "20", "--out", filepath.Join(dir, "out.hdr"), "--save-dict", filepath.Join(dir, "d.json"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("denoise --tile: got error %v, want context.Canceled (stderr: %s)", err, stderr.buf.String())
	}
	if names := dirNames(t, dir); !slices.Equal(names, inputs) {
		t.Errorf("interrupted denoise --tile left %v beside its input", names)
	}

	// train: interrupted while learning.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	err = runTDSC(ctx, io.Discard, "train", "--input", noisy, "--sigma", "30", "--samples", "5000", "--iters", "10",
		"--out", filepath.Join(dir, "d.json"), "--atoms-png", filepath.Join(dir, "atoms.png"))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("train: got error %v, want context.Canceled", err)
	}
	if names := dirNames(t, dir); !slices.Equal(names, inputs) {
		t.Errorf("interrupted train left %v beside its input", names)
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, 0, ""},
		{errors.New("x.hdr: no such file or folder"), 1, "tdsc: x.hdr: no such file or folder\n"},
		{context.Canceled, 130, "tdsc: interrupted\n"},
		{fmt.Errorf("coding: %w", context.Canceled), 130, "tdsc: interrupted\n"},
	} {
		var buf bytes.Buffer
		if code := exitCode(c.err, &buf); code != c.code || buf.String() != c.stderr {
			t.Errorf("%v: exit code %d, stderr %q; want %d, %q", c.err, code, buf.String(), c.code, c.stderr)
		}
	}
}
