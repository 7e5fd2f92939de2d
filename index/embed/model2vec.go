package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Model2VecMaxTokens is how many tokens of a text Model2Vec pools, as the reference
// implementation does.
const Model2VecMaxTokens = 512

// Model2Vec is a static embedding model (model2vec, or any tokenizer + embedding table):
// a text's vector is the mean of its tokens' rows, L2-normalised unless the model's
// config.json says "normalize": false. Unknown tokens are dropped. It is read-only once
// loaded and safe for concurrent use.
type Model2Vec struct {
	id        string
	dim       int
	rows      int
	emb       []float32 // rows × dim
	weights   []float32 // optional per-token scale, by token id
	mapping   []int64   // optional token id → row
	tok       *tokenizer
	normalize bool
}

// LoadModel2Vec loads a model directory holding tokenizer.json (Hugging Face tokenizers
// format with a WordPiece, WordLevel or Unigram model) and model.safetensors (a 2-D
// "embeddings" tensor, or the only 2-D tensor, of F32, F16, BF16, F64 or I8; optional 1-D
// "weights" and "mapping" tensors as written by model2vec's vocabulary quantisation). An
// optional config.json may set "normalize". Errors wrap ErrModel or ErrUnsupported.
func LoadModel2Vec(dir string) (*Model2Vec, error) {
	tokBytes, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	modelBytes, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}
	normalize := true
	if cfg, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
		var c struct {
			Normalize *bool `json:"normalize"`
		}
		if err := json.Unmarshal(cfg, &c); err != nil {
			return nil, fmt.Errorf("%w: config.json: %v", ErrModel, err)
		}
		if c.Normalize != nil {
			normalize = *c.Normalize
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %w", ErrModel, err)
	}

	tok, err := parseTokenizer(tokBytes)
	if err != nil {
		return nil, err
	}
	st, err := parseSafetensors(modelBytes)
	if err != nil {
		return nil, err
	}
	name := "embeddings"
	if _, ok := st.tensors[name]; !ok {
		name = ""
		for n, ti := range st.tensors {
			if len(ti.Shape) == 2 {
				if name != "" {
					return nil, fmt.Errorf("%w: no \"embeddings\" tensor and several 2-D tensors", ErrModel)
				}
				name = n
			}
		}
		if name == "" {
			return nil, fmt.Errorf("%w: no 2-D embeddings tensor", ErrModel)
		}
	}
	ti := st.tensors[name]
	if len(ti.Shape) != 2 || ti.Shape[0] < 1 || ti.Shape[1] < 1 {
		return nil, fmt.Errorf("%w: embeddings tensor has shape %v, want [vocab, dim]", ErrModel, ti.Shape)
	}
	m := &Model2Vec{rows: int(ti.Shape[0]), dim: int(ti.Shape[1]), tok: tok, normalize: normalize}
	if m.emb, err = st.floats(name); err != nil {
		return nil, err
	}
	if _, ok := st.tensors["weights"]; ok {
		if m.weights, err = st.floats("weights"); err != nil {
			return nil, err
		}
	}
	if _, ok := st.tensors["mapping"]; ok {
		if m.mapping, err = st.ints("mapping"); err != nil {
			return nil, err
		}
		for _, r := range m.mapping {
			if r < 0 || r >= int64(m.rows) {
				return nil, fmt.Errorf("%w: mapping points at row %d of %d", ErrModel, r, m.rows)
			}
		}
	}
	// Every id the tokenizer can emit must resolve to a row.
	for tokStr, id := range tok.vocab {
		if id < 0 || (m.mapping == nil && id >= m.rows) || (m.mapping != nil && id >= len(m.mapping)) {
			return nil, fmt.Errorf("%w: token %q has id %d beyond the %d embedding rows", ErrModel, tokStr, id, m.rows)
		}
	}
	sum := sha256.New()
	sum.Write(tokBytes)
	sum.Write(modelBytes)
	m.id = fmt.Sprintf("model2vec-%s-%s", filepath.Base(filepath.Clean(dir)), hex.EncodeToString(sum.Sum(nil))[:16])
	if !normalize {
		m.id += "-raw"
	}
	return m, nil
}

// ID is "model2vec-<dir name>-<hash of tokenizer and weights>".
func (m *Model2Vec) ID() string { return m.id }

// Dim is the embedding dimension.
func (m *Model2Vec) Dim() int { return m.dim }

// Tokens returns the token ids a text pools over (unknown tokens dropped, at most
// Model2VecMaxTokens), for inspection and tests.
func (m *Model2Vec) Tokens(s string) []int {
	ids := m.tok.encode(s)
	out := ids[:0]
	for _, id := range ids {
		if id != m.tok.unkID {
			out = append(out, id)
		}
	}
	if len(out) > Model2VecMaxTokens {
		out = out[:Model2VecMaxTokens]
	}
	return out
}

// Embed returns the mean-pooled vector of each text; a text with no known token gets the
// zero vector.
func (m *Model2Vec) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = m.pool(m.Tokens(s))
	}
	return out, nil
}

func (m *Model2Vec) pool(ids []int) []float32 {
	v := make([]float32, m.dim)
	if len(ids) == 0 {
		return v
	}
	for _, id := range ids {
		row := id
		if m.mapping != nil {
			row = int(m.mapping[id])
		}
		scale := float32(1)
		if id < len(m.weights) {
			scale = m.weights[id]
		}
		r := m.emb[row*m.dim : (row+1)*m.dim]
		for k, x := range r {
			v[k] += x * scale
		}
	}
	inv := 1 / float32(len(ids))
	for k := range v {
		v[k] *= inv
	}
	if m.normalize {
		Normalize(v)
	}
	return v
}
