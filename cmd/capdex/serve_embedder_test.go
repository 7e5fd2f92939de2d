package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/embed/embedtest"
	"github.com/capdex/capdex/registry"
)

// startServe runs capdex serve with the configuration file and returns its URL and admin
// key; the daemon stops at the end of the test.
func startServe(t *testing.T, config string) (url, key string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("CAPDEX_CONFIG", "")
	t.Setenv("CAPDEX_ADDR", "")
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--config", config, "--home", home, "--addr", "127.0.0.1:0", "--log-level", "warn"}, strings.NewReader(""), &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("serve did not shut down")
		}
	})
	re := regexp.MustCompile(`serving (http://\S+)`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	b, err := os.ReadFile(filepath.Join(home, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	return url, strings.TrimSpace(string(b))
}

func post(t *testing.T, url, key, body string) *registry.SearchResponse {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/search", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json") // the JSON API refuses an undeclared body (415)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("search: %d %s", resp.StatusCode, b)
	}
	var r registry.SearchResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func metric(t *testing.T, url, key, line string) bool {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(b), line)
}

// serveGroups are the test model's synonyms, chosen for the built-in registry's
// capabilities: "stale" and "outdated" share no letters with "旧版本", but the model says
// they mean the same.
var serveGroups = [][]string{
	{"codex", "assistant"},
	{"outdated", "stale", "old", "旧版本"},
	{"update", "upgrade", "更新"},
	{"check", "diagnose", "inspect", "检查"},
}

// TestServeWithEmbedders: capdex serve with capdex.yaml naming a Model2Vec directory, and
// an OpenAI-compatible endpoint, answers searches whose semantic retriever ran; with the
// endpoint failing the search answers partial and /metrics counts the failure.
func TestServeWithEmbedders(t *testing.T) {
	dir := t.TempDir()
	modelDir, err := embedtest.WriteModel2Vec(filepath.Join(dir, "tiny-m2v"), serveGroups)
	if err != nil {
		t.Fatal(err)
	}
	query := `{"query": "assistant stale after upgrade, inspect it", "explain": true}`
	semanticRan := func(r *registry.SearchResponse) bool {
		for _, m := range r.Matches {
			for _, ev := range m.Explain.Evidence {
				if ev.Retriever == "semantic" {
					return true
				}
			}
		}
		return false
	}
	t.Run("model2vec", func(t *testing.T) {
		cfg := filepath.Join(dir, "m2v.yaml")
		os.WriteFile(cfg, []byte("embedder:\n  kind: model2vec\n  path: tiny-m2v\n"), 0o600) // relative to the file
		url, key := startServe(t, cfg)
		r := post(t, url, key, query)
		if r.SearchMeta.Partial || !semanticRan(r) {
			t.Errorf("partial %v, semantic evidence %v: %+v", r.SearchMeta.Partial, semanticRan(r), r.SearchMeta)
		}
	})
	t.Run("openai", func(t *testing.T) {
		inner, err := embed.LoadModel2Vec(modelDir)
		if err != nil {
			t.Fatal(err)
		}
		fake := embedtest.NewEndpoint(inner)
		srv := httptest.NewServer(fake)
		defer srv.Close()
		cfg := filepath.Join(dir, "openai.yaml")
		os.WriteFile(cfg, []byte(fmt.Sprintf("embedder:\n  kind: openai\n  url: %s\n  model: tiny\n", srv.URL)), 0o600)
		url, key := startServe(t, cfg)
		if fake.Texts.Load() == 0 {
			t.Fatal("the endpoint embedded nothing at start")
		}
		r := post(t, url, key, query)
		if r.SearchMeta.Partial || !semanticRan(r) {
			t.Errorf("partial %v, semantic evidence %v: %+v", r.SearchMeta.Partial, semanticRan(r), r.SearchMeta)
		}
		fake.SetFailing(true)
		r = post(t, url, key, `{"query": "inspect the old codex", "explain": true}`) // a query vector not cached yet
		if !r.SearchMeta.Partial || !slices.Contains(r.SearchMeta.FailedRetrievers, "semantic") || len(r.Matches) == 0 {
			t.Errorf("endpoint failing: partial %v, failed %v, %d matches", r.SearchMeta.Partial, r.SearchMeta.FailedRetrievers, len(r.Matches))
		}
		if !metric(t, url, key, `capdex_retriever_failures_total{retriever="semantic"} 1`) {
			t.Error("/metrics does not count the semantic failure")
		}
	})
}
