package registry

import (
	"bytes"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	data := evalData(t, "metatool", "seal_tools")
	for i := 0; i < 3; i++ {
		resetSchemaCache()
		c0, w0 := cpuNow(), time.Now()
		for _, d := range data {
			if _, err := Import(bytes.NewReader(d), FormatJSONL); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("cold: cpu %v wall %v", cpuNow()-c0, time.Since(w0))
	}
	c0, w0 := cpuNow(), time.Now()
	for _, d := range data {
		Import(bytes.NewReader(d), FormatJSONL)
	}
	t.Logf("warm cache: cpu %v wall %v", cpuNow()-c0, time.Since(w0))
}
