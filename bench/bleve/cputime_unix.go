//go:build unix

package blevecmp

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used, every thread: a loaded machine
// stretches wall time but not the work a search does.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
