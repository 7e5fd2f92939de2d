package query

import (
	"slices"
	"testing"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

func TestPlan(t *testing.T) {
	lex := NewLexicon(fixtureSnapshot(t))
	tests := []struct {
		name  string
		query string
		req   *registry.SearchRequest
		want  []index.Kind
	}{
		{"explicit id alone", "maintenance.codex.diagnose", nil, []index.Kind{index.Exact, index.Metadata}},
		{"explicit id with filler", "describe maintenance.codex.diagnose@3 please", nil, []index.Kind{index.Exact, index.Metadata}},
		{"tool name with filler zh", "调用 codex_diagnose", nil, []index.Kind{index.Exact, index.Metadata}},
		{"explicit id and more words", "maintenance.codex.diagnose after npm prefix changed", nil, []index.Kind{index.Exact, index.Lexical, index.Metadata}},
		{"browse", "Codex 维护相关能力有哪些？", nil, []index.Kind{index.Metadata, index.Hierarchy}},
		{"browse with an id", "what tools are in maintenance.codex", nil, []index.Kind{index.Exact, index.Metadata, index.Hierarchy}},
		{"fuzzy", "先检查原因，不要直接更新", nil, []index.Kind{index.Exact, index.Lexical, index.Semantic, index.Metadata, index.History}},
		{"fuzzy within (request)", "codex update", &registry.SearchRequest{Within: "maintenance"}, []index.Kind{index.Exact, index.Lexical, index.Semantic, index.Metadata, index.Hierarchy, index.History}},
		{"fuzzy within (text)", "within maintenance.codex find the update", nil, []index.Kind{index.Exact, index.Lexical, index.Semantic, index.Metadata, index.Hierarchy, index.History}},
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
					t.Errorf("%q: %s has no reason", q, s.Kind)
				}
			}
		}
	})
	t.Run("browse without a pack searches the words", func(t *testing.T) {
		p := normalize(t, lex, "what tools do you have to analyse logs")
		if !p.Browse || p.Scope != "" {
			t.Fatalf("parsed %+v", *p)
		}
		if got := Plan(p, nil); !slices.Equal(got, []index.Kind{index.Exact, index.Lexical, index.Semantic, index.Metadata, index.Hierarchy}) {
			t.Fatalf("plan %v", got)
		}
	})
	t.Run("never lexical on browse, never semantic on ids", func(t *testing.T) {
		got := Plan(&Parsed{Browse: true, IDs: []string{"a.b"}, Text: "a.b tools"}, nil)
		if slices.Contains(got, index.Lexical) {
			t.Fatalf("browse planned lexical: %v", got)
		}
		got = Plan(&Parsed{IDs: []string{"a.b"}, Text: "a.b and many other words"}, nil)
		if slices.Contains(got, index.Semantic) || !slices.Contains(got, index.Lexical) {
			t.Fatalf("ids plan %v", got)
		}
	})
}
