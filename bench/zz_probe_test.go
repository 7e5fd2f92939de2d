package bench

import (
	"context"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

func TestZZProbe(t *testing.T) {
	snap, _ := registry.NewSnapshot(1, Catalog(1000))
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		index.Build(context.Background(), snap, index.Options{})
		t1 := time.Now()
		h := heapInUse()
		t2 := time.Now()
		e, err := engine.Open(context.Background(), engine.Options{Seed: Catalog(1000), NoSync: true})
		if err != nil { t.Fatal(err) }
		t3 := time.Now()
		e.Close()
		t4 := time.Now()
		t.Logf("build %v gc %v open %v close %v heap %d", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), t4.Sub(t3), h>>20)
	}
}
