package engine_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
)

// TestCrossLanguagePlanWeighsSemantic checks that a request written in the other language
// than the catalogue's says so in plan_reasons and fuses the semantic retriever at
// query.CrossLangSemanticWeight times its weight: its best hit contributes
// 3·weight/(K+1), where a same-language request's contributes weight/(K+1).
func TestCrossLanguagePlanWeighsSemantic(t *testing.T) {
	ctx := context.Background()
	catalogue := func(titles ...string) []*registry.Capability {
		caps := []*registry.Capability{{ID: "tools", Version: 1, ResourceType: registry.TypePack, Title: "tools"}}
		for i, s := range titles {
			caps = append(caps, &registry.Capability{ID: "tools.t" + string(rune('a'+i)), Version: 1, ResourceType: registry.TypeAction,
				Title: s, Summary: s, SideEffect: registry.SideEffectRead, RiskLevel: registry.RiskLow})
		}
		return caps
	}
	w := rank.DefaultWeights()
	unit := w.Semantic / (w.K + 1)
	for _, tt := range []struct {
		name   string
		caps   []*registry.Capability
		query  string
		factor float64
	}{
		{"zh request, en catalogue", catalogue("Start the stopwatch", "Delete the selected mail", "Book a flight ticket"), "启动秒表", query.CrossLangSemanticWeight},
		{"zh request, zh catalogue", catalogue("启动秒表计时", "删除指定的邮件", "预订机票"), "启动秒表", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := open(t, engine.Options{Seed: tt.caps})
			resp, err := e.SearchVariant(ctx, registry.SearchRequest{Query: tt.query, Limit: 5, Explain: true}, admin, engine.Variant{NoRerank: true})
			if err != nil {
				t.Fatal(err)
			}
			var reason string
			for _, r := range resp.SearchMeta.PlanReasons {
				if r.Retriever == "semantic" {
					reason = r.Reason
				}
			}
			if cross := tt.factor != 1; cross != strings.Contains(reason, "different languages") {
				t.Fatalf("semantic reason %q (cross-language %v)", reason, cross)
			}
			found := false
			for _, m := range resp.Matches {
				for _, ev := range m.Explain.Evidence {
					if ev.Retriever != "semantic" || ev.Rank != 1 {
						continue
					}
					for _, c := range m.Explain.Score {
						if c.Name == "score.semantic" {
							found = true
							if want := tt.factor * unit; math.Abs(c.Value-want) > 1e-9 {
								t.Fatalf("%s: score.semantic %v, want %v", m.ResourceID, c.Value, want)
							}
						}
					}
				}
			}
			if !found {
				t.Fatalf("no best semantic hit among %v", ids(resp))
			}
		})
	}
}
