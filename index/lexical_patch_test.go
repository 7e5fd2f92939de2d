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
