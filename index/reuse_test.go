package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/index/text"
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
	reused, patched, compared, semPatched, semCompared := 0, 0, 0, 0, 0
	for step := range steps {
		var put []*registry.Capability
		var deleted []string
		for range 1 + r.IntN(4) {
			c := snap.Caps[r.IntN(len(snap.Caps))]
			switch r.IntN(6) {
			case 4: // changed summary only: tree, exact and metadata shared
				x := c.Clone()
				x.Summary += fmt.Sprintf(" only%d", step)
				put = append(put, x)
			case 5: // a mutation of one field, any
				ms := testcat.Mutations(c)
				put = append(put, ms[r.IntN(len(ms))].Cap)
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
		if d := lexDiff(&got.lex, &want.lex); d != "" {
			t.Fatalf("step %d: the lexical index built with reuse differs from a full build: %s", step, d)
		}
		if got.lex.more != nil { // set by patchLexical
			patched++
		}
		// the same answers, score for score, to queries on the changed texts and others
		var queries []string
		for _, c := range put {
			queries = append(queries, c.Summary, c.Title+" "+c.ID)
		}
		for range 4 {
			c := next.Caps[r.IntN(len(next.Caps))]
			queries = append(queries, c.Summary, c.Title+". "+c.Summary)
		}
		for _, q := range queries {
			a, err := got.Retrieve(ctx, Lexical, &Query{Text: q}, nil, 20)
			if err != nil {
				t.Fatal(err)
			}
			b, err := want.Retrieve(ctx, Lexical, &Query{Text: q}, nil, 20)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("step %d: %q: %v, full build %v", step, q, a, b)
			}
			compared++
		}
		if d := semDiff(&got.sem, &want.sem); d != "" {
			t.Fatalf("step %d: the semantic index built with reuse differs from a full build: %s", step, d)
		}
		if got.stats.SemanticPatched {
			semPatched++
		}
		// long requests of several texts complete candidates through the forward postings
		var long string
		for range 6 {
			long += next.Caps[r.IntN(len(next.Caps))].Summary + " "
		}
		for _, q := range append(queries, long, long+queries[0]) {
			a, err := got.Retrieve(ctx, Semantic, &Query{Text: q}, nil, 20)
			if err != nil {
				t.Fatal(err)
			}
			b, err := want.Retrieve(ctx, Semantic, &Query{Text: q}, nil, 20)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("step %d: semantic %q: %v, full build %v", step, q, a, b)
			}
			semCompared++
		}
		if !reflect.DeepEqual(&got.exact, &want.exact) || !reflect.DeepEqual(&got.meta, &want.meta) || !reflect.DeepEqual(&got.tree, &want.tree) {
			t.Fatalf("step %d: the exact, metadata or tree index built with reuse differs from a full build", step)
		}
		if got.an == nil || len(got.an.lex) != got.n || len(got.an.sparse) != got.n {
			t.Fatalf("step %d: a generation built with Reuse keeps no analysis for the next", step)
		}
		if want.an == nil || len(want.an.lex) != 0 || want.an.sparse != nil || want.an.voc.Len() != 0 {
			t.Fatalf("step %d: a generation built without Reuse keeps some analysis", step)
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
	if patched == 0 || semPatched == 0 {
		t.Fatalf("%d lexical and %d semantic indexes patched: want some of each", patched, semPatched)
	}
	t.Logf("%d steps, %d with the lexical index patched, %d lexical answers compared; %d with the semantic index patched, %d semantic answers compared",
		steps, patched, compared, semPatched, semCompared)
}

// TestShareRulesReadEveryInput changes each field of capabilities in turn (testcat.Mutations)
// and checks that whenever the tree, exact or metadata index of a full build changes, the
// rule that lets a build share it (sameTree, sameExact, sameMeta) sees the change: a field
// an index reads that its rule ignores fails here.
func TestShareRulesReadEveryInput(t *testing.T) {
	ctx := context.Background()
	caps := testcat.GenerateCatalog(60, 11)
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	base, err := Build(ctx, snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	changed := map[string]bool{}
	for _, d := range []int{0, 7, 31, 59} {
		c := snap.Caps[d]
		for _, m := range testcat.Mutations(c) {
			next, err := snap.Apply(2, []*registry.Capability{m.Cap}, nil)
			if err != nil {
				continue // a mutation the registry refuses (a pack turned into an action under its children)
			}
			g, err := Build(ctx, next, Options{})
			if err != nil {
				t.Fatal(err)
			}
			nc, _ := next.Get(c.ID)
			for _, x := range []struct {
				name string
				same func(a, b *registry.Capability) bool
				a, b any
			}{
				{"tree", sameTree, &base.tree, &g.tree},
				{"exact", sameExact, &base.exact, &g.exact},
				{"metadata", sameMeta, &base.meta, &g.meta},
			} {
				if !reflect.DeepEqual(x.a, x.b) {
					changed[x.name] = true
					if x.same(c, nc) {
						t.Errorf("a change of %s of %s changes the %s index, but its share rule ignores it", m.Field, c.ID, x.name)
					}
				}
			}
		}
	}
	if !changed["exact"] || !changed["metadata"] {
		t.Fatalf("no mutation changed the exact or metadata index: %v", changed)
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

// TestReuseVocabularyRenewed changes one capability's words again and again: once the
// chain's vocabulary holds more than twice the live terms, the next build starts a new
// one (analysing everything again), and the index is still the one a full build gives.
func TestReuseVocabularyRenewed(t *testing.T) {
	ctx := context.Background()
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(40, 17))
	if err != nil {
		t.Fatal(err)
	}
	prev, err := Build(ctx, snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	renewed := false
	var voc *text.Vocab
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
		got, err := Build(ctx, next, Options{Reuse: prev})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Build(ctx, next, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := lexDiff(&got.lex, &want.lex); d != "" {
			t.Fatalf("step %d: the lexical index differs from a full build: %s", step, d)
		}
		if voc != nil && got.an.voc != voc {
			renewed = true
			if n := got.an.voc.Len(); n > 2*got.an.terms+1024 {
				t.Fatalf("step %d: the new vocabulary holds %d terms, %d live", step, n, got.an.terms)
			}
		}
		voc, prev, snap = got.an.voc, got, next
	}
	if !renewed {
		t.Fatalf("the vocabulary was never renewed (%d terms, %d live)", voc.Len(), prev.an.terms)
	}
}

// lexDiff describes how two lexical indexes differ in what a search reads, "" when they do
// not: every term's entries, document frequency, idf and impacts (derived anew, so the
// caches' state does not count), the norms, the parameters and the number of terms a query
// can find. Term ids are compared through the terms, so two indexes that number the same
// terms differently do not differ.
func lexDiff(a, b *lexIndex) string {
	if !reflect.DeepEqual(a.norms, b.norms) {
		return "norms"
	}
	if a.params != b.params {
		return "parameters"
	}
	if len(a.concepts) != len(b.concepts) {
		return "concept slots"
	}
	live := func(x *lexIndex) int {
		n := 0
		for _, m := range []map[string]uint32{x.dict, x.more} {
			for _, id := range m {
				if x.df[id] > 0 {
					n++
				}
			}
		}
		return n
	}
	if la, lb := live(a), live(b); la != lb {
		return fmt.Sprintf("%d terms, want %d", la, lb)
	}
	for term, ib := range b.dict {
		ia, ok := a.termID(term)
		if !ok {
			return fmt.Sprintf("term %q missing", term)
		}
		da, fa := a.list(ia)
		db, fb := b.list(ib)
		if !slices.Equal(da, db) || !slices.Equal(fa, fb) {
			return fmt.Sprintf("term %q: entries differ", term)
		}
		if a.df[ia] != b.df[ib] || a.idf[ia] != b.idf[ib] {
			return fmt.Sprintf("term %q: df %d idf %v, want %d %v", term, a.df[ia], a.idf[ia], b.df[ib], b.idf[ib])
		}
		if !reflect.DeepEqual(a.deriveImpacts(ia), b.deriveImpacts(ib)) {
			return fmt.Sprintf("term %q: impacts differ", term)
		}
	}
	return ""
}
