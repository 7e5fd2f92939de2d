package bench

import (
	"context"
	"testing"
	"time"
	"runtime"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

func TestZZProbe(t *testing.T) {
	for _, n := range []int{1000, 10000, 100000} {
		t0 := time.Now()
		caps := Catalog(n)
		t1 := time.Now()
		qs, err := CatalogQueries(caps, 1000)
		if err != nil { t.Fatal(err) }
		t2 := time.Now()
		e, err := engine.Open(context.Background(), engine.Options{Seed: caps, NoSync: true})
		if err != nil { t.Fatal(err) }
		t3 := time.Now()
		rc := CatalogRC()
		var lat time.Duration
		hit := 0
		for _, q := range qs[:200] {
			s := time.Now()
			resp, err := e.Search(context.Background(), registry.SearchRequest{Query: q.Query, Limit: 10}, rc)
			lat += time.Since(s)
			if err != nil { t.Fatal(err) }
			r := Ranking{}
			for _, m := range resp.Matches { r = append(r, m.ResourceID) }
			if RecallAt(r, q.Relevant, 5) > 0 { hit++ }
		}
		var ms runtime.MemStats
		runtime.GC(); runtime.ReadMemStats(&ms)
		t.Logf("n=%d gen=%v queries=%d (%v) open=%v search avg=%v hit5=%d/200 heap=%dMB ex=%q %v", n, t1.Sub(t0), len(qs), t2.Sub(t1), t3.Sub(t2), lat/200, hit, ms.HeapAlloc>>20, qs[0].Query, qs[0].Relevant)
		e.Close()
	}
}
