package engine

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// BenchmarkBatchImport measures one Engine.Import of testcat.GenerateCatalog(n, 1) into an
// engine opened over an empty Badger store (lint, the all-or-nothing audited store write,
// the snapshot and the first full index build), then a close and a reopen, and the reopen's
// phases measured one by one (the store's open, the read and decoding of every definition,
// the snapshot; the rest of reopen-s is the index build). The 100k catalogue runs only
// with -registry100k.
//
//	go test -run '^$' -bench BatchImport -benchtime=1x ./engine/ [-args -registry100k]
func BenchmarkBatchImport(b *testing.B) {
	sizes := []int{10_000}
	if *scale100k {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("catalog=%dk", n/1000), func(b *testing.B) {
			caps := lintClean(b, testcat.GenerateCatalog(n, 1))
			for b.Loop() {
				benchBatchImport(b, caps)
			}
		})
	}
}

func benchBatchImport(b *testing.B, caps []*registry.Capability) {
	ctx := context.Background()
	dir := b.TempDir()
	e, err := Open(ctx, Options{Dir: dir, Seed: []*registry.Capability{}})
	if err != nil {
		b.Fatal(err)
	}
	t, cpu := time.Now(), cputime.Process()
	if err := e.Import(ctx, caps, "bench"); err != nil {
		b.Fatal(err)
	}
	took, tookCPU := time.Since(t), cputime.Process()-cpu
	if got := len(e.Snapshot().Caps); got != len(caps) {
		b.Fatalf("%d capabilities after the import, want %d", got, len(caps))
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	// the reopen's phases, one by one: the store's open, the read and decoding of every
	// definition, the snapshot (inheritance); the rest of an engine's reopen is the index
	t, cpu = time.Now(), cputime.Process()
	st, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	stOpen, stOpenCPU := time.Since(t), cputime.Process()-cpu
	t, cpu = time.Now(), cputime.Process()
	active, gen, err := st.Active()
	if err != nil {
		b.Fatal(err)
	}
	read, readCPU := time.Since(t), cputime.Process()-cpu
	t, cpu = time.Now(), cputime.Process()
	if _, err := registry.NewSnapshot(gen, active); err != nil {
		b.Fatal(err)
	}
	snap, snapCPU := time.Since(t), cputime.Process()-cpu
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	active = nil
	t, cpu = time.Now(), cputime.Process()
	e, err = Open(ctx, Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	reopen, reopenCPU := time.Since(t), cputime.Process()-cpu
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	b.ReportMetric(took.Seconds(), "import-s")
	b.ReportMetric(tookCPU.Seconds(), "import-cpu-s")
	b.ReportMetric(reopen.Seconds(), "reopen-s")
	b.ReportMetric(reopenCPU.Seconds(), "reopen-cpu-s")
	b.ReportMetric(ms(stOpen), "reopen-store-open-ms")
	b.ReportMetric(ms(stOpenCPU), "reopen-store-open-cpu-ms")
	b.ReportMetric(ms(read), "reopen-read-decode-ms")
	b.ReportMetric(ms(readCPU), "reopen-read-decode-cpu-ms")
	b.ReportMetric(ms(snap), "reopen-snapshot-ms")
	b.ReportMetric(ms(snapCPU), "reopen-snapshot-cpu-ms")
}

// lintClean returns caps with the ACL and tenants of every capability that lint finds
// wider than its pack's replaced by its pack's (the generated catalogue gives a few nested
// packs an ACL or tenants wider than their parent's, which Options.Seed accepts and Import
// refuses). It lints copies without schemas, so that the schema cache stays cold for the
// import measured, and looks only at the ACL and tenant rules.
func lintClean(b *testing.B, caps []*registry.Capability) []*registry.Capability {
	byID := make(map[string]*registry.Capability, len(caps))
	for _, c := range caps {
		byID[c.ID] = c
	}
	for range 4 {
		bare := make([]*registry.Capability, len(caps))
		for i, c := range caps {
			d := *c
			d.ArgumentsSchema, d.OutputSchema = nil, nil
			bare[i] = &d
		}
		fixed := 0
		for _, le := range registry.Lint(bare) {
			if !strings.HasPrefix(le.Field, "acl.") && le.Field != "tenants" {
				continue
			}
			c, p := byID[le.ID], byID[registry.Parent(le.ID)]
			if c == nil || p == nil {
				b.Fatalf("generated catalogue: %v", le)
			}
			d := c.Clone()
			d.ACL, d.Tenants = p.ACL, p.Tenants
			byID[d.ID] = d
			fixed++
		}
		if fixed == 0 {
			return caps
		}
		for i, c := range caps {
			caps[i] = byID[c.ID]
		}
	}
	b.Fatal("generated catalogue: ACLs still wider than their packs' after 4 rounds")
	return nil
}

// BenchmarkDefinitionsMemory reports the live heap, per capability, of the definitions as
// the store decodes them (store.Active over a Badger store holding
// testcat.GenerateCatalog(n, 1)), alone and with the snapshot built over them (their Eff,
// the id map), the registry's share of an open engine's heap: each is the heap freed when
// it is dropped, the store closed, so that Badger's own memory does not count. 100k with
// -registry100k.
//
//	go test -run '^$' -bench DefinitionsMemory -benchtime=1x ./engine/
func BenchmarkDefinitionsMemory(b *testing.B) {
	sizes := []int{10_000}
	if *scale100k {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("catalog=%dk", n/1000), func(b *testing.B) {
			dir := b.TempDir()
			st, err := store.Open(store.Options{Dir: dir, NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			if err := st.PutAll(context.Background(), testcat.GenerateCatalog(n, 1), "bench"); err != nil {
				b.Fatal(err)
			}
			if err := st.Close(); err != nil {
				b.Fatal(err)
			}
			read := func(snapshot bool) any {
				st, err := store.Open(store.Options{Dir: dir, NoSync: true})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				caps, gen, err := st.Active()
				if err != nil {
					b.Fatal(err)
				}
				if !snapshot {
					return caps
				}
				snap, err := registry.NewSnapshot(gen, caps)
				if err != nil {
					b.Fatal(err)
				}
				return snap
			}
			for b.Loop() {
				for _, snapshot := range []bool{false, true} {
					v := read(snapshot)
					with := liveHeap()
					runtime.KeepAlive(v)
					v = nil
					name := "decoded"
					if snapshot {
						name = "decoded+snapshot"
					}
					b.ReportMetric(float64(int64(with)-int64(liveHeap()))/float64(n), name+"-B/cap")
				}
			}
		})
	}
}
