package query

import (
	"slices"
	"testing"
	"time"

	"github.com/capdex/capdex/registry"
)

func TestPlan(t *testing.T) {
	lex := NewLexicon(fixtureSnapshot(t))
	tests := []struct {
		name  string
		query string
		req   *registry.SearchRequest
		want  []string
	}{
		{"explicit id alone", "maintenance.codex.diagnose", nil, []string{Exact, Metadata}},
		{"explicit id with filler", "describe maintenance.codex.diagnose@3 please", nil, []string{Exact, Metadata}},
		{"tool name with filler zh", "调用 codex_diagnose", nil, []string{Exact, Metadata}},
		{"explicit id and more words", "maintenance.codex.diagnose after npm prefix changed", nil, []string{Exact, Lexical, Metadata}},
		{"browse", "Codex 维护相关能力有哪些？", nil, []string{Metadata, Hierarchy}},
		{"browse with an id", "what tools are in maintenance.codex", nil, []string{Exact, Metadata, Hierarchy}},
		{"fuzzy", "先检查原因，不要直接更新", nil, []string{Exact, Lexical, Semantic, Metadata, History}},
		// neither vague nor about earlier use: no history
		{"fuzzy within (request)", "codex update", &registry.SearchRequest{Within: "maintenance"}, []string{Exact, Lexical, Semantic, Metadata, Hierarchy}},
		{"fuzzy within (text)", "within maintenance.codex find the update", nil, []string{Exact, Lexical, Semantic, Metadata, Hierarchy}},
		{"earlier use: history", "update codex again like last time", nil, []string{Exact, Lexical, Semantic, Metadata, History}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := normalize(t, lex, tt.query)
			if got := Plan(p, tt.req); !slices.Equal(got, tt.want) {
				t.Fatalf("Plan = %v, want %v (parsed %+v)", got, tt.want, *p)
			}
		})
	}
	t.Run("every step says why", func(t *testing.T) {
		for _, q := range []string{"codex update", "make it faster please", "maintenance.codex.diagnose", "Codex 维护相关能力有哪些？"} {
			for _, s := range PlanSteps(normalize(t, lex, q), nil) {
				if s.Reason == "" {
					t.Errorf("%q: %s has no reason", q, s.Retriever)
				}
			}
		}
		steps := PlanSteps(normalize(t, lex, "run the usual one again"), nil)
		if i := slices.IndexFunc(steps, func(s Step) bool { return s.Retriever == History }); i < 0 || steps[i].Reason == "" {
			t.Errorf("steps %+v", steps)
		}
	})
	t.Run("browse without a pack searches the words", func(t *testing.T) {
		p := normalize(t, lex, "what tools do you have to analyse logs")
		if !p.Browse || p.Scope != "" {
			t.Fatalf("parsed %+v", *p)
		}
		if got := Plan(p, nil); !slices.Equal(got, []string{Exact, Lexical, Semantic, Metadata, Hierarchy}) {
			t.Fatalf("plan %v", got)
		}
	})
	t.Run("never lexical on browse, never semantic on ids", func(t *testing.T) {
		got := Plan(&Parsed{Browse: true, IDs: []string{"a.b"}, Text: "a.b tools"}, nil)
		if slices.Contains(got, Lexical) {
			t.Fatalf("browse planned lexical: %v", got)
		}
		got = Plan(&Parsed{IDs: []string{"a.b"}, Text: "a.b and many other words"}, nil)
		if slices.Contains(got, Semantic) || !slices.Contains(got, Lexical) {
			t.Fatalf("ids plan %v", got)
		}
	})
}

func TestDefaultDeadlines(t *testing.T) {
	d := DefaultDeadlines()
	want := map[string]time.Duration{Exact: 50 * time.Millisecond, Metadata: 100 * time.Millisecond, Lexical: 200 * time.Millisecond,
		History: 300 * time.Millisecond, Semantic: 500 * time.Millisecond, Hierarchy: 100 * time.Millisecond}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %v, want %v", k, d[k], v)
		}
	}
	d[Exact] = 0
	if DefaultDeadlines()[Exact] != 50*time.Millisecond {
		t.Fatal("DefaultDeadlines shares its map")
	}
}
