package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// names lists the entries of dir, so that a test sees any temporary or
// set-aside file left behind.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func content(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func create(t *testing.T, path string, force bool, s string) *File {
	t.Helper()
	f, err := Create(path, force)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCommitWritesAndLeavesNothingElse(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	if err := Commit(create(t, p, false, "hello")); err != nil {
		t.Fatal(err)
	}
	if got := content(t, p); got != "hello" {
		t.Errorf("content %q, want hello", got)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if got := names(t, dir); !slices.Equal(got, []string{"out.txt"}) {
		t.Errorf("folder holds %v", got)
	}
}

func TestExistingOutput(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.txt")
	write(t, p, "old")
	_, err := Create(p, false)
	var exists *ExistsError
	if !errors.As(err, &exists) || exists.Path != p || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create without force over an existing file: %v, want an *ExistsError for %s", err, p)
	}
	if err := Refuse("", filepath.Join(dir, "missing"), p); !errors.As(err, &exists) || exists.Path != p {
		t.Errorf("Refuse: %v, want an *ExistsError for %s", err, p)
	}
	if err := Refuse(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("Refuse of a missing path: %v", err)
	}
	if err := Commit(create(t, p, true, "new")); err != nil {
		t.Fatal(err)
	}
	if got := content(t, p); got != "new" {
		t.Errorf("after a forced write: %q, want new", got)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(sub, true); err == nil {
		t.Error("Create with force over a folder: no error")
	}
	if got := names(t, dir); !slices.Equal(got, []string{"out.txt", "sub"}) {
		t.Errorf("folder holds %v", got)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f := create(t, filepath.Join(dir, "out.txt"), false, "x")
	f.Abort()
	f.Abort()
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("folder holds %v after Abort", got)
	}
	if err := Commit(f); err == nil {
		t.Error("Commit after Abort: no error")
	}
}

// A pair whose second rename fails must leave both old files as they were:
// the first new file is taken back out and the old one put back.
func TestCommitSetFailingRenameRestoresBoth(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "x.img"), filepath.Join(dir, "x.hdr")
	write(t, a, "old data")
	write(t, b, "old header")
	fa := create(t, a, true, "new data")
	fb := create(t, b, true, "new header")
	// Removing fb's temporary file makes its rename fail after fa's has
	// been done.
	if err := os.Remove(fb.tmp.Name()); err != nil {
		t.Fatal(err)
	}
	if err := Commit(fa, fb); err == nil {
		t.Fatal("Commit with a missing temporary file: no error")
	}
	if got := content(t, a); got != "old data" {
		t.Errorf("%s holds %q, want the old data", a, got)
	}
	if got := content(t, b); got != "old header" {
		t.Errorf("%s holds %q, want the old header", b, got)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"x.hdr", "x.img"}) {
		t.Errorf("folder holds %v", got)
	}
}

// A pair where there was nothing before leaves nothing when it fails.
func TestCommitSetFailingRenameLeavesNeitherHalf(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "x.img"), filepath.Join(dir, "x.hdr")
	fa := create(t, a, false, "new data")
	fb := create(t, b, false, "new header")
	if err := os.Remove(fb.tmp.Name()); err != nil {
		t.Fatal(err)
	}
	if err := Commit(fa, fb); err == nil {
		t.Fatal("Commit with a missing temporary file: no error")
	}
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("folder holds %v, want nothing", got)
	}
}

func TestCommitSetReplacesBoth(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "x.img"), filepath.Join(dir, "x.hdr")
	write(t, a, "old data")
	if err := Commit(create(t, a, true, "new data"), create(t, b, true, "new header")); err != nil {
		t.Fatal(err)
	}
	if content(t, a) != "new data" || content(t, b) != "new header" {
		t.Errorf("got %q and %q", content(t, a), content(t, b))
	}
	if got := names(t, dir); !slices.Equal(got, []string{"x.hdr", "x.img"}) {
		t.Errorf("folder holds %v", got)
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "stack") + string(filepath.Separator)
	for i, want := range []string{"first", "second"} {
		d, err := CreateDir(out, i > 0)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(d.Temp(), "band.txt"), want)
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := content(t, filepath.Join(dir, "stack", "band.txt")); got != want {
			t.Errorf("write %d: %q, want %q", i, got, want)
		}
		if got := names(t, dir); !slices.Equal(got, []string{"stack"}) {
			t.Errorf("write %d: folder holds %v", i, got)
		}
	}
	var exists *ExistsError
	if _, err := CreateDir(out, false); !errors.As(err, &exists) {
		t.Errorf("CreateDir without force over a folder: %v, want an *ExistsError", err)
	}
	d, err := CreateDir(filepath.Join(dir, "other"), false)
	if err != nil {
		t.Fatal(err)
	}
	d.Abort()
	if got := names(t, dir); !slices.Equal(got, []string{"stack"}) {
		t.Errorf("after Abort the folder holds %v", got)
	}
	write(t, filepath.Join(dir, "file"), "x")
	if _, err := CreateDir(filepath.Join(dir, "file"), true); err == nil {
		t.Error("CreateDir with force over a file: no error")
	}
}

func TestWriteAtAfterBufferedWrites(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.bin")
	f := create(t, p, false, "head")
	// Out of order, past the end, and over what Write buffered.
	for _, w := range []struct {
		s   string
		off int64
	}{{"WXYZ", 8}, {"ab", 4}, {"cd", 6}, {"H", 0}} {
		if _, err := f.WriteAt([]byte(w.s), w.off); err != nil {
			t.Fatal(err)
		}
	}
	if err := Commit(f); err != nil {
		t.Fatal(err)
	}
	if got := content(t, p); got != "HeadabcdWXYZ" {
		t.Errorf("content %q, want HeadabcdWXYZ", got)
	}
	if _, err := f.WriteAt([]byte("x"), 0); err == nil {
		t.Error("WriteAt after Commit succeeded")
	}
}

// TestMissingFolder: an output in a folder that does not exist is an
// error that names the user's path and the folder, not a temporary name,
// from Check before the work and from Create and CreateDir alike.
func TestMissingFolder(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "none", "x.npy")
	want := out + ": the folder " + filepath.Join(dir, "none") + " does not exist"
	errs := map[string]error{"Check": Check(false, out)}
	_, errs["Create"] = Create(out, false)
	_, errs["CreateDir"] = CreateDir(out, false)
	for name, err := range errs {
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
	}
	if err := Check(false, filepath.Join(dir, "x.npy"), ""); err != nil {
		t.Errorf("Check in an existing folder: %v", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("Check left %d files", len(names))
	}
}
