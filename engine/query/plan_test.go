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
			if got := Plan(p, tt.req, nil); !slices.Equal(got, tt.want) {
				t.Fatalf("Plan = %v, want %v (parsed %+v)", got, tt.want, *p)
			}
		})
	}
	t.Run("every step says why", func(t *testing.T) {
		for _, q := range []string{"codex update", "make it faster please", "maintenance.codex.diagnose", "Codex 维护相关能力有哪些？"} {
			for _, s := range PlanSteps(normalize(t, lex, q), nil, lex) {
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
		if got := Plan(p, nil, nil); !slices.Equal(got, []index.Kind{index.Exact, index.Lexical, index.Semantic, index.Metadata, index.Hierarchy}) {
			t.Fatalf("plan %v", got)
		}
	})
	t.Run("never lexical on browse, never semantic on ids", func(t *testing.T) {
		got := Plan(&Parsed{Browse: true, IDs: []string{"a.b"}, Text: "a.b tools"}, nil, nil)
		if slices.Contains(got, index.Lexical) {
			t.Fatalf("browse planned lexical: %v", got)
		}
		got = Plan(&Parsed{IDs: []string{"a.b"}, Text: "a.b and many other words"}, nil, nil)
		if slices.Contains(got, index.Semantic) || !slices.Contains(got, index.Lexical) {
			t.Fatalf("ids plan %v", got)
		}
	})
}

// TestPlanCrossLanguage checks that a query in the other language than the catalogue's
// weighs the semantic retriever more, says why, and that nothing else changes.
func TestPlanCrossLanguage(t *testing.T) {
	snapOf := func(titles ...string) *Lexicon {
		t.Helper()
		caps := []*registry.Capability{{ID: "p", ResourceType: registry.TypePack, Title: "工具"}}
		for i, s := range titles {
			caps = append(caps, &registry.Capability{ID: "p.a" + string(rune('a'+i)), ResourceType: registry.TypeAction, Title: s, Summary: s})
		}
		snap, err := registry.NewSnapshot(1, caps)
		if err != nil {
			t.Fatal(err)
		}
		return NewLexicon(snap)
	}
	en := snapOf("Delete a mail", "Book a flight", "Start the stopwatch")
	zh := snapOf("删除指定的邮件", "预订机票", "启动秒表计时")
	both := snapOf("删除指定的邮件", "Book a flight", "启动秒表计时", "Start the stopwatch")
	semantic := func(lex *Lexicon, q string) Step {
		t.Helper()
		for _, s := range PlanSteps(normalize(t, lex, q), nil, lex) {
			if s.Kind == index.Semantic {
				return s
			}
		}
		t.Fatalf("%q: no semantic step", q)
		return Step{}
	}
	for _, tt := range []struct {
		name  string
		lex   *Lexicon
		query string
		cross bool
	}{
		{"zh on en", en, "删除这封邮件", true},
		{"en on zh", zh, "delete that mail", true},
		{"en on en", en, "delete that mail", false},
		{"zh on zh", zh, "删除这封邮件", false},
		{"bilingual catalogue", both, "删除这封邮件", false},
		{"mixed query", en, "删除 the mail", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := semantic(tt.lex, tt.query)
			if got := CrossLanguage(normalize(t, tt.lex, tt.query), tt.lex); got != tt.cross {
				t.Fatalf("CrossLanguage = %v, want %v", got, tt.cross)
			}
			if tt.cross && (s.Weight != CrossLangSemanticWeight || s.Reason != crossLangReason) {
				t.Fatalf("semantic step %+v, want weight %d and the cross-language reason", s, CrossLangSemanticWeight)
			}
			if !tt.cross && (s.Weight != 0 || s.Reason == crossLangReason) {
				t.Fatalf("semantic step %+v, want the default weight", s)
			}
		})
	}
	if CrossLanguage(normalize(t, en, "删除这封邮件"), nil) {
		t.Fatal("cross-language without a catalogue")
	}
	for _, s := range PlanSteps(normalize(t, en, "删除这封邮件"), nil, en) {
		if s.Kind != index.Semantic && s.Weight != 0 {
			t.Fatalf("%s weighted %v", s.Kind, s.Weight)
		}
	}
}
