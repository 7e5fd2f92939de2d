package embed

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Embedder kinds of a Spec.
const (
	KindHashed    = "hashed"
	KindModel2Vec = "model2vec"
	KindOpenAI    = "openai"
	KindOllama    = "ollama"
)

// Spec says which embedder to use, as capdex.yaml's embedder section and the --embedder
// flag write it. The zero value is the offline default (Hashed).
type Spec struct {
	// Kind is "hashed" (the default), "model2vec", "openai" or "ollama".
	Kind string `yaml:"kind" json:"kind"`
	// Path is the model directory of a model2vec embedder (tokenizer.json and
	// model.safetensors).
	Path string `yaml:"path" json:"path,omitempty"`
	// URL is the server root of an endpoint ("http://localhost:11434",
	// "https://api.openai.com"); for openai a trailing /v1 is accepted.
	URL string `yaml:"url" json:"url,omitempty"`
	// Model is the model name sent to an endpoint.
	Model string `yaml:"model" json:"model,omitempty"`
	// APIKeyEnv names the environment variable holding the endpoint's API key (the key
	// itself is never written in the configuration).
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// Dim is the expected dimension of an endpoint's vectors; 0 learns it.
	Dim int `yaml:"dim" json:"dim,omitempty"`
	// Timeout bounds one endpoint request (default 30s). Searches are bounded by the
	// semantic retriever's deadline as well.
	Timeout time.Duration `yaml:"-" json:"-"`
	// BatchSize is the most texts sent in one endpoint request (default 64).
	BatchSize int `yaml:"batch_size" json:"batch_size,omitempty"`
}

// ParseSpec reads the --embedder flag: "hashed", "model2vec:DIR", "openai:MODEL@URL" or
// "ollama:MODEL@URL" (the URL after the last "@"). An empty string is the default.
func ParseSpec(s string) (Spec, error) {
	kind, rest, _ := strings.Cut(s, ":")
	switch kind {
	case "", KindHashed:
		if rest != "" {
			return Spec{}, fmt.Errorf("%w: embedder %q: hashed takes no argument", ErrConfig, s)
		}
		return Spec{Kind: KindHashed}, nil
	case KindModel2Vec:
		if rest == "" {
			return Spec{}, fmt.Errorf("%w: embedder %q: want model2vec:DIR", ErrConfig, s)
		}
		return Spec{Kind: KindModel2Vec, Path: rest}, nil
	case KindOpenAI, KindOllama:
		at := strings.LastIndex(rest, "@")
		if at <= 0 || at == len(rest)-1 {
			return Spec{}, fmt.Errorf("%w: embedder %q: want %s:MODEL@URL", ErrConfig, s, kind)
		}
		return Spec{Kind: kind, Model: rest[:at], URL: rest[at+1:]}, nil
	}
	return Spec{}, fmt.Errorf("%w: embedder %q: unknown kind %q (want hashed, model2vec:DIR, openai:MODEL@URL or ollama:MODEL@URL)", ErrConfig, s, kind)
}

// Validate reports what is missing or wrong in the spec, without opening anything.
func (s Spec) Validate() error {
	switch s.Kind {
	case "", KindHashed:
		if s.Path != "" || s.URL != "" || s.Model != "" {
			return fmt.Errorf("%w: embedder kind hashed takes no path, url or model", ErrConfig)
		}
	case KindModel2Vec:
		if s.Path == "" {
			return fmt.Errorf("%w: embedder kind model2vec needs path (the model directory)", ErrConfig)
		}
	case KindOpenAI, KindOllama:
		if s.URL == "" || s.Model == "" {
			return fmt.Errorf("%w: embedder kind %s needs url and model", ErrConfig, s.Kind)
		}
	default:
		return fmt.Errorf("%w: embedder kind %q (want hashed, model2vec, openai or ollama)", ErrConfig, s.Kind)
	}
	if s.Dim < 0 || s.BatchSize < 0 || s.Timeout < 0 {
		return fmt.Errorf("%w: embedder dim, batch_size and timeout must not be negative", ErrConfig)
	}
	return nil
}

// Open returns the embedder the spec names: Hashed, a loaded Model2Vec model, or an HTTP
// embedder (its API key read from the environment variable APIKeyEnv). Errors wrap
// ErrConfig or ErrModel.
func (s Spec) Open() (Embedder, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	switch s.Kind {
	case KindModel2Vec:
		return LoadModel2Vec(s.Path)
	case KindOpenAI, KindOllama:
		o := HTTPOptions{API: s.Kind, BaseURL: s.URL, Model: s.Model, Dim: s.Dim, Timeout: s.Timeout, BatchSize: s.BatchSize}
		if s.APIKeyEnv != "" {
			o.APIKey = os.Getenv(s.APIKeyEnv)
			if o.APIKey == "" {
				return nil, fmt.Errorf("%w: embedder api_key_env %s is not set", ErrConfig, s.APIKeyEnv)
			}
		}
		return NewHTTP(o), nil
	}
	return NewHashed(), nil
}
