package rank

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// TestTermCacheNextSameAsNew changes random capabilities of a snapshot (text changed, new
// ones, deletions) step after step, makes each step's cache with Next from the previous
// one, and compares it whole with a cache made from scratch (with the same hash seed).
func TestTermCacheNextSameAsNew(t *testing.T) {
	analyze := func(s string) []string {
		out := text.Analyze(s)
		for _, c := range text.ConceptsIn(s) {
			out = append(out, "~"+c)
		}
		return out
	}
	r := rand.New(rand.NewPCG(20, 4))
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(300, 9))
	if err != nil {
		t.Fatal(err)
	}
	prev := NewTermCache(snap.Caps, analyze)
	reused := 0
	for step := range 10 {
		var put []*registry.Capability
		var deleted []string
		seen := map[string]bool{}
		for range 1 + r.IntN(4) {
			c := snap.Caps[r.IntN(len(snap.Caps))]
			if seen[c.ID] || c.ResourceType == registry.TypePack {
				continue
			}
			seen[c.ID] = true
			switch r.IntN(3) {
			case 0:
				x := c.Clone()
				x.ID = fmt.Sprintf("%s_new%d", c.ID, step)
				x.Aliases = append(x.Aliases, "restart the stuck deployment")
				put = append(put, x)
			case 1:
				deleted = append(deleted, c.ID)
			default:
				x := c.Clone()
				x.Summary += fmt.Sprintf(" wug%d", step)
				x.WhenNotToUse = append(x.WhenNotToUse, "to inspect it (use "+snap.Caps[r.IntN(len(snap.Caps))].ID+")")
				x.Intents = append(x.Intents, "restart")
				put = append(put, x)
			}
		}
		next, err := snap.Apply(snap.Generation+1, put, deleted)
		if err != nil {
			t.Fatal(err)
		}
		got := prev.Next(next.Caps, analyze)
		want := newTermCache(next.Caps, analyze, prev.seed, nil)
		if len(got.an) != len(next.Caps) {
			t.Fatalf("step %d: Next kept %d analyses of %d capabilities", step, len(got.an), len(next.Caps))
		}
		for _, d := range reuseOf(prev, next.Caps) {
			if d >= 0 {
				reused++
			}
		}
		// the term index is laid out by its own hash seed and a map's order: compared by content
		if a, b := termsOf(got.terms), termsOf(want.terms); !reflect.DeepEqual(a, b) {
			t.Fatalf("step %d: the term numbers made by Next differ from those made from scratch", step)
		}
		keep, voc, terms := got.an, got.voc, got.terms
		got.an, got.voc, got.terms, want.terms = nil, nil, nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d: the cache made by Next differs from one made from scratch", step)
		}
		got.an, got.voc, got.terms = keep, voc, terms
		prev, snap = got, next
	}
	if reused == 0 || !slices.ContainsFunc(prev.an, func(a analysed) bool { return len(a.seq) > 0 }) {
		t.Fatal("no analysis was reused")
	}
}

// termsOf returns the terms of x by number.
func termsOf(x *termIndex) map[string]uint32 {
	out := map[string]uint32{}
	for _, s := range x.slots {
		if s.id != 0 {
			out[x.text[s.off:s.off+s.n]] = s.id
		}
	}
	return out
}

// TestTermCacheVocabularyRenewed changes one capability's words again and again: once the
// chain's vocabulary holds more than twice the live terms, the next cache starts a new one,
// and the cache is still the one made from scratch.
func TestTermCacheVocabularyRenewed(t *testing.T) {
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(40, 17))
	if err != nil {
		t.Fatal(err)
	}
	prev := NewTermCache(snap.Caps, simpleAnalyze).Next(snap.Caps, simpleAnalyze)
	voc, renewed := prev.voc, false
	for step := range 12 {
		x := snap.Caps[3].Clone()
		x.Summary = ""
		for w := range 300 {
			x.Summary += fmt.Sprintf(" zq%dx%d", step, w)
		}
		next, err := snap.Apply(snap.Generation+1, []*registry.Capability{x}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := prev.Next(next.Caps, simpleAnalyze)
		want := newTermCache(next.Caps, simpleAnalyze, prev.seed, nil)
		if !reflect.DeepEqual(termsOf(got.terms), termsOf(want.terms)) || !reflect.DeepEqual(got.nums, want.nums) || !reflect.DeepEqual(got.idf, want.idf) {
			t.Fatalf("step %d: the cache made by Next differs from one made from scratch", step)
		}
		if got.voc != voc {
			renewed = true
		}
		voc, prev, snap = got.voc, got, next
	}
	if !renewed {
		t.Fatalf("the vocabulary was never renewed (%d terms, %d live)", voc.Len(), len(prev.idf))
	}
}
