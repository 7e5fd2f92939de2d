package engine

import (
	"context"
	"testing"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/embed"
)

// denseEmbedder stands for an embedder behind a network call.
type denseEmbedder struct{}

func (denseEmbedder) ID() string { return "dense" }
func (denseEmbedder) Dim() int   { return 2 }
func (denseEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

// TestInlineKinds checks which retrievers a search may run on its caller's goroutine:
// all of the built-in ones with the offline embedder, all but the semantic one with a
// dense embedder (which may call a remote model), none when the retriever is wrapped.
func TestInlineKinds(t *testing.T) {
	all := uint16(1)<<index.NumKinds - 1
	if got := inlineKinds(Options{}, embed.NewHashed()); got != all {
		t.Errorf("hashed embedder: %b, want %b", got, all)
	}
	if got := inlineKinds(Options{}, denseEmbedder{}); got != all&^(1<<index.Semantic) {
		t.Errorf("dense embedder: %b", got)
	}
	wrap := func(f actors.RetrieveFunc) actors.RetrieveFunc { return f }
	if got := inlineKinds(Options{WrapRetriever: wrap}, embed.NewHashed()); got != 0 {
		t.Errorf("wrapped retriever: %b", got)
	}
}
