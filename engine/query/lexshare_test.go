package query

import (
	"reflect"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestSameLexiconInputsReadsEveryInput changes each field of capabilities in turn
// (testcat.Mutations): whenever the lexicon of the changed snapshot differs from the
// original's (Generation aside), SameLexiconInputs must report the two definitions
// different, or an engine sharing the lexicon would keep a stale one.
func TestSameLexiconInputsReadsEveryInput(t *testing.T) {
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(60, 13))
	if err != nil {
		t.Fatal(err)
	}
	base := NewLexicon(snap)
	differs := 0
	docs := []int{0, 5, 22, 59}
	for d, c := range snap.Caps {
		if len(c.Symptoms) > 0 && len(docs) < 8 {
			docs = append(docs, d)
		}
	}
	for _, d := range docs {
		c := snap.Caps[d]
		ms := testcat.Mutations(c)
		if len(c.Symptoms) > 0 { // only an alias that names a symptom is in the lexicon
			x := c.Clone()
			x.Aliases = append(x.Aliases, "it says "+c.Symptoms[0])
			ms = append(ms, testcat.Mutation{Field: "Aliases (naming a symptom)", Cap: x})
		}
		for _, m := range ms {
			next, err := snap.Apply(1, []*registry.Capability{m.Cap}, nil)
			if err != nil {
				continue // a mutation the registry refuses
			}
			nc, _ := next.Get(c.ID)
			if !reflect.DeepEqual(lexView(NewLexicon(next)), lexView(base)) {
				differs++
				if SameLexiconInputs(c, nc) {
					t.Errorf("a change of %s of %s (%s) changes the lexicon, but SameLexiconInputs ignores it", m.Field, c.ID, c.ResourceType)
				}
			} else if m.Field == "Summary" && !SameLexiconInputs(c, nc) {
				t.Errorf("a summary change of %s is not the same for the lexicon", c.ID)
			}
		}
	}
	if differs == 0 {
		t.Fatal("no mutation changed the lexicon")
	}
	if !reflect.DeepEqual(lexView(NewLexicon(snap)), lexView(base)) {
		t.Fatal("two lexicons of one snapshot differ")
	}
}

// lexView is what a lexicon holds, independent of the order its maps were walked in when
// it was frozen (all, tail and nums are laid out in that order; the entries of each key
// keep theirs, and hold the words tail numbers) and of the words queries looked up.
func lexView(l *Lexicon) []any {
	byKey := make(map[string][]entry, len(l.byKey))
	for k, r := range l.byKey {
		byKey[k] = l.all[r.lo : r.lo+r.n]
	}
	return []any{l.ncaps, byKey, l.intentVals, l.verbs, l.reads, l.ids, l.packs, l.packIDs, l.packKeys}
}
