//go:build !unix

package actors

import "time"

// processCPU is unknown here; cpu-ns/op then reads 0.
func processCPU() time.Duration { return 0 }
