package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/capdex/capdex/bench"
	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
)

func main() {
	for _, n := range []int{10000, 100000} {
		caps := bench.Catalog(n)
		snap, _ := registry.NewSnapshot(1, caps)
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		t := time.Now()
		tc := rank.NewTermCache(snap.Caps, query.FieldTerms)
		d := time.Since(t)
		runtime.GC()
		runtime.ReadMemStats(&m1)
		fmt.Printf("n=%d build %v heap +%d MB\n", n, d, (int64(m1.HeapInuse)-int64(m0.HeapInuse))>>20)
		runtime.KeepAlive(tc)
	}
}
