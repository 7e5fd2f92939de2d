package engine

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/index/testcat"
)

var reopenProfile = flag.String("reopenprofile", "", "BenchmarkReopen writes a CPU profile of its reopens (only) to this file")

// BenchmarkReopen measures reopening a Badger store holding testcat.GenerateCatalog(n, 1)
// (seeded and closed once, outside the measure): the CPU and wall time of Open until the
// engine answers, and the live heap the reopened engine holds per capability. 100k with
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
			var wall, cpu time.Duration
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
				runtime.KeepAlive(e)
				if err := e.Close(); err != nil {
					b.Fatal(err)
				}
			}
			k := float64(b.N)
			b.ReportMetric(cpu.Seconds()/k, "reopen-cpu-s")
			b.ReportMetric(wall.Seconds()/k, "reopen-s")
			b.ReportMetric(heap/k, "heap-B/cap")
		})
	}
}
