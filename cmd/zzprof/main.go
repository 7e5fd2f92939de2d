// Command zzprof is a throwaway profiling loop (removed before reporting).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"syscall"
	"time"

	"github.com/capdex/capdex/bench"
	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

func main() {
	set := flag.String("set", "seal_tools", "")
	dur := flag.Duration("d", 10*time.Second, "")
	prof := flag.String("cpu", "", "")
	flag.Parse()
	ctx := context.Background()
	dir := "/work/shared/eval/" + *set
	caps, err := bench.ImportEvalTools(dir + "/tools.jsonl")
	if err != nil {
		panic(err)
	}
	qs, err := bench.ReadQueries(dir + "/queries.jsonl")
	if err != nil {
		panic(err)
	}
	e, err := engine.Open(ctx, engine.Options{Seed: caps, NoSync: true})
	if err != nil {
		panic(err)
	}
	defer e.Close()
	rc := registry.RuntimeContext{Tenant: "default", User: "eval", Scopes: []string{"*", "admin"}}
	for _, q := range qs { // warm
		e.Search(ctx, registry.SearchRequest{Query: q.Query, Limit: 10}, rc)
	}
	if *prof != "" {
		f, _ := os.Create(*prof)
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0 := cpu()
	var lat []time.Duration
	end := time.Now().Add(*dur)
	for time.Now().Before(end) {
		for _, q := range qs {
			t := time.Now()
			e.Search(ctx, registry.SearchRequest{Query: q.Query, Limit: 10}, rc)
			lat = append(lat, time.Since(t))
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	fmt.Printf("cpu/search=%v ", (cpu()-c0)/time.Duration(len(lat)))
	fmt.Printf("%s n=%d p50=%v p90=%v p99=%v\n", *set, len(lat), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)*99/100])
}
