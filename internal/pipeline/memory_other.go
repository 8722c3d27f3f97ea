//go:build !linux

package pipeline

// totalMemory does not know the machine's RAM outside Linux.
func totalMemory() (int64, bool) { return 0, false }

// residentMemory does not know the process's resident memory outside
// Linux.
func residentMemory() (int64, bool) { return 0, false }
