package index

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// BenchmarkPersist measures writing a generation's persisted state (Persist) and loading it
// (the header, checksums and sections, as Build does with Options.Persisted) over
// testcat.GenerateCatalog(n, 1), 100k with -memory100k:
//
//	go test -run '^$' -bench Persist -benchtime=5x ./index/ [-args -memory100k]
func BenchmarkPersist(b *testing.B) {
	sizes := []int{10_000}
	if *memory100k {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("catalog=%dk", n/1000), func(b *testing.B) {
			snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(n, 1))
			if err != nil {
				b.Fatal(err)
			}
			g, err := Build(context.Background(), snap, Options{})
			if err != nil {
				b.Fatal(err)
			}
			var write, load time.Duration
			var size int
			for b.Loop() {
				var buf bytes.Buffer
				t := time.Now()
				if err := g.Persist(&buf); err != nil {
					b.Fatal(err)
				}
				write += time.Since(t)
				size = buf.Len()
				l := &Generation{snap: snap, n: g.n, emb: g.emb}
				t = time.Now()
				l.loadPersisted(buf.Bytes())
				load += time.Since(t)
				if l.stats.Persist.Err != nil {
					b.Fatal(l.stats.Persist.Err)
				}
			}
			k := float64(b.N)
			b.ReportMetric(float64(write.Microseconds())/1e3/k, "persist-ms")
			b.ReportMetric(float64(load.Microseconds())/1e3/k, "load-ms")
			b.ReportMetric(float64(size)/float64(n), "B/cap")
		})
	}
}
