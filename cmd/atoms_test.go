package cmd

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// TestAtomsInterruptLeavesNoOutput cancels atoms the way SIGINT does, once
// before it starts and once when the patches are read and learning begins,
// and checks that it fails with context.Canceled and writes nothing.
func TestAtomsInterruptLeavesNoOutput(t *testing.T) {
	crop := filepath.Join("..", "testdata", "balloons_crop128")
	for _, marker := range []string{"", "patches of 16×16 pixels"} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		var stderr io.Writer = io.Discard
		if marker == "" {
			cancel()
		} else {
			stderr = &cancelOn{marker: marker, cancel: cancel}
		}
		err := runTDSC(ctx, stderr, "atoms", "--samples", "3000", "--iters", "30",
			"--out", filepath.Join(dir, "a.png"), "--dict", filepath.Join(dir, "a.json"), crop)
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("interrupted at %q: got error %v, want context.Canceled", marker, err)
		}
		if names := dirNames(t, dir); len(names) != 0 {
			t.Errorf("interrupted at %q: atoms left %v", marker, names)
		}
	}
}
