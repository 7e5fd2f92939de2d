package embed

import (
	"errors"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want Spec
		err  bool
	}{
		{in: "", want: Spec{Kind: KindHashed}},
		{in: "hashed", want: Spec{Kind: KindHashed}},
		{in: "model2vec:/models/potion-multilingual-128M", want: Spec{Kind: KindModel2Vec, Path: "/models/potion-multilingual-128M"}},
		{in: "openai:text-embedding-3-small@https://api.openai.com", want: Spec{Kind: KindOpenAI, Model: "text-embedding-3-small", URL: "https://api.openai.com"}},
		{in: "ollama:nomic-embed-text@http://localhost:11434", want: Spec{Kind: KindOllama, Model: "nomic-embed-text", URL: "http://localhost:11434"}},
		{in: "ollama:org/m@v2@http://h:1", want: Spec{Kind: KindOllama, Model: "org/m@v2", URL: "http://h:1"}},
		{in: "hashed:x", err: true},
		{in: "model2vec:", err: true},
		{in: "openai:model", err: true},
		{in: "openai:@http://h", err: true},
		{in: "openai:m@", err: true},
		{in: "bert:x", err: true},
	}
	for _, tt := range tests {
		got, err := ParseSpec(tt.in)
		if tt.err {
			if !errors.Is(err, ErrConfig) {
				t.Errorf("ParseSpec(%q) = %+v, %v; want ErrConfig", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestSpecOpen(t *testing.T) {
	if e, err := (Spec{}).Open(); err != nil || e.ID() != NewHashed().ID() {
		t.Errorf("zero spec: %v, %v", e, err)
	}
	if _, err := (Spec{Kind: KindModel2Vec, Path: t.TempDir()}).Open(); !errors.Is(err, ErrModel) {
		t.Errorf("empty model directory: %v, want ErrModel", err)
	}
	t.Setenv("CAPDEX_TEST_KEY", "")
	if _, err := (Spec{Kind: KindOpenAI, URL: "http://h", Model: "m", APIKeyEnv: "CAPDEX_TEST_KEY"}).Open(); !errors.Is(err, ErrConfig) {
		t.Errorf("unset key variable: %v, want ErrConfig", err)
	}
	t.Setenv("CAPDEX_TEST_KEY", "sk-1")
	e, err := (Spec{Kind: KindOllama, URL: "http://h:11434", Model: "m", Dim: 8}).Open()
	if err != nil || e.ID() != "http-ollama-h:11434-m" || e.Dim() != 8 {
		t.Errorf("ollama: %v, %v", e, err)
	}
	if _, err := (Spec{Kind: KindOpenAI, URL: "http://h", Model: "m", BatchSize: -1}).Open(); !errors.Is(err, ErrConfig) {
		t.Errorf("negative batch size: %v", err)
	}
}
