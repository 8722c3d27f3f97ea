//go:build !linux

package batch

import (
	"os"
	"os/exec"
)

// setDeathSignal does nothing where the kernel has no death signal: a
// child of a killed batch process runs to its end, and its result is not
// recorded.
func setDeathSignal(*exec.Cmd) {}

// maxRSS is 0 (unknown): the units of the peak memory differ between the
// other systems.
func maxRSS(*os.ProcessState) int64 { return 0 }
