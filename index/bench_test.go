package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

var benchSizes = []struct {
	name string
	n    int
}{{"1k", 1000}, {"10k", 10000}, {"100k", 100000}}

var (
	benchMu   sync.Mutex
	benchGens = map[int]*Generation{}
)

// benchGeneration builds (once per process) a generation over a generated catalogue of n.
func benchGeneration(b *testing.B, n int) *Generation {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if g, ok := benchGens[n]; ok {
		return g
	}
	g := buildCaps(b, 1, testcat.GenerateCatalog(n, 42), Options{})
	benchGens[n] = g
	return g
}

// benchQueries derives realistic queries from the catalogue: paraphrases of titles and
// summaries in both languages, explicit ids, and short keyword queries.
func benchQueries(g *Generation, count int) []*Query {
	r := rand.New(rand.NewPCG(9, 9))
	caps := g.Snapshot().Caps
	var out []*Query
	for len(out) < count {
		c := caps[r.IntN(len(caps))]
		if c.ResourceType != registry.TypeAction {
			continue
		}
		var q Query
		switch len(out) % 5 {
		case 0:
			q.Text = "I need to " + strings.ToLower(c.Title)
		case 1:
			q.Text = c.Summary
		case 2:
			q.Text = "please run " + c.ID
			q.IDs = []string{c.ID}
		case 3:
			if len(c.Aliases) > 0 {
				q.Text = c.Aliases[0] + " 怎么办"
			} else {
				q.Text = c.Title
			}
		default:
			w := strings.Fields(strings.ToLower(c.Title))
			q.Text = strings.Join(w[:min(2, len(w))], " ") + " not working"
			if len(c.Aliases) > 2 { // "<module> <object> <verb>": name the module
				q.Text = strings.Fields(c.Aliases[2])[0] + " " + q.Text
			}
		}
		q.Intents = c.Intents
		q.Entities = c.Entities[:1]
		q.Within = ""
		if len(out)%7 == 0 {
			q.Within = registry.Parent(c.ID)
			q.Browse = true
		}
		out = append(out, &q)
	}
	return out
}

var benchRC = &registry.RuntimeContext{Tenant: "acme", User: "alice", Scopes: []string{"dev", "ops"}, OS: "linux"}

func BenchmarkRetrieve(b *testing.B) {
	for _, size := range benchSizes {
		if testing.Short() && size.n > 10000 {
			continue
		}
		for k := Kind(0); k < NumKinds; k++ {
			b.Run(fmt.Sprintf("catalog=%s/retriever=%s", size.name, k), func(b *testing.B) {
				g := benchGeneration(b, size.n)
				if k == History {
					g = withHistory(g)
				}
				qs := benchQueries(g, 256)
				allow := g.Filter(benchRC, FilterSpec{})
				ctx := context.Background()
				hits := 0
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.ReportAllocs()
				b.ResetTimer()
				cpu := threadCPU()
				for i := 0; i < b.N; i++ {
					q := qs[i%len(qs)]
					q.User = "alice"
					h, err := g.Retrieve(ctx, k, q, allow, 20)
					if err != nil {
						b.Fatal(err)
					}
					hits += len(h)
				}
				b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
			})
		}
	}
}

// withHistory returns a shallow copy of g with a history source of 200 uses.
func withHistory(g *Generation) *Generation {
	h := fakeHistory{}
	for i, c := range g.Snapshot().Caps {
		if i%(max(g.Len()/200, 1)) == 0 {
			h[c.ID] = float64(i%17) + 1
		}
	}
	cp := *g
	cp.history = h
	return &cp
}

func BenchmarkFilter(b *testing.B) {
	for _, size := range benchSizes {
		if testing.Short() && size.n > 10000 {
			continue
		}
		b.Run("catalog="+size.name, func(b *testing.B) {
			g := benchGeneration(b, size.n)
			specs := []FilterSpec{{}, {SideEffectMax: registry.SideEffectRead}, {Types: []registry.ResourceType{registry.TypeAction}}, {Within: "maintenance"}}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			cpu := threadCPU()
			for i := 0; i < b.N; i++ {
				g.Filter(benchRC, specs[i%len(specs)])
			}
			b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func BenchmarkBuild(b *testing.B) {
	for _, size := range benchSizes {
		if testing.Short() && size.n > 10000 {
			continue
		}
		b.Run("catalog="+size.name, func(b *testing.B) {
			caps := testcat.GenerateCatalog(size.n, 42)
			snap, err := registry.NewSnapshot(1, caps)
			if err != nil {
				b.Fatal(err)
			}
			var g *Generation
			var bytesPer float64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				g = nil
				before := heapInUse()
				b.StartTimer()
				g, err = Build(context.Background(), snap, Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				bytesPer = float64(heapInUse()-before) / float64(size.n)
				b.StartTimer()
			}
			b.StopTimer()
			st := g.Stats()
			b.ReportMetric(bytesPer, "bytes/capability")
			b.ReportMetric(float64(st.Postings)/float64(size.n), "postings/capability")
			b.ReportMetric(float64(st.Lexical.Microseconds())/1000, "lexical-ms")
			b.ReportMetric(float64(st.Semantic.Microseconds())/1000, "semantic-ms")
			b.ReportMetric(float64(st.Columns.Microseconds())/1000, "columns-ms")
			runtime.KeepAlive(g)
		})
	}
}

// BenchmarkBuildColumnRestore compares restoring the column view from its snapshot bytes with
// rebuilding it.
func BenchmarkBuildColumnRestore(b *testing.B) {
	g := benchGeneration(b, 10000)
	var sb strings.Builder
	if err := g.ColumnSnapshot(&sb); err != nil {
		b.Fatal(err)
	}
	raw := []byte(sb.String())
	for _, mode := range []string{"rebuild", "restore"} {
		b.Run("catalog=10k/mode="+mode, func(b *testing.B) {
			b.ReportMetric(float64(len(raw)), "snapshot-bytes")
			for i := 0; i < b.N; i++ {
				v := &colView{}
				v.prepareRows(g.Snapshot())
				if mode == "restore" {
					c, err := v.restore(raw, g.Snapshot().Generation)
					if err != nil {
						b.Fatal(err)
					}
					c.Close()
				} else {
					c, err := v.newCollection(v.n)
					if err != nil {
						b.Fatal(err)
					}
					if err := v.insertRows(c); err != nil {
						b.Fatal(err)
					}
					c.Close()
				}
			}
		})
	}
}
