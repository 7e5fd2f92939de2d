package index

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

var memory100k = flag.Bool("memory100k", false, "BenchmarkGenerationMemory also measures the 100k catalogue")

// BenchmarkGenerationMemory reports the live heap of each structure of a generation, per
// capability, over testcat.GenerateCatalog(n, 1) decoded from JSON as the store decodes
// it: the capabilities with their snapshot, then each index in the order Build makes them
// (the column view includes the pre-filter), then the size of its persisted state and the
// heap of the lexical, exact and semantic indexes loaded from it (as a reopen has them). The 100k catalogue runs only with -memory100k.
//
//	go test -run '^$' -bench GenerationMemory -benchtime=1x ./index/ [-args -memory100k]
func BenchmarkGenerationMemory(b *testing.B) {
	sizes := []int{10_000}
	if *memory100k {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("catalog=%dk", n/1000), func(b *testing.B) {
			gen := testcat.GenerateCatalog(n, 1)
			raws := make([][]byte, len(gen))
			for i, c := range gen {
				var err error
				if raws[i], err = json.Marshal(c); err != nil {
					b.Fatal(err)
				}
			}
			gen = nil
			for b.Loop() {
				benchGenerationMemory(b, raws)
			}
		})
	}
}

func benchGenerationMemory(b *testing.B, raws [][]byte) {
	ctx := context.Background()
	n := float64(len(raws))
	last := liveBytes()
	step := func(name string) {
		now := liveBytes()
		b.ReportMetric(float64(int64(now)-int64(last))/n, name+"-B/cap")
		last = now
	}
	caps := make([]*registry.Capability, len(raws))
	for i, r := range raws {
		caps[i] = new(registry.Capability)
		if err := json.Unmarshal(r, caps[i]); err != nil {
			b.Fatal(err)
		}
		registry.Intern(caps[i]) // as the store's decoding does
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		b.Fatal(err)
	}
	step("caps")
	start := last
	g := &Generation{snap: snap, n: len(caps), emb: embed.NewHashed(), log: slog.New(slog.DiscardHandler),
		cols: &colView{}, filter: &filterIndex{}}
	g.pack = make([]bool, g.n)
	for d, c := range caps {
		g.pack[d] = c.ResourceType == registry.TypePack
	}
	if err := g.buildColumns(nil); err != nil {
		b.Fatal(err)
	}
	step("columns")
	g.buildTree()
	step("tree")
	g.buildExact()
	step("exact")
	if err := g.buildLexical(ctx); err != nil {
		b.Fatal(err)
	}
	step("lexical")
	g.buildMeta()
	step("metadata")
	if err := g.buildSemantic(ctx, Options{}); err != nil {
		b.Fatal(err)
	}
	step("semantic")
	b.ReportMetric(float64(int64(last)-int64(start))/n, "index-B/cap")
	// the structures a reopen loads from persisted state (Options.Persisted) instead
	var buf bytes.Buffer
	if err := g.Persist(&buf); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(buf.Len())/n, "persisted-B/cap")
	secs, err := g.openPersisted(buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	runtime.KeepAlive(g)
	l := &Generation{snap: snap, n: g.n, emb: g.emb}
	last = liveBytes()
	if err := l.loadLexical(secs[secLexical]); err != nil {
		b.Fatal(err)
	}
	step("lexical-loaded")
	if err := l.loadExact(secs[secExact]); err != nil {
		b.Fatal(err)
	}
	step("exact-loaded")
	if err := l.loadSemantic(secs[secSemantic]); err != nil {
		b.Fatal(err)
	}
	step("semantic-loaded")
	runtime.KeepAlive(l)
	runtime.KeepAlive(secs)
}

// liveBytes is the heap in use after two collections.
func liveBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
