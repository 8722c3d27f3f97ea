package pngstack

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"tdsc/internal/msi"
	"tdsc/internal/testenv/cubetest"
)

// dirNames returns the sorted names in dir.
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

func TestPNGStackRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	c := cubetest.Uniform(rng, 9, 14, 31, -20, 275)
	c.Data[0], c.Data[1], c.Data[2] = 0, 255, 127.5
	wantClipped := 0
	for _, v := range c.Data {
		if v < 0 || v > 255 {
			wantClipped++
		}
	}
	dir := filepath.Join(t.TempDir(), "my_scene")
	clipped, err := writeStack(dir, c, "", msi.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if clipped != wantClipped {
		t.Errorf("clipped %d voxels, want %d", clipped, wantClipped)
	}
	names := dirNames(t, dir)
	if len(names) != 31 || names[0] != "my_scene_01.png" || names[30] != "my_scene_31.png" {
		t.Fatalf("files %v, want my_scene_01.png .. my_scene_31.png", names)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("output folder mode %v (%v), want 0755", fi.Mode().Perm(), err)
	}
	got, scene, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if scene != "my_scene" || !got.SameSize(c) {
		t.Fatalf("read back scene %q size %s, want my_scene %s", scene, got.Size(), c.Size())
	}
	const tol = 0.5*255/65535 + 1e-12
	for i, v := range c.Data {
		want := min(max(v, 0), 255)
		if math.Abs(got.Data[i]-want) > tol {
			t.Fatalf("voxel %d: wrote %v, read %v, want within %v of %v", i, v, got.Data[i], tol, want)
		}
	}
	if got.Data[0] != 0 || got.Data[1] != 255 {
		t.Errorf("0 and 255 read back as %v and %v", got.Data[0], got.Data[1])
	}
}

func TestPNGStackManyBandsAndScene(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	c := cubetest.Uniform(rng, 2, 3, 100, 0, 255)
	c.Wavelengths = make([]float64, 100)
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := writeStack(dir, c, "wide", msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	names := dirNames(t, dir)
	if len(names) != 100 || names[0] != "wide_001.png" || names[99] != "wide_100.png" {
		t.Fatalf("files %v, want wide_001.png .. wide_100.png", names)
	}
	got, scene, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if scene != "wide" || got.Bands != 100 || got.Wavelengths != nil {
		t.Fatalf("read back scene %q, %d bands, wavelengths %v", scene, got.Bands, got.Wavelengths)
	}
	for i, v := range c.Data {
		if math.Abs(got.Data[i]-v) > 0.5*255/65535+1e-12 {
			t.Fatalf("voxel %d: wrote %v, read %v", i, v, got.Data[i])
		}
	}
}

func TestPNGStackOverwrite(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	first := cubetest.Uniform(rng, 4, 5, 5, 0, 255)
	second := cubetest.Uniform(rng, 4, 5, 3, 0, 255)
	parent := t.TempDir()
	dir := filepath.Join(parent, "s")
	if _, err := writeStack(dir, first, "", msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := writeStack(dir, second, "", msi.WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second write without force: got %v, want an 'already exists' error naming %s", err, dir)
	}
	if n := len(dirNames(t, dir)); n != 5 {
		t.Fatalf("refused write changed the folder: %d files, want 5", n)
	}
	if _, err := writeStack(dir, second, "", msi.WriteOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	got, _, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Bands != 3 || len(dirNames(t, dir)) != 3 {
		t.Fatalf("after force: %d bands, files %v; want the 3 new bands only", got.Bands, dirNames(t, dir))
	}
	if names := dirNames(t, parent); !slices.Equal(names, []string{"s"}) {
		t.Errorf("parent holds %v after force, want only s", names)
	}

	// Force does not replace a folder holding other things, nor a file.
	other := filepath.Join(parent, "docs")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, other, "thesis.tex", []byte("precious"))
	_, err = writeStack(other, second, "", msi.WriteOptions{Force: true})
	if err == nil || !strings.Contains(err.Error(), "thesis.tex") {
		t.Fatalf("force over a folder with a .tex file: got %v, want a refusal naming it", err)
	}
	if names := dirNames(t, other); !slices.Equal(names, []string{"thesis.tex"}) {
		t.Fatalf("refused folder now holds %v", names)
	}
	file := writeFile(t, parent, "plain", []byte("x"))
	if _, err := writeStack(file, second, "", msi.WriteOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Fatalf("force over a file: got %v, want a refusal", err)
	}
}

// TestPNGStackNoPartialOutput makes a write fail after some bands are
// written (the last band holds a NaN) and checks that nothing is left
// behind and an existing output is kept.
func TestPNGStackNoPartialOutput(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	bad := cubetest.Uniform(rng, 6, 7, 8, 0, 255)
	bad.Set(5, 2, 7, math.Inf(-1))
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	_, err := writeStack(dir, bad, "", msi.WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "band 7, line 5, sample 2") {
		t.Fatalf("got %v, want an error naming %s and the infinite value's position", err, dir)
	}
	if names := dirNames(t, parent); len(names) != 0 {
		t.Fatalf("failed write left %v behind", names)
	}

	good := cubetest.Uniform(rng, 6, 7, 8, 0, 255)
	if _, err := writeStack(dir, good, "", msi.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	before, _, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writeStack(dir, bad, "", msi.WriteOptions{Force: true}); err == nil {
		t.Fatal("forced write of a cube with an infinite value succeeded")
	}
	after, _, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before.Data, after.Data) {
		t.Error("a failed forced write changed the existing output")
	}
	if names := dirNames(t, parent); !slices.Equal(names, []string{"out"}) {
		t.Errorf("parent holds %v, want only out", names)
	}

	// A missing parent folder fails before anything is written.
	deep := filepath.Join(parent, "no", "such")
	if _, err := writeStack(deep, good, "", msi.WriteOptions{}); err == nil || !strings.Contains(err.Error(), deep) {
		t.Errorf("write under a missing folder: got %v, want an error naming %s", err, deep)
	}
}

func TestPNGStackWriteErrors(t *testing.T) {
	parent := t.TempDir()
	ok := msi.NewCube(2, 2, 2)
	cases := []struct {
		name  string
		path  string
		c     *msi.Cube
		scene string
		want  string
	}{
		{"short data", "a", &msi.Cube{Height: 2, Width: 2, Bands: 2, Data: make([]float64, 7)}, "", "has 7 values"},
		{"wavelength count", "b", &msi.Cube{Height: 1, Width: 1, Bands: 2, Data: make([]float64, 2), Metadata: msi.Metadata{Wavelengths: []float64{1}}}, "", "wavelengths"},
		{"hidden scene", ".c", ok, "", "scene name"},
		{"scene with a slash", "d", ok, "x/y", "scene name"},
		{"infinity", "e", &msi.Cube{Height: 1, Width: 1, Bands: 1, Data: []float64{math.Inf(1)}}, "", "+Inf"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(parent, tc.path)
			_, err := writeStack(path, tc.c, tc.scene, msi.WriteOptions{})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %s and containing %q", err, path, tc.want)
			}
			if names := dirNames(t, parent); len(names) != 0 {
				t.Fatalf("failed write left %v", names)
			}
		})
	}
}

func BenchmarkWriteStack(b *testing.B) {
	rng := rand.New(rand.NewPCG(19, 20))
	c := cubetest.Uniform(rng, 512, 512, 31, 0, 255)
	parent := b.TempDir()
	i := 0
	for b.Loop() {
		if _, err := writeStack(filepath.Join(parent, fmt.Sprint(i)), c, "", msi.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// TestPNGStackMissing checks that a missing (NaN) voxel, which a PNG
// cannot mark, is written as 0 and not counted as clipped.
func TestPNGStackMissing(t *testing.T) {
	c := msi.NewCube(2, 2, 1)
	copy(c.Data, []float64{10, math.NaN(), 300, 20})
	dir := filepath.Join(t.TempDir(), "m")
	clipped, err := writeStack(dir, c, "", msi.WriteOptions{})
	if err != nil || clipped != 1 {
		t.Fatalf("clipped %d, %v; want the one value over 255", clipped, err)
	}
	back, _, err := Read(dir)
	if err != nil || back.Data[1] != 0 || back.Data[2] != 255 {
		t.Fatalf("read back %v, %v", back.Data, err)
	}
}
