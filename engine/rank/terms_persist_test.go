package rank

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

func persistAnalyze(s string) []string {
	out := text.Analyze(s)
	for _, c := range text.ConceptsIn(s) {
		out = append(out, "~"+c)
	}
	return out
}

// TestTermChainPersistedSameAsBuilt writes the cache of a chain (NewTermChain's, and the
// last of a chain of patches: garbage in its numbers, terms no capability holds) and
// loads it: the loaded cache equals one made from scratch by content and by its coverages
// and rankings, writes the bytes it was loaded from, and the first Next of a change that
// keeps every id patches it into a cache equal to one made from scratch.
func TestTermChainPersistedSameAsBuilt(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 14))
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(300, 15))
	if err != nil {
		t.Fatal(err)
	}
	first := NewTermChain(snap.Caps, persistAnalyze)
	patched, chain := first, snap
	for step := range 5 {
		var put []*registry.Capability
		for range 3 {
			x := chain.Caps[r.IntN(len(chain.Caps))].Clone()
			x.Summary = fmt.Sprintf("blorf%d zork", step)
			x.WhenToUse, x.Aliases = nil, []string{fmt.Sprintf("bounce the zork%d pod", step)}
			put = append(put, x)
		}
		if chain, err = chain.Apply(chain.Generation+1, put, nil); err != nil {
			t.Fatal(err)
		}
		if patched = patched.Next(chain.Caps, persistAnalyze); !patched.Patched() {
			t.Fatalf("step %d not patched", step)
		}
	}
	compared := 0
	for _, c := range []struct {
		name string
		from *TermCache
		snap *registry.Snapshot
	}{{"first", first, snap}, {"patched", patched, chain}} {
		b, ok := c.from.AppendPersisted(nil)
		if !ok {
			t.Fatalf("%s: not persisted", c.name)
		}
		got, err := LoadTermChain(b, c.snap.Caps, persistAnalyze)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := newTermCache(c.snap.Caps, persistAnalyze, got.seed, nil)
		if err := sameCaches(got, want); err != nil {
			t.Fatalf("%s: the loaded cache differs from a built one: %v", c.name, err)
		}
		var queries []string
		for range 8 {
			x := c.snap.Caps[r.IntN(len(c.snap.Caps))]
			queries = append(queries, x.Summary, x.Title+" "+strings.Join(x.WhenToUse, " "), "bounce the zork2 pod blorf1")
		}
		compared += sameAnswers(t, 0, c.snap, got, want, queries, persistAnalyze)
		if again, _ := got.AppendPersisted(nil); string(again) != string(b) {
			t.Fatalf("%s: the loaded cache writes other bytes than it was loaded from", c.name)
		}
		// the first change after the load patches
		x := c.snap.Caps[7].Clone()
		x.Summary += " wug quarterly ledger"
		next, err := c.snap.Apply(c.snap.Generation+1, []*registry.Capability{x}, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := got.Next(next.Caps, persistAnalyze)
		if !n.Patched() {
			t.Fatalf("%s: the first change after the load was not patched", c.name)
		}
		if err := sameCaches(n, newTermCache(next.Caps, persistAnalyze, got.seed, nil)); err != nil {
			t.Fatalf("%s: after the first change: %v", c.name, err)
		}
	}
	t.Logf("%d coverages and rankings compared", compared)
}

// TestTermChainPersistedDamaged: other capabilities, another format, records that are not
// the capabilities' analysis, truncations and flipped bytes at ~400 places of a small cache:
// an error wrapping ErrTermsPersisted or a cache, never a panic; NewTermCache's cache is
// not persisted.
func TestTermChainPersistedDamaged(t *testing.T) {
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(40, 16))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewTermChain(snap.Caps, persistAnalyze).AppendPersisted(nil)
	if _, ok := NewTermCache(snap.Caps, persistAnalyze).AppendPersisted(nil); ok {
		t.Fatal("a cache of no chain was persisted")
	}
	fewer, err := registry.NewSnapshot(1, snap.Caps[:39])
	if err != nil {
		t.Fatal(err)
	}
	other := append([]*registry.Capability(nil), snap.Caps...)
	x := other[20].Clone()
	x.Summary, x.WhenToUse = "entirely other words", nil
	other[20] = x
	for name, c := range map[string]struct {
		b    []byte
		caps []*registry.Capability
	}{
		"fewer":   {b, fewer.Caps},
		"format":  {append([]byte{termsFormat + 1}, b[1:]...), snap.Caps},
		"other":   {b, other},
		"empty":   {nil, snap.Caps},
		"trailer": {append(b[:len(b):len(b)], 0), snap.Caps},
	} {
		if _, err := LoadTermChain(c.b, c.caps, persistAnalyze); !errors.Is(err, ErrTermsPersisted) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for k := 0; k < len(b); k += 1 + len(b)/400 { // ~400 places: each load analyses a few capabilities
		if _, err := LoadTermChain(b[:k], snap.Caps, persistAnalyze); err == nil {
			t.Fatalf("truncated to %d bytes: loaded", k)
		}
		d := append([]byte(nil), b...)
		d[k] ^= 0x5a
		LoadTermChain(d, snap.Caps, persistAnalyze) // must not panic
	}
}

// FuzzLoadTermChain: any bytes give a cache or an error, never a panic.
func FuzzLoadTermChain(f *testing.F) {
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(12, 17))
	if err != nil {
		f.Fatal(err)
	}
	b, _ := NewTermChain(snap.Caps, persistAnalyze).AppendPersisted(nil)
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		tc, err := LoadTermChain(b, snap.Caps, persistAnalyze)
		if err == nil && len(tc.docs) != len(snap.Caps) {
			t.Fatal("a loaded cache of other documents")
		}
	})
}
