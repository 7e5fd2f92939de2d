package engine

import (
	"context"
	"sync/atomic"

	"github.com/capdex/capdex/index/embed"
)

// EmbedderSpec says which embedder the semantic retriever uses (see embed.Spec): the
// offline default, a Model2Vec directory, or an OpenAI-compatible or Ollama endpoint.
type EmbedderSpec = embed.Spec

// ParseEmbedder reads the --embedder flag form of a spec: "hashed", "model2vec:DIR",
// "openai:MODEL@URL" or "ollama:MODEL@URL".
func ParseEmbedder(s string) (EmbedderSpec, error) { return embed.ParseSpec(s) }

// OpenEmbedder returns the embedder a spec names, for Options.Embedder.
func OpenEmbedder(s EmbedderSpec) (embed.Embedder, error) { return s.Open() }

// SemanticErr is why the semantic retriever of the generation searched now has no vectors
// (its embedder failed while the generation was built: its searches answer partial), nil
// when it has them.
func (e *Engine) SemanticErr() error { return e.state.Load().gen.SemanticErr() }

// EmbedderID is the id of the embedder the semantic retriever uses.
func (e *Engine) EmbedderID() string { return e.embedder.ID() }

// progressEmbedder counts the texts its embedder embeds while a build is watched
// (Options.EmbedProgress): it sits behind the vector cache, so only texts the cache did not
// hold are counted.
type progressEmbedder struct {
	embed.Embedder
	watch atomic.Pointer[buildProgress]
}

// buildProgress is one watched build: how many texts it may embed at most, how many were.
type buildProgress struct {
	total int
	done  atomic.Int64
	fn    func(done, total int)
}

func (p *progressEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	v, err := p.Embedder.Embed(ctx, texts)
	if w := p.watch.Load(); w != nil && err == nil {
		w.fn(int(w.done.Add(int64(len(texts)))), w.total)
	}
	return v, err
}
