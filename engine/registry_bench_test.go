package engine

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"testing"
	"time"

	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

var (
	scale100k = flag.Bool("registry100k", false, "BenchmarkRegistryScale also runs the 100k catalogue (minutes)")
	scalePuts = flag.Int("registryputs", 20, "Puts timed per catalogue by BenchmarkRegistryScale")
	scaleProf = flag.String("registryputprof", "", "BenchmarkRegistryScale writes a CPU profile of its Puts after the first (and their searches) alone to this file")
)

// BenchmarkRegistryScale measures what a registry change costs at scale, on a Badger store
// seeded with testcat.GenerateCatalog(n, 1): the first open (seeding the empty store and
// building the first generation), one Put of a changed action until a search finds its new
// word (p50 and p99 over -registryputs Puts), a close and a reopen, and the live heap the
// reopened engine added, per capability (after a GC), and the live heap of the first engine
// after its changes (heap-changed: what it keeps for the next change included). The 100k catalogue runs only with
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
	base := liveHeap()
	t, cpu := time.Now(), cputime.Process()
	e, err := Open(ctx, Options{Dir: dir, Seed: caps})
	if err != nil {
		b.Fatal(err)
	}
	first, firstCPU := time.Since(t), cputime.Process()-cpu
	rc := registry.RuntimeContext{Tenant: "default", User: "bench", Scopes: []string{"*", "admin"}}
	puts := scaleActions(e.Snapshot().Caps, rc, *scalePuts)
	var took, tookCPU []time.Duration
	latest := map[string]*registry.Capability{}
	for i, c := range puts {
		if i == 1 && *scaleProf != "" { // the first Put analyses everything once: not profiled
			f, err := os.Create(*scaleProf)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				b.Fatal(err)
			}
			writeAllocs(b, *scaleProf+".allocs0")
		}
		word := fmt.Sprintf("zqxv%dwug", i)
		if l, ok := latest[c.ID]; ok {
			c = l
		}
		d := c.Clone()
		d.Version++
		latest[d.ID] = d
		d.Summary += " " + word
		t, cpu := time.Now(), cputime.Process()
		if err := e.Put(ctx, d, "bench"); err != nil {
			b.Fatal(err)
		}
		resp, err := e.Search(ctx, registry.SearchRequest{Query: word, Limit: 5}, rc)
		took, tookCPU = append(took, time.Since(t)), append(tookCPU, cputime.Process()-cpu)
		if err != nil {
			b.Fatal(err)
		}
		if !slices.ContainsFunc(resp.Matches, func(r registry.Match) bool { return r.ResourceID == d.ID }) {
			b.Fatalf("search %q after the Put of %s did not find it", word, d.ID)
		}
	}
	if *scaleProf != "" {
		pprof.StopCPUProfile()
		writeAllocs(b, *scaleProf+".allocs1") // go tool pprof -sample_index=alloc_space -diff_base FILE.allocs0 FILE.allocs1
	}
	// status changes: deprecate and restore, each until a search shows the new availability
	var stTook, stCPU []time.Duration
	for i, c := range puts {
		st := registry.StatusDeprecated
		if i%2 == 1 {
			st = registry.StatusActive
			c = puts[i-1]
		}
		t, cpu := time.Now(), cputime.Process()
		if err := e.SetStatus(ctx, c.ID, st, "bench"); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Search(ctx, registry.SearchRequest{Query: c.Title, Limit: 5}, rc); err != nil {
			b.Fatal(err)
		}
		stTook, stCPU = append(stTook, time.Since(t)), append(stCPU, cputime.Process()-cpu)
		if got := e.Snapshot(); got.Caps[mustDoc(b, got, c.ID)].Status != st {
			b.Fatalf("SetStatus(%s, %s) not in the searched generation", c.ID, st)
		}
	}
	changed := liveHeap() // the engine after its changes, with what it keeps for the next one
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	before := liveHeap()
	t, cpu = time.Now(), cputime.Process()
	e, err = Open(ctx, Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	reopen, reopenCPU := time.Since(t), cputime.Process()-cpu
	after := liveHeap()
	runtime.KeepAlive(e)
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	// the first Put after the open: the one that used to assemble every structure
	b.ReportMetric(ms(took[0]), "put-first-ms")
	b.ReportMetric(ms(tookCPU[0]), "put-first-cpu-ms")
	slices.Sort(took)
	slices.Sort(stTook)
	slices.Sort(tookCPU)
	slices.Sort(stCPU)
	b.ReportMetric(ms(stTook[len(stTook)/2]), "status-p50-ms")
	// CPU time of the process (every goroutine): steadier than wall time on a shared host
	b.ReportMetric(firstCPU.Seconds(), "first-open-cpu-s")
	b.ReportMetric(ms(tookCPU[len(tookCPU)/2]), "put-cpu-p50-ms")
	b.ReportMetric(ms(stCPU[len(stCPU)/2]), "status-cpu-p50-ms")
	b.ReportMetric(reopenCPU.Seconds(), "reopen-cpu-s")
	b.ReportMetric(first.Seconds(), "first-open-s")
	b.ReportMetric(ms(took[len(took)/2]), "put-p50-ms")
	b.ReportMetric(ms(took[min(len(took)-1, len(took)*99/100)]), "put-p99-ms")
	b.ReportMetric(reopen.Seconds(), "reopen-s")
	b.ReportMetric(float64(after-before)/float64(n), "heap-B/cap")
	b.ReportMetric(float64(int64(changed)-int64(base))/float64(n), "heap-changed-B/cap")
}

// writeAllocs writes the allocation profile so far to file.
func writeAllocs(b *testing.B, file string) {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
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

func mustDoc(b *testing.B, s *registry.Snapshot, id string) uint32 {
	d, ok := s.DocID(id)
	if !ok {
		b.Fatalf("%s not in the snapshot", id)
	}
	return d
}

// liveHeap is the heap in use after two collections.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkStateMemory reports the live heap, per capability, of what the engine derives
// from a generation for the query side and the ranking (the lexicon, the term cache, the
// availability table and pack facts, the pack ranges), over testcat.GenerateCatalog(n, 1)
// (100k with -registry100k). The index itself is BenchmarkGenerationMemory in package index.
//
//	go test -run '^$' -bench StateMemory -benchtime=1x ./engine/
func BenchmarkStateMemory(b *testing.B) {
	sizes := []int{10_000}
	if *scale100k {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("catalog=%dk", n/1000), func(b *testing.B) {
			snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(n, 1))
			if err != nil {
				b.Fatal(err)
			}
			g, err := index.Build(context.Background(), snap, index.Options{})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				last := liveHeap()
				step := func(name string) {
					now := liveHeap()
					b.ReportMetric(float64(int64(now)-int64(last))/float64(n), name+"-B/cap")
					last = now
				}
				lex := query.NewLexicon(snap)
				step("lexicon")
				terms := rank.NewTermCache(snap.Caps, query.FieldTerms)
				step("terms")
				facts := newRankFacts(snap.Caps)
				step("facts")
				packs := packRanges(g)
				step("packs")
				runtime.KeepAlive(lex)
				runtime.KeepAlive(terms)
				runtime.KeepAlive(facts)
				runtime.KeepAlive(packs)
			}
		})
	}
}
