package embed

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeVector is the raw vector a fake server returns for a text: (len, 1, 0, …).
func fakeVector(s string, dim int) []float32 {
	v := make([]float32, dim)
	v[0] = float32(len(s))
	v[1] = 1
	return v
}

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// fakeServer answers OpenAI and Ollama embedding requests; the openai answer lists data in
// reverse order to check that Embed orders by index.
func fakeServer(tb testing.TB, dim int, requests *atomic.Int32) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad method or content type", http.StatusBadRequest)
			return
		}
		var req embedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "m1" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/v1/embeddings":
			if r.Header.Get("Authorization") != "Bearer sk-test" {
				http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
				return
			}
			type item struct {
				Object    string    `json:"object"`
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			}
			var data []item
			for i := len(req.Input) - 1; i >= 0; i-- {
				data = append(data, item{"embedding", i, fakeVector(req.Input[i], dim)})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
		case "/api/embed":
			var embs [][]float32
			for _, s := range req.Input {
				embs = append(embs, fakeVector(s, dim))
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": embs})
		default:
			http.NotFound(w, r)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv
}

func TestHTTPEmbed(t *testing.T) {
	var requests atomic.Int32
	srv := fakeServer(t, 4, &requests)
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	tests := []struct {
		name     string
		opts     HTTPOptions
		requests int32
	}{
		{name: "openai", opts: HTTPOptions{API: "openai", BaseURL: srv.URL, Model: "m1", APIKey: "sk-test"}, requests: 1},
		{name: "openai default api, base with v1", opts: HTTPOptions{BaseURL: srv.URL + "/v1/", Model: "m1", APIKey: "sk-test"}, requests: 1},
		{name: "openai batches", opts: HTTPOptions{API: "openai", BaseURL: srv.URL, Model: "m1", APIKey: "sk-test", BatchSize: 2}, requests: 3},
		{name: "ollama", opts: HTTPOptions{API: "ollama", BaseURL: srv.URL, Model: "m1", Dim: 4}, requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests.Store(0)
			h := NewHTTP(tt.opts)
			if tt.opts.Dim == 0 && h.Dim() != 0 {
				t.Fatalf("Dim before the first answer = %d", h.Dim())
			}
			got, err := h.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if requests.Load() != tt.requests {
				t.Errorf("%d requests, want %d", requests.Load(), tt.requests)
			}
			if h.Dim() != 4 || len(got) != len(texts) {
				t.Fatalf("Dim %d, %d vectors", h.Dim(), len(got))
			}
			for i, s := range texts {
				want := fakeVector(s, 4)
				Normalize(want)
				if !approxEqual(got[i], want) {
					t.Errorf("vector %d = %v, want %v (normalised, in input order)", i, got[i], want)
				}
			}
			if strings.Contains(h.ID(), "sk-test") || !strings.Contains(h.ID(), "m1") {
				t.Errorf("ID %q", h.ID())
			}
		})
	}
}

func TestHTTPErrors(t *testing.T) {
	var requests atomic.Int32
	good := fakeServer(t, 4, &requests)
	status := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"model not found: m1"}}`+strings.Repeat("x", 2000), http.StatusInternalServerError)
	}))
	defer status.Close()
	wrongCount := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"embeddings": [[1, 0]]}`))
	}))
	defer wrongCount.Close()
	badDims := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"embeddings": [[1, 0], [1, 0, 0]]}`))
	}))
	defer badDims.Close()
	repeated := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [1]}]}`))
	}))
	defer repeated.Close()
	notJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<html>proxy error</html>`))
	}))
	defer notJSON.Close()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release) // before Close, which waits for handlers

	two := []string{"a", "b"}
	tests := []struct {
		name     string
		opts     HTTPOptions
		ctx      func() (context.Context, context.CancelFunc)
		target   error
		contains []string
	}{
		{name: "status names code and body", opts: HTTPOptions{BaseURL: status.URL, Model: "m1"}, target: ErrStatus,
			contains: []string{"500", "model not found: m1"}},
		{name: "unauthorized", opts: HTTPOptions{BaseURL: good.URL, Model: "m1", APIKey: "wrong"}, target: ErrStatus,
			contains: []string{"401", "unauthorized"}},
		{name: "wrong count", opts: HTTPOptions{API: "ollama", BaseURL: wrongCount.URL, Model: "m1"}, target: ErrResponse, contains: []string{"1 embeddings for 2 texts"}},
		{name: "inconsistent dims", opts: HTTPOptions{API: "ollama", BaseURL: badDims.URL, Model: "m1"}, target: ErrResponse},
		{name: "configured dim mismatch", opts: HTTPOptions{API: "ollama", BaseURL: good.URL, Model: "m1", Dim: 3}, target: ErrResponse},
		{name: "repeated index", opts: HTTPOptions{BaseURL: repeated.URL, Model: "m1"}, target: ErrResponse},
		{name: "not json", opts: HTTPOptions{BaseURL: notJSON.URL, Model: "m1"}, target: ErrResponse, contains: []string{"proxy error"}},
		{name: "unknown api", opts: HTTPOptions{API: "grpc", BaseURL: good.URL, Model: "m1"}, target: ErrConfig},
		{name: "no model", opts: HTTPOptions{BaseURL: good.URL}, target: ErrConfig},
		{name: "no base url", opts: HTTPOptions{Model: "m1"}, target: ErrConfig},
		{name: "context deadline", opts: HTTPOptions{API: "ollama", BaseURL: slow.URL, Model: "m1"}, target: context.DeadlineExceeded,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 50*time.Millisecond)
			}},
		{name: "option timeout", opts: HTTPOptions{API: "ollama", BaseURL: slow.URL, Model: "m1", Timeout: 50 * time.Millisecond}, target: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			start := time.Now()
			_, err := NewHTTP(tt.opts).Embed(ctx, two)
			if !errors.Is(err, tt.target) {
				t.Fatalf("error = %v, want %v", err, tt.target)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			if len(err.Error()) > 1000 {
				t.Errorf("error message of %d bytes: the body snippet is not bounded", len(err.Error()))
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("took %v: the deadline was not honoured", time.Since(start))
			}
		})
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("é", 400)
	s := snippet([]byte(long))
	if len(s) > errSnippetBytes+len("…") || !strings.HasSuffix(s, "…") {
		t.Fatalf("snippet of %d bytes: %q", len(s), s)
	}
	if snippet(nil) != "(empty body)" {
		t.Fatal("snippet of an empty body")
	}
}
