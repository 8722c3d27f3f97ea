package batch

import (
	"os"
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel interrupt the child when the batch
// process dies, however it dies (a killed job, a lost node), so that no
// denoiser runs on without anyone to record its result.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// maxRSS is the peak resident memory of the finished process, in bytes
// (Linux reports it in KiB).
func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}
