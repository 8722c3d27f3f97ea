package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"tdsc/internal/formats"
	"tdsc/internal/methods"
	"tdsc/internal/msi"
)

// shapeRuns are the command lines TestEveryShape runs on a cube in.npy
// (and its noisy copy noisy.npy): every command that reads a cube, and
// denoise with every method, with σ given and estimated.
func shapeRuns() [][]string {
	runs := [][]string{
		{"noise", "--input", "in.npy", "--sigma", "10", "--out", "n.npy"},
		{"eval", "--ref", "in.npy", "noisy.npy"},
		{"eval", "--noref", "noisy.npy"},
		{"eval", "--noref", "--noisy", "noisy.npy", "in.npy"},
		{"train", "--input", "noisy.npy", "--save-dict", "d.json", "--samples", "50", "--iters", "1"},
		{"inspect", "--noisy", "noisy.npy", "--out", "i.png", "in.npy"},
		{"compare", "--ref", "in.npy", "--out", "c.png", "noisy.npy"},
	}
	for _, s := range methods.All() {
		runs = append(runs,
			[]string{"denoise", "--method", s.Name, "--input", "noisy.npy", "--out", "d.npy"},
			[]string{"denoise", "--method", s.Name, "--input", "noisy.npy", "--out", "d.npy", "--sigma", "10", "--sparse-noise", "off"})
	}
	return runs
}

// TestEveryShape runs every command and method (shapeRuns) on cubes of
// every shape from 1×1×1 to 8×8×8 (under -short, the shapes with a side of
// 1 and a seeded sample of the others): each must exit 0, or 1 with a
// message, never crash (a Go panic exits 2 with a stack trace), and a
// refusal for the cube's size must say what size is needed ("at least").
// The commands run as the real binary: the test binary, named tdsc.
func TestEveryShape(t *testing.T) {
	bin := tdscBinary(t)
	var shapes [][3]int
	rng := rand.New(rand.NewPCG(31, 3))
	for h := 1; h <= 8; h++ {
		for w := 1; w <= 8; w++ {
			for b := 1; b <= 8; b++ {
				edge := h == 1 || w == 1 || b == 1
				if !testing.Short() || edge && rng.IntN(4) == 0 || rng.IntN(40) == 0 {
					shapes = append(shapes, [3]int{h, w, b})
				}
			}
		}
	}
	t.Logf("%d shapes × %d runs", len(shapes), len(shapeRuns()))
	var mu sync.Mutex
	sizeErrors := map[string]int{}
	for _, shape := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d", shape[0], shape[1], shape[2]), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeShape(t, dir, shape, rand.New(rand.NewPCG(uint64(shape[0]*100+shape[1]*10+shape[2]), 1)))
			for _, args := range shapeRuns() {
				cmd := exec.Command(bin, append(args, "--force", "--quiet")...)
				cmd.Dir = dir
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				var exit *exec.ExitError
				if err != nil && !errors.As(err, &exit) {
					t.Fatal(err)
				}
				msg := strings.TrimSpace(stderr.String())
				switch code := cmd.ProcessState.ExitCode(); {
				case code == 0:
				case code != 1 || strings.Contains(msg, "goroutine") || !strings.HasPrefix(msg, "tdsc: "):
					t.Errorf("tdsc %s: exit %d:\n%s", strings.Join(args, " "), code, firstLines(msg, 6))
				case strings.Contains(msg, fmt.Sprintf("%d×%d×%d", shape[0], shape[1], shape[2])) || strings.Contains(msg, "patch positions"):
					if !strings.Contains(msg, "at least") {
						t.Errorf("tdsc %s: the size needed is not said: %s", strings.Join(args, " "), msg)
					}
					mu.Lock()
					sizeErrors[args[0]]++
					mu.Unlock()
				}
			}
		})
	}
	t.Cleanup(func() { t.Logf("refused for their size, by command: %v", sizeErrors) })
}

// writeShape writes in.npy, a smooth cube of the given shape on the
// [0, 255] scale, and noisy.npy, it with Gaussian noise of σ 10.
func writeShape(t *testing.T, dir string, shape [3]int, rng *rand.Rand) {
	clean := msi.NewCube(shape[0], shape[1], shape[2])
	noisy := msi.NewCube(shape[0], shape[1], shape[2])
	for i := range clean.Data {
		clean.Data[i] = 60 + 100*float64(i%7)/7
		noisy.Data[i] = clean.Data[i] + 10*rng.NormFloat64()
	}
	for name, c := range map[string]*msi.Cube{"in.npy": clean, "noisy.npy": noisy} {
		if _, err := formats.Write(filepath.Join(dir, name), c, msi.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// tdscBinary returns the path of a link named tdsc to the test binary,
// which runs the command line when called so (TestMain).
func tdscBinary(t *testing.T) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "tdsc")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
