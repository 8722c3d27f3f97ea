// Package atomicfile writes outputs so that a reader, or a run that fails or
// is interrupted, sees either what was there before or the whole new
// output, never a part of it.
//
// A File is written under a temporary name in the destination's folder
// (hidden: a dot, the destination's name, ".tmp-" and a random suffix) and
// renamed into place by Commit; Abort removes it. Commit of several files
// (an ENVI header and its data) renames them as a set: if one rename fails,
// the ones already done are undone and the files they replaced are put
// back. A Dir does the same for a folder built in full beside its
// destination.
//
// An existing destination is an *ExistsError unless force is set. The
// package's errors name the destination; they do not say how a user of a
// particular program replaces an existing output, which is that program's
// business.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ExistsError reports an output that exists and may not be replaced.
// errors.Is(err, fs.ErrExist) holds for it.
type ExistsError struct {
	Path string
}

func (e *ExistsError) Error() string { return e.Path + " already exists" }

// Is makes errors.Is(err, fs.ErrExist) true.
func (e *ExistsError) Is(target error) bool { return target == fs.ErrExist }

// Refuse returns an *ExistsError for the first of paths that exists
// (without following a final symbolic link), or the error of looking. Empty
// paths are skipped. Commands call it before long work, so that a run that
// could not write its result does not start.
func Refuse(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		_, ok, err := lstat(p)
		if err != nil {
			return err
		}
		if ok {
			return &ExistsError{Path: p}
		}
	}
	return nil
}

// Check returns the error that creating the outputs paths (files or
// folders; empty paths are skipped) would meet, found without writing
// them: an *ExistsError for one that exists (unless force is set), and a
// folder to hold one that does not exist, is not a folder or cannot be
// written (tried by creating and removing a hidden file in it). Commands
// call it before reading their inputs, so that a run that could not write
// its result does not start. The errors name the path the user gave.
func Check(force bool, paths ...string) error {
	checked := map[string]bool{}
	for _, p := range paths {
		if p == "" {
			continue
		}
		if dir := filepath.Dir(filepath.Clean(p)); !checked[dir] {
			checked[dir] = true
			if err := checkFolder(p); err != nil {
				return err
			}
		}
		if !force {
			if err := Refuse(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFolder returns an error naming the output path unless its folder
// is a folder in which a file can be created.
func checkFolder(path string) error {
	dir := filepath.Dir(filepath.Clean(path))
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: the folder %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("%s: %v", path, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: %s is not a folder", path, dir)
	}
	f, err := os.CreateTemp(dir, ".tdsc-check-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in the folder %s: %v", path, dir, unwrapPath(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// unwrapPath returns the error of a *fs.PathError without its path (a
// temporary file's name, which says nothing to the user), or err.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// createError is the error of failing to create the temporary file or
// folder of the output path: its folder's problem, said with the user's
// path rather than the temporary name.
func createError(path, what string, err error) error {
	if ferr := checkFolder(path); ferr != nil {
		return ferr
	}
	return fmt.Errorf("%s: cannot create a temporary %s beside it: %v", path, what, unwrapPath(err))
}

// File is an output file being written under a temporary name. Its writes
// are buffered. The zero value is not usable: see Create.
type File struct {
	path string
	tmp  *os.File
	w    *bufio.Writer
}

// Create starts the output at path. Unless force is set, an existing path
// is an *ExistsError; with force, an existing path that is not a regular
// file is an error too (a folder or a device is never replaced by a file).
func Create(path string, force bool) (*File, error) {
	fi, ok, err := lstat(path)
	if err != nil {
		return nil, err
	}
	if ok && !force {
		return nil, &ExistsError{Path: path}
	}
	if ok && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s exists and is not a regular file: not replacing it", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, createError(path, "file", err)
	}
	return &File{path: path, tmp: tmp, w: bufio.NewWriterSize(tmp, 1<<16)}, nil
}

// Write writes p to the temporary file.
func (f *File) Write(p []byte) (int, error) { return f.w.Write(p) }

// WriteString writes s to the temporary file.
func (f *File) WriteString(s string) (int, error) { return f.w.WriteString(s) }

// WriteAt writes p at offset off of the temporary file, after what Write
// has buffered, for outputs written out of order (an ENVI cube written
// strip by strip into its band-sequential layout). A write past the end
// extends the file; the bytes skipped read as zeros until written.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if f.tmp == nil {
		return 0, fmt.Errorf("%s: already committed or aborted", f.path)
	}
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.tmp.WriteAt(p, off)
}

// TempName returns the name of the temporary file, for a library that
// writes a file by its name (GDAL): it may replace the file's content,
// and must leave a file of that name for Commit.
func (f *File) TempName() string { return f.tmp.Name() }

// Path returns the destination.
func (f *File) Path() string { return f.path }

// Abort closes and removes the temporary file. It may be called after
// Commit, when it does nothing.
func (f *File) Abort() {
	if f.tmp == nil {
		return
	}
	f.tmp.Close()
	os.Remove(f.tmp.Name())
	f.tmp = nil
}

// finish flushes, syncs (so that a crash after the rename cannot leave an
// empty file under the destination's name), makes the file readable by
// everyone as an ordinary output is (CreateTemp makes it private), and
// closes it.
func (f *File) finish() error {
	if f.tmp == nil {
		return fmt.Errorf("%s: already committed or aborted", f.path)
	}
	err := f.w.Flush()
	if err == nil {
		err = f.tmp.Sync()
	}
	if err == nil {
		err = f.tmp.Chmod(0o644)
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.tmp.Name())
		f.tmp = nil
		return fmt.Errorf("%s: %v", f.path, err)
	}
	return nil
}

// Commit finishes every file and renames them into place as a set: on
// error none of the destinations is changed and every temporary file is
// removed. Each File is done with afterwards.
func Commit(files ...*File) error {
	for i, f := range files {
		if err := f.finish(); err != nil {
			for _, g := range files[i+1:] {
				g.Abort()
			}
			for _, g := range files[:i] {
				os.Remove(g.tmp.Name())
				g.tmp = nil
			}
			return err
		}
	}
	tmps := make([]string, len(files))
	dsts := make([]string, len(files))
	for i, f := range files {
		tmps[i], dsts[i] = f.tmp.Name(), f.path
		f.tmp = nil
	}
	return renameSet(tmps, dsts)
}

// renameSet renames every tmps[i] to dsts[i], all or none. One rename is
// atomic by itself. For several, existing destinations are first moved
// aside to hidden names, so that a failed rename can be undone by putting
// them back; they are removed once every new file is in place.
func renameSet(tmps, dsts []string) error {
	if len(tmps) == 1 {
		if err := os.Rename(tmps[0], dsts[0]); err != nil {
			os.Remove(tmps[0])
			return err
		}
		return nil
	}
	removeAll := func(names []string) {
		for _, n := range names {
			if n != "" {
				os.Remove(n)
			}
		}
	}
	aside := make([]string, len(dsts))
	restore := func() {
		for i, a := range aside {
			if a != "" {
				os.Rename(a, dsts[i])
			}
		}
	}
	for i, dst := range dsts {
		_, ok, err := lstat(dst)
		if err == nil && ok {
			aside[i], err = moveAside(dst)
		}
		if err != nil {
			restore()
			removeAll(tmps)
			return err
		}
	}
	for i := range tmps {
		if err := os.Rename(tmps[i], dsts[i]); err != nil {
			for _, dst := range dsts[:i] {
				os.Remove(dst)
			}
			restore()
			removeAll(tmps[i:])
			return err
		}
	}
	removeAll(aside)
	return nil
}

// moveAside renames path to a new hidden name beside it and returns that
// name.
func moveAside(path string) (string, error) {
	hold, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".old-*")
	if err != nil {
		return "", fmt.Errorf("%s: cannot create a temporary file beside it: %v", path, err)
	}
	hold.Close()
	if err := os.Rename(path, hold.Name()); err != nil {
		os.Remove(hold.Name())
		return "", err
	}
	return hold.Name(), nil
}

// Dir is an output folder being built under a temporary name.
type Dir struct {
	path    string // as the caller named it, for errors
	abs     string // absolute, so that "out/" and "." have a parent and a name
	tmp     string
	existed bool
}

// CreateDir starts the output folder at path. Unless force is set, an
// existing path is an *ExistsError; with force, an existing path that is
// not a folder is an error. What an existing folder may hold before it is
// replaced is the caller's to check.
func CreateDir(path string, force bool) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	fi, ok, err := lstat(abs)
	if err != nil {
		return nil, err
	}
	if ok && !force {
		return nil, &ExistsError{Path: path}
	}
	if ok && !fi.IsDir() {
		return nil, fmt.Errorf("%s exists and is not a folder: not replacing it", path)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".tmp-*")
	if err != nil {
		return nil, createError(path, "folder", err)
	}
	return &Dir{path: path, abs: abs, tmp: tmp, existed: ok}, nil
}

// Temp returns the temporary folder to fill.
func (d *Dir) Temp() string { return d.tmp }

// Abort removes the temporary folder and everything in it.
func (d *Dir) Abort() {
	if d.tmp != "" {
		os.RemoveAll(d.tmp)
		d.tmp = ""
	}
}

// Commit makes the folder readable by everyone and renames it into place.
// An existing folder is first moved into a hidden holding folder beside
// it, and removed once the new one is in place (or moved back if that
// fails).
func (d *Dir) Commit() error {
	if d.tmp == "" {
		return fmt.Errorf("%s: already committed or aborted", d.path)
	}
	tmp := d.tmp
	d.tmp = ""
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("%s: %v", d.path, err)
	}
	if !d.existed {
		if err := os.Rename(tmp, d.abs); err != nil {
			os.RemoveAll(tmp)
			return err
		}
		return nil
	}
	hold, err := os.MkdirTemp(filepath.Dir(d.abs), "."+filepath.Base(d.abs)+".old-*")
	if err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("%s: cannot create a temporary folder beside it: %v", d.path, err)
	}
	old := filepath.Join(hold, filepath.Base(d.abs))
	if err := os.Rename(d.abs, old); err != nil {
		os.Remove(hold)
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, d.abs); err != nil {
		if back := os.Rename(old, d.abs); back == nil {
			os.Remove(hold)
		}
		os.RemoveAll(tmp)
		return err
	}
	if err := os.RemoveAll(hold); err != nil {
		return fmt.Errorf("%s is written, but its old copy in %s could not be removed: %v", d.path, hold, err)
	}
	return nil
}

// lstat reports whether path exists, without following a final symbolic
// link.
func lstat(path string) (fs.FileInfo, bool, error) {
	fi, err := os.Lstat(path)
	switch {
	case err == nil:
		return fi, true, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	}
	return nil, false, err
}
