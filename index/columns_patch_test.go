package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestColumnPatchSameAsBuild applies random changes that keep every docID — status,
// enabled, side effect, OS lists, tenants and ACLs taken from other capabilities (so the
// schema mostly stays and the view is patched), and mutations of any field (new OS names,
// tenants and ACL classes: the schema moves and the view is built) — through Build with
// Reuse and through WithAvailability, and compares the column view and the pre-filter of
// each with those of a full build: every row, the schema, the classes, the counts, every
// bitset, and the filters of several callers. It fails if no change was patched, or if
// every one was.
func TestColumnPatchSameAsBuild(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(20, 8))
	caps := testcat.GenerateCatalog(1100, 5) // more than one row chunk
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := Build(ctx, snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const steps = 30
	other := func() *registry.Capability { return snap.Caps[r.IntN(len(snap.Caps))] }
	patched, built, moved := 0, 0, 0
	for step := range steps {
		var classes []registry.ACL
		var firsts []int
		seen := map[string]bool{}
		for d, c := range snap.Caps {
			if k := aclKey(c.Eff.ACL); !seen[k] {
				seen[k] = true
				classes, firsts = append(classes, c.Eff.ACL), append(firsts, d)
			}
		}
		var put []*registry.Capability
		for range 1 + r.IntN(6) {
			c := other()
			if r.IntN(3) == 0 { // the first documents hold the first of the ACL classes
				c = snap.Caps[r.IntN(40)]
			}
			x := c.Clone()
			switch r.IntN(10) {
			case 0:
				x.Status = []registry.Status{registry.StatusActive, registry.StatusDeprecated, registry.StatusOffline}[r.IntN(3)]
			case 1:
				x.SupportedOS = slices.Clone(other().SupportedOS)
			case 2, 7, 8: // a class of the registry, taken by any document, one before its first or another's first
				k := r.IntN(len(classes))
				switch r.IntN(3) {
				case 0:
					if firsts[k] > 0 {
						x = snap.Caps[r.IntN(firsts[k])].Clone()
					}
				case 1:
					x = snap.Caps[firsts[r.IntN(len(firsts))]].Clone()
				}
				x.ACL = classes[k]
			case 3:
				if x.ResourceType == registry.TypePack {
					x.Tenants = slices.Clone(other().Eff.Tenants)
					b := r.IntN(2) == 0
					x.Enabled = &b
				}
			case 4:
				x.SideEffect = other().SideEffect
				x.RequiresConfirmation = !x.RequiresConfirmation
			case 5: // every fourth step: new names, classes
				if step%4 != 3 {
					x.Summary += " other words"
				} else if r.IntN(3) == 0 { // any field: new names and classes
					ms := testcat.Mutations(c)
					x = ms[r.IntN(len(ms))].Cap
				} else {
					x.SupportedOS = append(x.SupportedOS, fmt.Sprintf("os%d", r.IntN(3)))
				}
			default:
				x.Summary += fmt.Sprintf(" step%d", step)
			}
			x.Version++
			put = append(put, x)
		}
		put, _ = dedupeChange(put, nil)
		next, err := snap.Apply(snap.Generation+1, put, nil)
		if err != nil {
			continue // a mutation the registry refuses
		}
		want, err := Build(ctx, next, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got *Generation
		if step%3 == 0 {
			got, err = prev.WithAvailability(next)
		} else {
			got, err = Build(ctx, next, Options{Reuse: prev})
		}
		if err != nil {
			t.Fatal(err)
		}
		if got.stats.ColumnsPatched {
			patched++
			for d := range got.n {
				if got.cols.rows.at(d).acl != prev.cols.rows.at(d).acl {
					moved++
				}
			}
		} else {
			built++
		}
		if d := colDiff(got, want); d != "" {
			t.Fatalf("step %d (patched %v): %s", step, got.stats.ColumnsPatched, d)
		}
		// the filters of callers over the generation's tenants, scopes and OSes
		for _, rc := range []*registry.RuntimeContext{nil, {Tenant: "acme", Scopes: []string{"dev"}, OS: "linux"},
			{Tenant: "globex", User: "u1", Scopes: []string{"admin"}, OS: "windows"}, {OS: "os1"}} {
			for _, f := range []FilterSpec{{}, {Types: []registry.ResourceType{registry.TypeAction}, SideEffectMax: registry.SideEffect("R")}} {
				if a, b := got.Filter(rc, f), want.Filter(rc, f); !a.Equals(b) {
					t.Fatalf("step %d: filter %+v %+v: %d docs, a build gives %d", step, rc, f, a.GetCardinality(), b.GetCardinality())
				}
			}
		}
		prev, snap = got, next
	}
	if patched == 0 || built == 0 || moved == 0 {
		t.Fatalf("%d changes patched the column view (%d documents moved to another ACL class), %d built it: want some of each", patched, moved, built)
	}
	t.Logf("%d steps: %d patched (%d documents moved to another ACL class), %d built", steps, patched, moved, built)
}

// colDiff describes how g's column view and pre-filter differ from want's ("" when equal).
func colDiff(g, want *Generation) string {
	a, b := g.cols, want.cols
	if a.n != b.n {
		return fmt.Sprintf("%d rows, want %d", a.n, b.n)
	}
	for d := range a.n {
		if *a.rows.at(d) != *b.rows.at(d) {
			return fmt.Sprintf("row %d: %+v, want %+v", d, *a.rows.at(d), *b.rows.at(d))
		}
	}
	for _, x := range []struct {
		name string
		a, b any
	}{
		{"os names", a.osNames, b.osNames}, {"tenants", a.tenants, b.tenants}, {"acl classes", a.acls, b.acls},
		{"schema", a.schema, b.schema}, {"os counts", a.osCount, b.osCount}, {"tenant counts", a.tenantCount, b.tenantCount},
		{"acl keys", a.aclIdx, b.aclIdx}, {"acl firsts", a.aclFirst, b.aclFirst},
		{"content", a.contentHash(), b.contentHash()},
	} {
		if !reflect.DeepEqual(x.a, x.b) {
			return fmt.Sprintf("%s: %v, want %v", x.name, x.a, x.b)
		}
	}
	f, w := g.filter, want.filter
	for _, x := range []struct {
		name string
		a, b any
	}{
		{"n", f.n, w.n}, {"live", f.live, w.live}, {"types", f.byType, w.byType}, {"side effects", f.seLE, w.seLE},
		{"any os", f.osAny, w.osAny}, {"os", f.osOK, w.osOK}, {"all tenants", f.tenantAll, w.tenantAll},
		{"tenants", f.byTenant, w.byTenant}, {"acl bits", f.acl, w.acl}, {"acls", f.acls, w.acls},
	} {
		if !reflect.DeepEqual(x.a, x.b) {
			return "filter: " + x.name + " differs"
		}
	}
	if !f.deprec.Equals(w.deprec) {
		return "filter: deprecated differs"
	}
	return ""
}
