package engine

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

var (
	scale100k = flag.Bool("registry100k", false, "BenchmarkRegistryScale also runs the 100k catalogue (minutes)")
	scalePuts = flag.Int("registryputs", 20, "Puts timed per catalogue by BenchmarkRegistryScale")
)

// BenchmarkRegistryScale measures what a registry change costs at scale, on a Badger store
// seeded with testcat.GenerateCatalog(n, 1): the first open (seeding the empty store and
// building the first generation), one Put of a changed action until a search finds its new
// word (p50 and p99 over -registryputs Puts), a close and a reopen, and the live heap the
// reopened engine added, per capability (after a GC). The 100k catalogue runs only with
// -registry100k. Run with -benchtime=1x:
//
//	go test -run '^$' -bench RegistryScale -benchtime=1x ./engine/ [-registry100k]
func BenchmarkRegistryScale(b *testing.B) {
	sizes := []int{10_000}
	if *scale100k {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("catalog=%dk", n/1000), func(b *testing.B) {
			caps := testcat.GenerateCatalog(n, 1)
			for b.Loop() {
				benchRegistryScale(b, caps)
			}
		})
	}
}

func benchRegistryScale(b *testing.B, caps []*registry.Capability) {
	ctx := context.Background()
	dir := b.TempDir()
	n := len(caps)
	t := time.Now()
	e, err := Open(ctx, Options{Dir: dir, Seed: caps})
	if err != nil {
		b.Fatal(err)
	}
	first := time.Since(t)
	rc := registry.RuntimeContext{Tenant: "default", User: "bench", Scopes: []string{"*", "admin"}}
	puts := scaleActions(e.Snapshot().Caps, rc, *scalePuts)
	var took []time.Duration
	latest := map[string]*registry.Capability{}
	for i, c := range puts {
		word := fmt.Sprintf("zqxv%dwug", i)
		if l, ok := latest[c.ID]; ok {
			c = l
		}
		d := c.Clone()
		d.Version++
		latest[d.ID] = d
		d.Summary += " " + word
		t := time.Now()
		if err := e.Put(ctx, d, "bench"); err != nil {
			b.Fatal(err)
		}
		resp, err := e.Search(ctx, registry.SearchRequest{Query: word, Limit: 5}, rc)
		took = append(took, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
		if !slices.ContainsFunc(resp.Matches, func(r registry.Match) bool { return r.ResourceID == d.ID }) {
			b.Fatalf("search %q after the Put of %s did not find it", word, d.ID)
		}
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	before := liveHeap()
	t = time.Now()
	e, err = Open(ctx, Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	reopen := time.Since(t)
	after := liveHeap()
	runtime.KeepAlive(e)
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	b.ReportMetric(first.Seconds(), "first-open-s")
	b.ReportMetric(ms(took[len(took)/2]), "put-p50-ms")
	b.ReportMetric(ms(took[min(len(took)-1, len(took)*99/100)]), "put-p99-ms")
	b.ReportMetric(reopen.Seconds(), "reopen-s")
	b.ReportMetric(float64(after-before)/float64(n), "heap-B/cap")
}

// scaleActions returns k actions of caps that rc may discover, spread over the catalogue.
func scaleActions(caps []*registry.Capability, rc registry.RuntimeContext, k int) []*registry.Capability {
	var acts []*registry.Capability
	for _, c := range caps {
		if c.ResourceType == registry.TypeAction && c.Status == registry.StatusActive &&
			policy.Check(c, &rc, registry.GateDiscover).Allowed {
			acts = append(acts, c)
		}
	}
	out := make([]*registry.Capability, 0, k)
	for i := 0; i < k && len(acts) > 0; i++ {
		out = append(out, acts[(i*7919)%len(acts)])
	}
	return out
}

// liveHeap is the heap in use after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
