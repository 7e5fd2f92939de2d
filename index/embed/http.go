package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// HTTP API names for HTTPOptions.API.
const (
	APIOpenAI = "openai"
	APIOllama = "ollama"
)

// HTTPOptions configures an embeddings endpoint. The zero value of every field but
// BaseURL and Model is usable.
type HTTPOptions struct {
	// API is "openai" (POST {BaseURL}/v1/embeddings; the default) or "ollama"
	// (POST {BaseURL}/api/embed).
	API string
	// BaseURL is the server root, such as "https://api.openai.com" or
	// "http://localhost:11434". For the OpenAI API a trailing "/v1" is accepted.
	BaseURL string
	// Model is the embedding model name sent with every request.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <key>"; it is never part of ID
	// or of error messages.
	APIKey string
	// Dim is the expected dimension: answers of another length are errors. 0 learns it
	// from the first answer (Dim reports 0 until then).
	Dim int
	// Timeout bounds each request (default 30s); the caller's context still applies.
	Timeout time.Duration
	// Client sends the requests (default: a new http.Client).
	Client *http.Client
	// BatchSize is the most texts sent in one request (default 64).
	BatchSize int
}

// HTTP embeds texts through a remote OpenAI-compatible or Ollama endpoint. Vectors are
// L2-normalised on arrival. It is safe for concurrent use.
type HTTP struct {
	o   HTTPOptions
	id  string
	dim atomic.Int64
}

// Defaults of HTTPOptions.
const (
	defaultHTTPTimeout   = 30 * time.Second
	defaultHTTPBatchSize = 64
	maxResponseBytes     = 256 << 20
	errSnippetBytes      = 300
)

// NewHTTP returns an HTTP embedder. Invalid options are reported by Embed (ErrConfig).
func NewHTTP(o HTTPOptions) *HTTP {
	if o.API == "" {
		o.API = APIOpenAI
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultHTTPTimeout
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.BatchSize <= 0 {
		o.BatchSize = defaultHTTPBatchSize
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	h := &HTTP{o: o}
	host := o.BaseURL
	if u, err := url.Parse(o.BaseURL); err == nil && u.Host != "" {
		host = u.Host
	}
	h.id = "http-" + o.API + "-" + host + "-" + o.Model
	if o.Dim > 0 {
		h.dim.Store(int64(o.Dim))
	}
	return h
}

// ID is "http-<api>-<host>-<model>".
func (h *HTTP) ID() string { return h.id }

// Dim is the configured dimension, or the one learned from the first answer (0 before).
func (h *HTTP) Dim() int { return int(h.dim.Load()) }

// Embed sends the texts in batches of BatchSize and returns their vectors in order.
// Errors wrap ErrConfig, ErrStatus (with the status and the start of the body),
// ErrResponse, or the transport's error (context cancellation and timeouts included).
func (h *HTTP) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += h.o.BatchSize {
		batch := texts[start:min(start+h.o.BatchSize, len(texts))]
		vecs, err := h.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (h *HTTP) check() error {
	switch {
	case h.o.API != APIOpenAI && h.o.API != APIOllama:
		return fmt.Errorf("%w: API %q (want %q or %q)", ErrConfig, h.o.API, APIOpenAI, APIOllama)
	case h.o.BaseURL == "":
		return fmt.Errorf("%w: no base URL", ErrConfig)
	case h.o.Model == "":
		return fmt.Errorf("%w: no model", ErrConfig)
	}
	return nil
}

func (h *HTTP) endpoint() string {
	if h.o.API == APIOllama {
		return h.o.BaseURL + "/api/embed"
	}
	if strings.HasSuffix(h.o.BaseURL, "/v1") {
		return h.o.BaseURL + "/embeddings"
	}
	return h.o.BaseURL + "/v1/embeddings"
}

func (h *HTTP) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	req := map[string]any{"model": h.o.Model, "input": texts}
	if h.o.API == APIOpenAI {
		req["encoding_format"] = "float"
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding request: %v", ErrConfig, err)
	}
	ctx, cancel := context.WithTimeout(ctx, h.o.Timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if h.o.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+h.o.APIKey)
	}
	resp, err := h.o.Client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("embed: POST %s: %w", h.endpoint(), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("embed: reading response of %s: %w", h.endpoint(), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%w: POST %s: %s: %s", ErrStatus, h.endpoint(), resp.Status, snippet(raw))
	}
	var vecs [][]float32
	if h.o.API == APIOllama {
		var r struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("%w: %w: %s", ErrResponse, err, snippet(raw))
		}
		vecs = r.Embeddings
	} else {
		var r struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("%w: %w: %s", ErrResponse, err, snippet(raw))
		}
		if len(r.Data) != len(texts) {
			return nil, fmt.Errorf("%w: %d embeddings for %d texts", ErrResponse, len(r.Data), len(texts))
		}
		vecs = make([][]float32, len(texts))
		for _, d := range r.Data {
			if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
				return nil, fmt.Errorf("%w: bad or repeated index %d", ErrResponse, d.Index)
			}
			vecs[d.Index] = d.Embedding
		}
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("%w: %d embeddings for %d texts", ErrResponse, len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, fmt.Errorf("%w: empty embedding %d", ErrResponse, i)
		}
		if !h.dim.CompareAndSwap(0, int64(len(v))) && int64(len(v)) != h.dim.Load() {
			return nil, fmt.Errorf("%w: embedding %d has %d dimensions, want %d", ErrResponse, i, len(v), h.dim.Load())
		}
		Normalize(v)
	}
	return vecs, nil
}

// snippet is the start of a response body for an error message, valid UTF-8.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > errSnippetBytes {
		s = s[:errSnippetBytes]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
