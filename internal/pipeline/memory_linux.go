package pipeline

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// totalMemory returns the machine's RAM in bytes.
func totalMemory() (int64, bool) {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0, false
	}
	return int64(info.Totalram) * int64(info.Unit), true
}

// residentMemory returns the process's resident memory in bytes, from
// /proc/self/statm (its second field, in pages).
func residentMemory() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}
