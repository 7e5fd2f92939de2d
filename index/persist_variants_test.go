package index

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/testcat"
	"github.com/capdex/capdex/registry"
)

// TestPersistedLexicalWithVariants loads a lexical index from persisted state while the
// lexical parameters add variants of the query terms (VariantWeight > 0, which the
// section's parameters do not hold): the loaded index must answer as a build does, never
// panic on the sorted vocabulary the variants are found in.
func TestPersistedLexicalWithVariants(t *testing.T) {
	p := DefaultLexicalParams()
	p.VariantWeight = 0.3
	old, err := SetLexicalParams(p)
	if err != nil {
		t.Fatal(err)
	}
	defer SetLexicalParams(old)
	ctx := context.Background()
	emb := embed.NewHashedDim(1 << 10)
	snap, err := registry.NewSnapshot(4, testcat.GenerateCatalog(120, 7))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Build(ctx, snap, Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Build(ctx, snap, Options{Embedder: emb, Persisted: persisted(t, want)})
	if err != nil {
		t.Fatal(err)
	}
	if !got.loaded(secLexical) {
		t.Fatalf("lexical section not loaded: %v", got.Stats().Persist.Err)
	}
	queries := append(persistQueries(snap, rand.New(rand.NewPCG(3, 5)), 10), "scanner rentals restarting")
	sameAnswers(t, got, want, queries)
}
