//go:build unix

package shard

import (
	"errors"
	"syscall"
)

// running reports whether process pid of this host runs (or may: only a
// process that does not exist is said not to).
func running(pid int) bool { return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
