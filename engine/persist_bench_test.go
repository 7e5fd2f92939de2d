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
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

var reopenProfile = flag.String("reopenprofile", "", "BenchmarkReopen writes a CPU profile of its reopens (only) to this file")

// BenchmarkReopen measures reopening a Badger store holding testcat.GenerateCatalog(n, 1)
// (seeded and closed once, outside the measure): the CPU and wall time of Open until the
// engine answers, the live heap the reopened engine holds per capability, and the first
// Put after the reopen until a search finds it (put-after-reopen). 100k with
// -registry100k; -reopenprofile writes a CPU profile of the reopens alone.
//
//	go test -run '^$' -bench Reopen -benchtime=3x ./engine/ [-args -registry100k]
func BenchmarkReopen(b *testing.B) {
	sizes := []int{10_000}
	if *scale100k {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("catalog=%dk", n/1000), func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			e, err := Open(ctx, Options{Dir: dir, Seed: testcat.GenerateCatalog(n, 1), NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			if err := e.Close(); err != nil {
				b.Fatal(err)
			}
			var prof *os.File
			if *reopenProfile != "" {
				if prof, err = os.Create(*reopenProfile); err != nil {
					b.Fatal(err)
				}
				defer prof.Close()
			}
			var wall, cpu, putWall, putCPU time.Duration
			putN := 0
			rc := registry.RuntimeContext{Tenant: "default", User: "bench", Scopes: []string{"*", "admin"}}
			var heap float64
			for b.Loop() {
				before := liveHeap()
				if prof != nil {
					if err := pprof.StartCPUProfile(prof); err != nil {
						b.Fatal(err)
					}
				}
				t, c := time.Now(), cputime.Process()
				e, err := Open(ctx, Options{Dir: dir, NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				wall, cpu = wall+time.Since(t), cpu+cputime.Process()-c
				if prof != nil {
					pprof.StopCPUProfile()
					prof = nil
				}
				heap += float64(int64(liveHeap())-int64(before)) / float64(n)
				// the first change after the reopen, until a search finds it
				d := e.Snapshot().Caps[n/2].Clone()
				d.Version++
				word := fmt.Sprintf("zqreopen%dwug", putN)
				putN++
				d.Summary += " " + word
				t, c = time.Now(), cputime.Process()
				if err := e.Put(ctx, d, "bench"); err != nil {
					b.Fatal(err)
				}
				resp, err := e.Search(ctx, registry.SearchRequest{Query: word, Limit: 5}, rc)
				if err != nil {
					b.Fatal(err)
				}
				putWall, putCPU = putWall+time.Since(t), putCPU+cputime.Process()-c
				if !slices.ContainsFunc(resp.Matches, func(r registry.Match) bool { return r.ResourceID == d.ID }) {
					b.Fatalf("the Put after the reopen of %s is not found", d.ID)
				}
				runtime.KeepAlive(e)
				if err := e.Close(); err != nil {
					b.Fatal(err)
				}
			}
			k := float64(b.N)
			b.ReportMetric(cpu.Seconds()/k, "reopen-cpu-s")
			b.ReportMetric(wall.Seconds()/k, "reopen-s")
			b.ReportMetric(heap/k, "heap-B/cap")
			b.ReportMetric(float64(putCPU.Microseconds())/1e3/k, "put-after-reopen-cpu-ms")
			b.ReportMetric(float64(putWall.Microseconds())/1e3/k, "put-after-reopen-ms")
		})
	}
}
