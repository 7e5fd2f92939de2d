package rank

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// TestTermChainFirstNextPatched starts a chain from NewTermChain (the cache Open makes,
// which keeps no analysis) and checks that it answers as NewTermCache's does, that the
// first Next of a change that keeps every id patches it (reading the changed capabilities'
// old terms from their records), and that every cache of the chain, patched or assembled,
// equals one made from scratch by content and by its coverages and rankings.
func TestTermChainFirstNextPatched(t *testing.T) {
	analyze := func(s string) []string {
		out := text.Analyze(s)
		for _, c := range text.ConceptsIn(s) {
			out = append(out, "~"+c)
		}
		return out
	}
	r := rand.New(rand.NewPCG(20, 12))
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(300, 13))
	if err != nil {
		t.Fatal(err)
	}
	prev := NewTermChain(snap.Caps, analyze)
	if prev.an != nil || prev.chain == nil {
		t.Fatal("NewTermChain keeps an analysis, or no chain")
	}
	if err := sameCaches(prev, newTermCache(snap.Caps, analyze, prev.seed, nil)); err != nil {
		t.Fatalf("NewTermChain: %v", err)
	}
	patched, compared := 0, 0
	for step := range 8 {
		var put []*registry.Capability
		var deleted []string
		seen := map[string]bool{}
		var queries []string
		for range 1 + r.IntN(4) {
			c := snap.Caps[r.IntN(len(snap.Caps))]
			if seen[c.ID] || c.ResourceType == registry.TypePack {
				continue
			}
			seen[c.ID] = true
			x := c.Clone()
			if r.IntN(2) == 0 {
				x.Summary += fmt.Sprintf(" wug%d blorf%d", step, step%4)
				x.WhenNotToUse = append(x.WhenNotToUse, "to inspect it (use "+snap.Caps[r.IntN(len(snap.Caps))].ID+")")
				x.Intents = append(x.Intents, fmt.Sprintf("restart%d", step%3))
				x.Aliases = append(x.Aliases, fmt.Sprintf("bounce the zork%d pod", step%5))
			} else { // words removed: terms no capability holds any longer
				queries = append(queries, x.Summary+" "+strings.Join(x.WhenToUse, " "))
				x.Summary, x.WhenToUse, x.Aliases = fmt.Sprintf("blorf%d", step%4), nil, nil
			}
			put = append(put, x)
			queries = append(queries, x.Summary)
		}
		if step == 5 { // an id removed: assembled, the kept analyses reused
			for _, c := range snap.Caps {
				if !seen[c.ID] && c.ResourceType != registry.TypePack {
					deleted = append(deleted, c.ID)
					break
				}
			}
		}
		next, err := snap.Apply(snap.Generation+1, put, deleted)
		if err != nil {
			t.Fatal(err)
		}
		got := prev.Next(next.Caps, analyze)
		want := newTermCache(next.Caps, analyze, prev.seed, nil)
		if got.Patched() {
			patched++
		} else if len(deleted) == 0 {
			t.Fatalf("step %d: a change that kept every id was not patched", step)
		}
		if err := sameCaches(got, want); err != nil {
			t.Fatalf("step %d (patched %v): %v", step, got.Patched(), err)
		}
		for range 6 {
			c := next.Caps[r.IntN(len(next.Caps))]
			queries = append(queries, c.Summary, c.Title+" "+strings.Join(c.WhenToUse, " "), "docker 连不上 wug3 blorf1")
		}
		compared += sameAnswers(t, step, next, got, want, queries, analyze)
		prev, snap = got, next
	}
	t.Logf("8 steps, %d patched, %d coverages and rankings compared", patched, compared)
}
