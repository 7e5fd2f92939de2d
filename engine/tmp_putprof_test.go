package engine

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

func TestTmpPutProfile(t *testing.T) {
	path := os.Getenv("PUTPROF")
	if path == "" {
		t.Skip()
	}
	ctx := context.Background()
	caps := testcat.GenerateCatalog(10000, 1)
	e, err := Open(ctx, Options{Seed: caps, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rc := registry.RuntimeContext{Tenant: "default", User: "bench", Scopes: []string{"*", "admin"}}
	puts := scaleActions(e.Snapshot().Caps, rc, 2)
	c := puts[0].Clone()
	put := func(i int) {
		c = c.Clone()
		c.Version++
		c.Summary += fmt.Sprintf(" zq%dx", i)
		if err := e.Put(ctx, c, "bench"); err != nil {
			t.Fatal(err)
		}
	}
	put(0)
	f, _ := os.Create(path)
	pprof.StartCPUProfile(f)
	for i := 1; i <= 20; i++ {
		put(i)
	}
	pprof.StopCPUProfile()
	f.Close()
}
