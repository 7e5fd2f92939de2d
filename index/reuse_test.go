package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestBuildReuseSameAsBuild applies random changes (changed text, new capabilities,
// deletions) to a snapshot through registry.Snapshot.Apply and builds each one with
// Options.Reuse set to the previous generation, comparing the text indexes with those of
// a build from scratch: the reuse of the analysis must not change a posting, an impact,
// a term id or a semantic list.
func TestBuildReuseSameAsBuild(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(20, 3))
	emb := embed.NewHashed()
	caps := testcat.GenerateCatalog(400, 7)
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	// the first build of the chain keeps no analysis: the second analyses everything
	prev, err := Build(ctx, snap, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	steps := 12
	if testing.Short() {
		steps = 5
	}
	reused := 0
	for step := range steps {
		var put []*registry.Capability
		var deleted []string
		for range 1 + r.IntN(4) {
			c := snap.Caps[r.IntN(len(snap.Caps))]
			switch r.IntN(4) {
			case 0: // a new action beside c
				if c.ResourceType == registry.TypePack {
					continue
				}
				x := c.Clone()
				x.ID = fmt.Sprintf("%s_new%d", c.ID, step)
				x.Title += " renamed"
				x.Summary = fmt.Sprintf("brand new words zqx%d and %s", step, x.Summary)
				put = append(put, x)
			case 1: // a deleted action
				if c.ResourceType != registry.TypePack {
					deleted = append(deleted, c.ID)
				}
			default: // changed text
				x := c.Clone()
				x.Version++
				x.Summary += fmt.Sprintf(" wug%d grows", step)
				x.WhenToUse = append(x.WhenToUse, "when the deployment is stuck")
				x.Tags = append(x.Tags, fmt.Sprintf("tag%d", r.IntN(5)))
				put = append(put, x)
			}
		}
		put, deleted = dedupeChange(put, deleted)
		next, err := snap.Apply(snap.Generation+1, put, deleted)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Build(ctx, next, Options{Embedder: emb, Reuse: prev})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Build(ctx, next, Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&got.lex, &want.lex) {
			t.Fatalf("step %d: the lexical index built with reuse differs from a full build", step)
		}
		if !reflect.DeepEqual(&got.sem, &want.sem) {
			t.Fatalf("step %d: the semantic index built with reuse differs from a full build", step)
		}
		if got.an == nil || len(got.an.lex) != got.n || len(got.an.sparse) != got.n {
			t.Fatalf("step %d: a generation built with Reuse keeps no analysis for the next", step)
		}
		if want.an != nil {
			t.Fatalf("step %d: a generation built without Reuse keeps its analysis", step)
		}
		for d := range next.Caps {
			if got.reusedFrom(prev, d) {
				reused++
			}
		}
		prev, snap = got, next
	}
	if reused == 0 {
		t.Fatal("no document's analysis was reused")
	}
}

// reusedFrom reports whether a build over g's snapshot with Reuse: prev reuses document d.
func (g *Generation) reusedFrom(prev *Generation, d int) bool {
	m := reuseOf(prev, g.snap)
	return m != nil && m[d] >= 0
}

// dedupeChange keeps the last put of each id and drops deletions of put or unknown ids.
func dedupeChange(put []*registry.Capability, deleted []string) ([]*registry.Capability, []string) {
	last := map[string]int{}
	for i, c := range put {
		last[c.ID] = i
	}
	var p []*registry.Capability
	for i, c := range put {
		if last[c.ID] == i {
			p = append(p, c)
		}
	}
	var d []string
	seen := map[string]bool{}
	for _, id := range deleted {
		if _, ok := last[id]; !ok && !seen[id] {
			seen[id] = true
			d = append(d, id)
		}
	}
	return p, d
}
