package bench

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZProbe(t *testing.T) {
	for _, n := range []int{1000, 10000} {
	snap, _ := registry.NewSnapshot(1, Catalog(n))
	for i := 0; i < 3; i++ {
		c0 := cpu()
		t0 := time.Now()
		g, _ := index.Build(context.Background(), snap, index.Options{})
		t.Logf("n=%d build wall %v cpu %v", n, time.Since(t0), cpu()-c0)
		_ = g
	}
	}
}
