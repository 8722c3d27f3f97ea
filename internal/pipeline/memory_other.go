//go:build !linux

package pipeline

// totalMemory does not know the machine's RAM outside Linux.
func totalMemory() (int64, bool) { return 0, false }
