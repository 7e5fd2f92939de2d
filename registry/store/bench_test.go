package store

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/capdex/capdex/registry"
)

var (
	benchMu    sync.Mutex
	benchStore = map[string]string{} // catalogue name → data directory
)

// benchCatalog returns the capabilities of a named catalogue: "empty", "builtin" or a count.
func benchCatalog(tb testing.TB, name string) []*registry.Capability {
	tb.Helper()
	switch name {
	case "empty":
		return nil
	case "builtin":
		caps, err := registry.Builtin()
		if err != nil {
			tb.Fatal(err)
		}
		return caps
	}
	var n int
	fmt.Sscanf(name, "%d", &n)
	caps := make([]*registry.Capability, n)
	for i := range caps {
		caps[i] = genCap(fmt.Sprintf("bench.p%d.c%d", i%100, i), 1, 0)
	}
	return caps
}

// benchDir returns a closed data directory holding the catalogue, made once per process.
func benchDir(tb testing.TB, name string) string {
	tb.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if d, ok := benchStore[name]; ok {
		return d
	}
	d, err := os.MkdirTemp("", "capdex-store-bench-")
	if err != nil {
		tb.Fatal(err)
	}
	benchDirs = append(benchDirs, d)
	s, err := Open(Options{Dir: d})
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.PutAll(context.Background(), benchCatalog(tb, name), "bench"); err != nil {
		tb.Fatal(err)
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	benchStore[name] = d
	return d
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkOpen measures Open (ns/op, Close excluded) and the heap the open store holds
// (heap-MB: live heap after Open minus before, after GC).
func BenchmarkOpen(b *testing.B) {
	for _, name := range []string{"empty", "builtin", "10000"} {
		b.Run("catalog="+name, func(b *testing.B) {
			dir := benchDir(b, name)
			b.ReportAllocs()
			var heap float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				before := heapInUse()
				b.StartTimer()
				s, err := Open(Options{Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				heap = float64(heapInUse()-before) / (1 << 20)
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(heap, "heap-MB")
		})
	}
}

// BenchmarkActive measures reading and decoding every active definition.
func BenchmarkActive(b *testing.B) {
	for _, name := range []string{"builtin", "10000"} {
		b.Run("catalog="+name, func(b *testing.B) {
			s, err := Open(Options{Dir: benchDir(b, name)})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			b.ResetTimer()
			var n int
			for i := 0; i < b.N; i++ {
				caps, _, err := s.Active()
				if err != nil {
					b.Fatal(err)
				}
				n = len(caps)
			}
			b.ReportMetric(float64(n), "caps/op")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(max(n, 1)), "µs/cap")
		})
	}
}

// BenchmarkGet measures reading one definition by id.
func BenchmarkGet(b *testing.B) {
	s, err := Open(Options{Dir: benchDir(b, "10000")})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Get(fmt.Sprintf("bench.p%d.c%d", i%100, i%10000), 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPut measures one fsynced registry change with its audit record.
func BenchmarkPut(b *testing.B) {
	s := openT(b, b.TempDir())
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Put(ctx, genCap("bench.put", i+1, i), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
