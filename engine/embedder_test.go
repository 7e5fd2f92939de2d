package engine_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/embed/embedtest"
	"github.com/capdex/capdex/registry"
)

// synonymGroups are the tiny test model's meanings: words of a group are synonyms.
var synonymGroups = [][]string{
	{"bibliography", "citations", "references"},
	{"undo", "revert", "rollback"},
	{"invoice", "bill"},
	{"format", "build", "render"},
	{"release", "deploy", "deployment"},
}

// embedCatalogue is a flat catalogue in which the query "build a bibliography" shares no
// word with the tool it wants (format_citations).
const embedCatalogue = `{"id":"format_citations","name":"format_citations","description":"Format citations and references in APA style"}
{"id":"rollback_release","name":"rollback_release","description":"Rollback a deployment to the previous release"}
{"id":"create_invoice","name":"create_invoice","description":"Create an invoice for a customer"}
{"id":"send_email","name":"send_email","description":"Send an email message"}
`

func embedCaps(t *testing.T) []*registry.Capability {
	t.Helper()
	caps, err := registry.ImportWith(strings.NewReader(embedCatalogue), registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "test",
		ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}}})
	if err != nil {
		t.Fatal(err)
	}
	return caps
}

var admin = registry.RuntimeContext{Tenant: "default", User: "t", Scopes: []string{"*", "admin"}}

func model(t *testing.T) string {
	t.Helper()
	dir, err := embedtest.WriteModel2Vec(filepath.Join(t.TempDir(), "tiny-m2v"), synonymGroups)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestModel2VecEmbedderEndToEnd: a Model2Vec directory named by a spec finds, through the
// semantic retriever and the fused search, a capability whose words the query does not use.
func TestModel2VecEmbedderEndToEnd(t *testing.T) {
	ctx := context.Background()
	spec, err := engine.ParseEmbedder("model2vec:" + model(t))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := engine.OpenEmbedder(spec)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	e := open(t, engine.Options{Seed: embedCaps(t), Embedder: emb, EmbedProgress: func(done, total int) { calls.Add(1) }})
	if !strings.HasPrefix(e.EmbedderID(), "model2vec-tiny-m2v-") {
		t.Errorf("embedder id %q", e.EmbedderID())
	}
	if calls.Load() == 0 {
		t.Error("no progress reported while embedding the catalogue")
	}
	req := registry.SearchRequest{Query: "build a bibliography", Limit: 3}
	sem, err := e.Probe(ctx, "semantic", req, admin)
	if err != nil {
		t.Fatal(err)
	}
	if len(sem) == 0 || sem[0].ExternalID != "format_citations" {
		t.Fatalf("semantic alone: %v, want format_citations first", capIDs(sem))
	}
	lex, err := e.Probe(ctx, "lexical", req, admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range lex {
		if c.ExternalID == "format_citations" {
			t.Fatalf("lexical found format_citations: the test query must share no word with it")
		}
	}
	resp, err := e.Search(ctx, req, admin)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Matches) == 0 || !strings.HasSuffix(resp.Matches[0].ResourceID, "format_citations") || resp.SearchMeta.Partial {
		t.Errorf("fused: %v (partial %v), want format_citations first", ids(resp), resp.SearchMeta.Partial)
	}
}

func capIDs(cs []*registry.Capability) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ExternalID
	}
	return out
}

// TestEndpointEmbedder: an OpenAI-compatible endpoint embeds the catalogue once (the
// vectors are cached in the store by embedder id and text hash: reopening embeds nothing),
// answers searches, and when it fails or stalls the search answers partial, never fails.
func TestEndpointEmbedder(t *testing.T) {
	ctx := context.Background()
	inner, err := embed.LoadModel2Vec(model(t))
	if err != nil {
		t.Fatal(err)
	}
	fake := embedtest.NewEndpoint(inner)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	for _, api := range []string{"openai", "ollama"} {
		t.Run(api, func(t *testing.T) {
			spec, err := engine.ParseEmbedder(api + ":tiny@" + srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			openIt := func() *engine.Engine {
				emb, err := engine.OpenEmbedder(spec)
				if err != nil {
					t.Fatal(err)
				}
				return open(t, engine.Options{Dir: dir, Seed: embedCaps(t), Embedder: emb,
					Deadlines: map[string]time.Duration{"semantic": 300 * time.Millisecond}})
			}
			fake.SetFailing(false)
			fake.SetDelay(0)
			before := fake.Texts.Load()
			e := openIt()
			if got := fake.Texts.Load() - before; got != int64(len(embedCaps(t))) {
				t.Errorf("first open embedded %d texts, want %d", got, len(embedCaps(t)))
			}
			req := registry.SearchRequest{Query: "undo the deploy", Limit: 3}
			resp, err := e.Search(ctx, req, admin)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Matches) == 0 || !strings.HasSuffix(resp.Matches[0].ResourceID, "rollback_release") || resp.SearchMeta.Partial {
				t.Errorf("search: %v (partial %v), want rollback_release first", ids(resp), resp.SearchMeta.Partial)
			}
			e.Close()

			// Reopened on the same store: every capability vector comes from the cache.
			before = fake.Texts.Load()
			e = openIt()
			if got := fake.Texts.Load() - before; got != 0 {
				t.Errorf("reopen embedded %d texts, want 0 (cached)", got)
			}

			fake.SetFailing(true)
			resp, err = e.Search(ctx, registry.SearchRequest{Query: "send an email now", Limit: 3}, admin)
			if err != nil {
				t.Fatalf("failing endpoint failed the search: %v", err)
			}
			if !resp.SearchMeta.Partial || !slices.Contains(resp.SearchMeta.FailedRetrievers, "semantic") {
				t.Errorf("failing endpoint: partial %v, failed %v", resp.SearchMeta.Partial, resp.SearchMeta.FailedRetrievers)
			}
			if len(resp.Matches) == 0 || !strings.HasSuffix(resp.Matches[0].ResourceID, "send_email") {
				t.Errorf("failing endpoint: the lexical answer is lost: %v", ids(resp))
			}

			fake.SetFailing(false)
			fake.SetDelay(2 * time.Second)
			resp, err = e.Search(ctx, registry.SearchRequest{Query: "create an invoice please", Limit: 3}, admin)
			fake.SetDelay(0)
			if err != nil {
				t.Fatalf("slow endpoint failed the search: %v", err)
			}
			if !resp.SearchMeta.Partial || !slices.Contains(resp.SearchMeta.TimedOutRetrievers, "semantic") {
				t.Errorf("slow endpoint: partial %v, timed out %v", resp.SearchMeta.Partial, resp.SearchMeta.TimedOutRetrievers)
			}
			if resp.SearchMeta.TookUS > 1_500_000 {
				t.Errorf("slow endpoint: search took %d µs, the semantic deadline is 300ms", resp.SearchMeta.TookUS)
			}
		})
	}
}

// TestEndpointDownAtStart: an endpoint that fails while the catalogue is embedded does not
// stop the engine from opening; its semantic retriever fails each search (partial).
func TestEndpointDownAtStart(t *testing.T) {
	_, emb := downEndpoint(t)
	e := open(t, engine.Options{Seed: embedCaps(t), Embedder: emb})
	if e.SemanticErr() == nil {
		t.Error("SemanticErr is nil with the endpoint down")
	}
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: "send an email", Limit: 3}, admin)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.SearchMeta.Partial || !slices.Contains(resp.SearchMeta.FailedRetrievers, "semantic") || len(resp.Matches) == 0 {
		t.Errorf("partial %v, failed %v, matches %v", resp.SearchMeta.Partial, resp.SearchMeta.FailedRetrievers, ids(resp))
	}
}

// TestSemanticRetryAfterEndpointDown: an endpoint down at start leaves the semantic
// retriever without vectors; once it answers again, the engine's retry builds the
// generation again and searches are whole, with no registry change in between.
func TestSemanticRetryAfterEndpointDown(t *testing.T) {
	fake, emb := downEndpoint(t)
	e := open(t, engine.Options{Seed: embedCaps(t), Embedder: emb, SemanticRetry: 20 * time.Millisecond})
	if e.SemanticErr() == nil {
		t.Fatal("SemanticErr is nil with the endpoint down")
	}
	gen := e.Generation()
	fake.SetFailing(false)
	for deadline := time.Now().Add(time.Minute); e.SemanticErr() != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the semantic retriever did not come back within a minute: %v", e.SemanticErr())
		}
	}
	if e.Generation() != gen {
		t.Errorf("generation %d, want %d: a retry builds the same registry", e.Generation(), gen)
	}
	resp, err := e.Search(context.Background(), registry.SearchRequest{Query: "send an email", Limit: 3}, admin)
	if err != nil {
		t.Fatal(err)
	}
	if resp.SearchMeta.Partial || len(resp.Matches) == 0 {
		t.Errorf("partial %v (failed %v), matches %v", resp.SearchMeta.Partial, resp.SearchMeta.FailedRetrievers, ids(resp))
	}
}

// downEndpoint serves the test model behind a fake OpenAI-compatible endpoint that fails
// every request until SetFailing(false), and returns it with an embedder that calls it.
func downEndpoint(t *testing.T) (*embedtest.Endpoint, embed.Embedder) {
	t.Helper()
	inner, err := embed.LoadModel2Vec(model(t))
	if err != nil {
		t.Fatal(err)
	}
	fake := embedtest.NewEndpoint(inner)
	fake.SetFailing(true)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	emb, err := engine.OpenEmbedder(engine.EmbedderSpec{Kind: "openai", URL: srv.URL, Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	return fake, emb
}
