// Package embedtest makes the embedding models and endpoints tests need: a small
// Model2Vec-format model directory written on the spot, and an in-process fake of the
// OpenAI-compatible and Ollama embeddings APIs. Nothing here downloads anything.
package embedtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/capdex/capdex/index/embed"
)

// WriteModel2Vec writes a Model2Vec-format model directory (tokenizer.json: a WordLevel
// vocabulary, lowercased and split on whitespace and punctuation; model.safetensors: an
// F32 "embeddings" tensor) to dir and returns dir. Words of one group share a direction
// (group g is the unit vector of dimension g+1; dimension 0 belongs to [UNK], never used),
// so the model treats them as synonyms whatever their spelling: "undo" and "roll back"
// meet, which word overlap cannot do.
func WriteModel2Vec(dir string, groups [][]string) (string, error) {
	dim := len(groups) + 1
	vocab := map[string]int{"[UNK]": 0}
	rows := make([]float32, dim) // [UNK]
	for g, words := range groups {
		for _, w := range words {
			w = strings.ToLower(w)
			if _, dup := vocab[w]; dup {
				return "", fmt.Errorf("embedtest: word %q in two groups", w)
			}
			vocab[w] = len(vocab)
			row := make([]float32, dim)
			row[g+1] = 1
			rows = append(rows, row...)
		}
	}
	tok, err := json.Marshal(map[string]any{
		"version":       "1.0",
		"normalizer":    map[string]any{"type": "Lowercase"},
		"pre_tokenizer": map[string]any{"type": "Whitespace"},
		"model":         map[string]any{"type": "WordLevel", "unk_token": "[UNK]", "vocab": vocab},
	})
	if err != nil {
		return "", err
	}
	n := len(vocab)
	data := make([]byte, 0, 4*len(rows))
	for _, x := range rows {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
	}
	header, err := json.Marshal(map[string]any{
		"__metadata__": map[string]string{"format": "pt"},
		"embeddings":   map[string]any{"dtype": "F32", "shape": []int{n, dim}, "data_offsets": []int{0, len(data)}},
	})
	if err != nil {
		return "", err
	}
	for len(header)%8 != 0 {
		header = append(header, ' ')
	}
	st := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	st = append(append(st, header...), data...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, b := range map[string][]byte{"tokenizer.json": tok, "model.safetensors": st} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// Endpoint is a fake embeddings server: POST /v1/embeddings (OpenAI) and POST /api/embed
// (Ollama) answer with the vectors of its embedder. It counts requests and texts, and can
// be made to fail or to stall. It is safe for concurrent use.
type Endpoint struct {
	emb embed.Embedder
	// Requests and Texts count the requests answered (or refused) and the texts received.
	Requests, Texts atomic.Int64
	fail            atomic.Bool
	delay           atomic.Int64
}

// NewEndpoint returns a fake endpoint answering with e's vectors.
func NewEndpoint(e embed.Embedder) *Endpoint { return &Endpoint{emb: e} }

// SetFailing makes every request answer 503 while on.
func (p *Endpoint) SetFailing(on bool) { p.fail.Store(on) }

// SetDelay makes every request wait d (or until the client gives up) before answering.
func (p *Endpoint) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// ServeHTTP answers one embeddings request.
func (p *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.Requests.Add(1)
	if d := time.Duration(p.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	if p.fail.Load() {
		http.Error(w, `{"error":"unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model == "" {
		http.Error(w, `{"error":"want POST {model, input: [texts]}"}`, http.StatusBadRequest)
		return
	}
	p.Texts.Add(int64(len(req.Input)))
	vecs, err := p.emb.Embed(r.Context(), req.Input)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/embeddings":
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		data := make([]item, len(vecs))
		for i, v := range vecs {
			data[i] = item{"embedding", i, v}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	case "/api/embed":
		_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": vecs})
	default:
		http.NotFound(w, r)
	}
}
