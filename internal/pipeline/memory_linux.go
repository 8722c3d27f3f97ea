package pipeline

import "syscall"

// totalMemory returns the machine's RAM in bytes.
func totalMemory() (int64, bool) {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0, false
	}
	return int64(info.Totalram) * int64(info.Unit), true
}
