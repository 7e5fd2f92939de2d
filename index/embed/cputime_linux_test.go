//go:build linux

package embed

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time used by the calling OS thread (pin the goroutine with
// runtime.LockOSThread). Benchmarks report it next to wall time because a loaded machine
// stretches wall time but not the work done.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
