package pipeline

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"tdsc/internal/atomicfile"
)

// outputSet writes the outputs of a job as one: either every output is in
// place at the end, or none is and whatever the outputs replaced is back.
//
// Each output is written atomically by its own writer (a format's Write,
// a window writer's Commit, dictfile's WriteFile). Before an output is
// written, the files it would replace (with force) are renamed aside to
// hidden names in their folder, so that the writer finds nothing in the
// way and a later failure can put them back; commit removes them once
// every output is in place, rollback removes the new outputs and renames
// the old ones back.
type outputSet struct {
	force   bool
	held    []heldFile // replaced files, renamed aside
	written []string   // files and folders this set created
}

// heldFile is a replaced file or folder and the name it waits under.
type heldFile struct{ path, aside string }

// write runs write, which creates the files or folders paths (all of
// them, or none on error), after holding aside what exists at paths. An
// existing path without force is an *atomicfile.ExistsError and nothing
// is written.
func (s *outputSet) write(paths []string, write func() error) error {
	if !s.force {
		if err := atomicfile.Refuse(paths...); err != nil {
			return err
		}
	}
	for _, p := range paths {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		aside, err := asideName(p)
		if err != nil {
			return err
		}
		if err := os.Rename(p, aside); err != nil {
			return err
		}
		s.held = append(s.held, heldFile{path: p, aside: aside})
	}
	if err := write(); err != nil {
		return err
	}
	s.written = append(s.written, paths...)
	return nil
}

// rollback removes what the set wrote and puts back what it replaced, in
// reverse order.
func (s *outputSet) rollback() {
	for i := len(s.written) - 1; i >= 0; i-- {
		os.RemoveAll(s.written[i])
	}
	for i := len(s.held) - 1; i >= 0; i-- {
		os.Rename(s.held[i].aside, s.held[i].path)
	}
	s.written, s.held = nil, nil
}

// commit drops what the outputs replaced.
func (s *outputSet) commit() {
	for _, h := range s.held {
		os.RemoveAll(h.aside)
	}
	s.written, s.held = nil, nil
}

// asideName returns a hidden name beside path that does not exist, for
// holding what path was while its replacement is written.
func asideName(path string) (string, error) {
	var b [6]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		p := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".replaced-"+hex.EncodeToString(b[:]))
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
	}
}
