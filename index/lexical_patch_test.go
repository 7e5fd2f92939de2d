package index

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestLexicalPatchSearchedConcurrently searches a patched lexical index (whose impacts are
// derived on first use, lexImpacts) from several goroutines at once, each query's answer
// compared with a full build's: run with -race, it checks the lazy derivation.
func TestLexicalPatchSearchedConcurrently(t *testing.T) {
	ctx := context.Background()
	caps := testcat.GenerateCatalog(300, 5)
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	first, err := Build(ctx, snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	prev, err := Build(ctx, snap, Options{Reuse: first}) // analyses everything, keeps it
	if err != nil {
		t.Fatal(err)
	}
	var put []*registry.Capability
	for i := range 3 {
		x := snap.Caps[40+50*i].Clone()
		x.Summary += fmt.Sprintf(" plonk%d widget rebalancing", i)
		x.Title = "renamed " + x.Title
		put = append(put, x)
	}
	next, err := snap.Apply(2, put, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Build(ctx, next, Options{Reuse: prev})
	if err != nil {
		t.Fatal(err)
	}
	if got.lex.more == nil { // set by patchLexical, and kept when it compacts
		t.Fatal("the lexical index was not patched")
	}
	want, err := Build(ctx, next, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var queries []string
	for d := 0; d < len(next.Caps); d += 7 {
		queries = append(queries, next.Caps[d].Summary)
	}
	queries = append(queries, "plonk1 widget", "renamed rebalancing", "widget rebalancing plonk2")
	searchedConcurrently(t, got, want, queries)
}

// searchedConcurrently searches got for queries from four goroutines (run under -race for
// got's lazily derived state) and requires every lexical answer to equal want's.
func searchedConcurrently(t *testing.T, got, want *Generation, queries []string) {
	t.Helper()
	ctx := context.Background()
	wants := make([][]Hit, len(queries))
	for i, q := range queries {
		var err error
		if wants[i], err = want.Retrieve(ctx, Lexical, &Query{Text: q}, nil, 10); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(queries))
	for w := range 4 {
		wg.Go(func() {
			for k := range queries {
				i := (k + w*len(queries)/4) % len(queries)
				hits, err := got.Retrieve(ctx, Lexical, &Query{Text: queries[i]}, nil, 10)
				if err != nil || !reflect.DeepEqual(hits, wants[i]) {
					errs <- fmt.Sprintf("%q: %v (%v), want %v", queries[i], hits, err, wants[i])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestLexicalPatchKeepsUnchangedLists edits summaries and checks that the terms of a changed
// document whose entries came out the same (its title's words) keep their lists, shared
// with the previous generation, and that the index is a full build's (lexDiff). It fails
// if no such list was kept.
func TestLexicalPatchKeepsUnchangedLists(t *testing.T) {
	ctx := context.Background()
	snap, err := registry.NewSnapshot(1, testcat.GenerateCatalog(300, 21))
	if err != nil {
		t.Fatal(err)
	}
	prev, err := Build(ctx, snap, Options{})
	if err != nil {
		t.Fatal(err)
	}
	kept, copied := 0, 0
	for step := range 6 {
		c := snap.Caps[(step*53)%len(snap.Caps)].Clone()
		c.Summary += fmt.Sprintf(" zqkept%d", step)
		next, err := snap.Apply(snap.Generation+1, []*registry.Capability{c}, nil)
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
			t.Fatalf("step %d: %s", step, d)
		}
		if got.stats.LexicalPatched {
			d, _ := next.DocID(c.ID)
			for _, v := range got.an.lex[d].vterms {
				term := got.an.voc.Term(v)
				id, ok := got.lex.dict[term]
				if !ok {
					id, ok = got.lex.more[term]
				}
				if !ok || int(id) >= len(prev.lex.df) {
					copied++ // a term new to the index
					continue
				}
				a, _ := prev.lex.list(id)
				b, _ := got.lex.list(id)
				if len(a) > 0 && len(b) > 0 && &a[0] == &b[0] {
					kept++
				} else {
					copied++
				}
			}
		}
		prev, snap = got, next
	}
	if kept == 0 || copied == 0 {
		t.Fatalf("%d lists of a changed document's terms kept, %d made again: want some of each", kept, copied)
	}
	t.Logf("%d lists of a changed document's terms kept, %d made again", kept, copied)
}
