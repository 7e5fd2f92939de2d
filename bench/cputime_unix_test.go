//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used, every thread. Benchmarks report it
// per operation next to wall time: a search spreads over the actor goroutines, and a loaded
// machine stretches wall time but not the work done.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
