package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/registry"
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

// TestSearchAlone checks the count of searches in progress that tells the actors a search
// is alone (actors.Job.Alone): a search prepared while no other is in progress is alone,
// one prepared while another is (a stream not yet read to its end) is not, and Search and
// SearchStream leave the count as they found it, errors included.
func TestSearchAlone(t *testing.T) {
	e, err := Open(context.Background(), Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	rc := registry.RuntimeContext{Tenant: "default", User: "dev", Scopes: []string{"*"}}
	prepared := func() *actors.Job {
		t.Helper()
		req, r := registry.SearchRequest{Query: "docker 连不上"}, rc
		e.busy.Add(1) // as Search counts itself
		defer e.busy.Add(-1)
		job, sc, err := e.prepare(ctx, &req, &r, false)
		if err != nil {
			t.Fatal(err)
		}
		sc.release()
		return job
	}
	if !prepared().Alone {
		t.Error("no other search in progress: not alone")
	}
	updates, err := e.SearchStream(ctx, registry.SearchRequest{Query: "codex 版本"}, rc)
	if err != nil {
		t.Fatal(err)
	}
	if prepared().Alone {
		t.Error("a stream in progress: alone")
	}
	for range updates {
	}
	for start := time.Now(); e.busy.Load() != 0; time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%d searches still counted after the stream ended", e.busy.Load())
		}
	}
	if _, err := e.Search(ctx, registry.SearchRequest{Query: "docker 连不上"}, rc); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Search(ctx, registry.SearchRequest{Query: " "}, rc); err == nil {
		t.Error("an empty query: no error")
	}
	if _, err := e.SearchStream(ctx, registry.SearchRequest{Query: " "}, rc); err == nil {
		t.Error("an empty query streamed: no error")
	}
	if n := e.busy.Load(); n != 0 {
		t.Errorf("%d searches counted after they ended", n)
	}
}

// TestRetrieverTimesKeepInline checks that the timing hook reports every retriever that
// ran for a search, with its time, and leaves the searches free to run on their caller
// (a wrapper would not).
func TestRetrieverTimesKeepInline(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]time.Duration{}
	e, err := Open(context.Background(), Options{NoSync: true, RetrieverTimes: func(r string, took time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		seen[r] += took
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.inline == 0 {
		t.Fatal("an engine with RetrieverTimes runs no retriever on its caller")
	}
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: "refund a payment"},
		registry.RuntimeContext{Tenant: "default", User: "u", Scopes: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range resp.SearchMeta.CompletedRetrievers {
		if seen[r] <= 0 {
			t.Errorf("retriever %s completed but its time was not reported (reported: %v)", r, seen)
		}
	}
	if len(seen) != len(resp.SearchMeta.CompletedRetrievers) {
		t.Errorf("reported %v, completed %v", seen, resp.SearchMeta.CompletedRetrievers)
	}
}
