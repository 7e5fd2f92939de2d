package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/bench/cputime"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// BenchmarkBatchImport measures one Engine.Import of testcat.GenerateCatalog(n, 1) into an
// engine opened over an empty Badger store (lint, the all-or-nothing audited store write,
// the snapshot and the first full index build), until a search sees the catalogue, then a
// close and a reopen. The 100k catalogue runs only with -registry100k.
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
	t, cpu = time.Now(), cputime.Process()
	e, err = Open(ctx, Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	reopen, reopenCPU := time.Since(t), cputime.Process()-cpu
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(took.Seconds(), "import-s")
	b.ReportMetric(tookCPU.Seconds(), "import-cpu-s")
	b.ReportMetric(reopen.Seconds(), "reopen-s")
	b.ReportMetric(reopenCPU.Seconds(), "reopen-cpu-s")
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
