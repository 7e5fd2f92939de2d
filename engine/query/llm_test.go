package query

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// chatServer answers chat completions with content (a JSON string) after delay.
func chatServer(tb testing.TB, status int, delay time.Duration, content string, seen *atomic.Value) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body) // read first: the server notices a gone client only then
		if seen != nil {
			seen.Store(map[string]any{"path": r.URL.Path, "auth": r.Header.Get("Authorization"), "body": string(b)})
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(status)
		if status == http.StatusOK && content != "" && content[0] != '!' {
			resp, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"role": "assistant", "content": content}}}})
			w.Write(resp)
			return
		}
		io.WriteString(w, strings.TrimPrefix(content, "!"))
	}))
	tb.Cleanup(srv.Close)
	return srv
}

func TestLLM(t *testing.T) {
	lex := NewLexicon(fixtureSnapshot(t))
	good := `{"lang":"zh","intents":["diagnose"],"forbidden_intents":["reinstall"],"entities":["codex"],
		"symptoms":["active_version_mismatch"],"constraints":["read_first","bad constraint!"],"ids":["codex_diagnose","made.up.id"],
		"browse":false,"scope":"maintenance.codex","outcome":"用上新版本","explicit_write":false}`
	tests := []struct {
		name     string
		status   int
		delay    time.Duration
		content  string
		fallback bool
		note     string
	}{
		{name: "good answer", status: 200, content: good},
		{name: "fenced json", status: 200, content: "```json\n" + good + "\n```"},
		{name: "slow answer past the timeout", status: 200, delay: 2 * time.Second, content: good, fallback: true, note: "timeout"},
		{name: "garbage body", status: 200, content: "!not json at all", fallback: true, note: "invalid response"},
		{name: "garbage content", status: 200, content: "I think the user wants codex", fallback: true, note: "invalid json content"},
		{name: "no choices", status: 200, content: `!{"choices":[]}`, fallback: true, note: "invalid response"},
		{name: "server error", status: 500, content: "!boom", fallback: true, note: "status 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen atomic.Value
			srv := chatServer(t, tt.status, tt.delay, tt.content, &seen)
			n := NewLLM(LLMOptions{BaseURL: srv.URL, Model: "m1", APIKey: "k-secret", Timeout: 150 * time.Millisecond}, nil)
			start := time.Now()
			p, err := n.Normalize(context.Background(), "codex 更新后还是旧版本，先别重装", lex)
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if took > time.Second {
				t.Fatalf("took %v past a 150ms timeout", took)
			}
			// The rules always contribute the prohibition.
			if !slices.Contains(p.Forbidden, "reinstall") {
				t.Fatalf("forbidden %v", p.Forbidden)
			}
			if tt.fallback {
				if p.Normalizer != "rules" || len(p.Notes) == 0 || !strings.Contains(p.Notes[len(p.Notes)-1], "llm fallback: ") ||
					!strings.Contains(p.Notes[len(p.Notes)-1], tt.note) {
					t.Fatalf("fallback not recorded: normalizer %q notes %v", p.Normalizer, p.Notes)
				}
				if strings.Contains(strings.Join(p.Notes, " "), "k-secret") {
					t.Fatal("api key leaked into notes")
				}
				return
			}
			if p.Normalizer != "llm" {
				t.Fatalf("normalizer %q notes %v", p.Normalizer, p.Notes)
			}
			want(t, "intents", p.Intents, []string{"diagnose", "inspect"}, []string{"reinstall"})
			want(t, "forbidden", p.Forbidden, []string{"reinstall", "update", "install"}, nil)
			want(t, "constraints", p.Constraints, []string{"read_first"}, []string{"bad constraint!"})
			want(t, "ids", p.IDs, []string{"maintenance.codex.diagnose"}, []string{"made.up.id"})
			wantStr(t, "scope", p.Scope, "maintenance.codex")
			wantStr(t, "outcome", p.Outcome, "用上新版本")
			req := seen.Load().(map[string]any)
			if req["path"] != "/v1/chat/completions" || req["auth"] != "Bearer k-secret" {
				t.Fatalf("request %v", req)
			}
			var body struct {
				Model          string            `json:"model"`
				ResponseFormat map[string]string `json:"response_format"`
				Messages       []map[string]string
			}
			if err := json.Unmarshal([]byte(req["body"].(string)), &body); err != nil {
				t.Fatal(err)
			}
			if body.Model != "m1" || body.ResponseFormat["type"] != "json_object" || len(body.Messages) != 2 ||
				body.Messages[0]["role"] != "system" || body.Messages[1]["content"] != "codex 更新后还是旧版本，先别重装" {
				t.Fatalf("body %+v", body)
			}
		})
	}
	t.Run("base url with /v1", func(t *testing.T) {
		var seen atomic.Value
		srv := chatServer(t, 200, 0, good, &seen)
		n := NewLLM(LLMOptions{BaseURL: srv.URL + "/v1/", Model: "m"}, Rules{})
		if _, err := n.Normalize(context.Background(), "codex", lex); err != nil {
			t.Fatal(err)
		}
		if p := seen.Load().(map[string]any)["path"]; p != "/v1/chat/completions" {
			t.Fatalf("path %v", p)
		}
	})
	t.Run("empty query is the fallback's error", func(t *testing.T) {
		n := NewLLM(LLMOptions{BaseURL: "http://127.0.0.1:1"}, nil)
		if _, err := n.Normalize(context.Background(), "  ", lex); !errors.Is(err, ErrEmptyQuery) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("no base url", func(t *testing.T) {
		p, err := NewLLM(LLMOptions{}, nil).Normalize(context.Background(), "update codex", lex)
		if err != nil || p.Normalizer != "rules" || len(p.Notes) == 0 {
			t.Fatalf("%+v %v", p, err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		p, err := NewLLM(LLMOptions{BaseURL: "http://127.0.0.1:1", Timeout: time.Second}, nil).Normalize(context.Background(), "update codex", lex)
		if err != nil || p.Normalizer != "rules" || !strings.Contains(p.Notes[0], "llm fallback") {
			t.Fatalf("%+v %v", p, err)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		srv := chatServer(t, 200, 5*time.Second, good, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		p, err := NewLLM(LLMOptions{BaseURL: srv.URL, Timeout: 5 * time.Second}, nil).Normalize(ctx, "update codex", lex)
		if err != nil || p.Normalizer != "rules" || time.Since(start) > 2*time.Second {
			t.Fatalf("%+v %v after %v", p, err, time.Since(start))
		}
	})
	t.Run("model lifts no prohibition and no write under dry run", func(t *testing.T) {
		srv := chatServer(t, 200, 0, `{"intents":["update"],"forbidden_intents":[],"explicit_write":true}`, nil)
		p, err := NewLLM(LLMOptions{BaseURL: srv.URL}, nil).Normalize(context.Background(), "dry run: 不要更新 codex", lex)
		if err != nil {
			t.Fatal(err)
		}
		want(t, "forbidden", p.Forbidden, []string{"update"}, nil)
		want(t, "intents", p.Intents, nil, []string{"update"})
		wantBool(t, "explicit write", p.ExplicitWrite, false)
	})
}
