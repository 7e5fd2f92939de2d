package bench

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

func TestMetrics(t *testing.T) {
	tests := []struct {
		name             string
		ranking          Ranking
		relevant         []string
		r1, r5, rr, ndcg float64 // recall@1, recall@5, reciprocal rank@10, nDCG@5
	}{
		{name: "first is relevant", ranking: Ranking{"a", "b", "c"}, relevant: []string{"a"}, r1: 1, r5: 1, rr: 1, ndcg: 1},
		{name: "second is relevant", ranking: Ranking{"x", "a"}, relevant: []string{"a"}, r1: 0, r5: 1, rr: 0.5, ndcg: 1 / math.Log2(3)},
		{name: "none relevant", ranking: Ranking{"x", "y"}, relevant: []string{"a"}},
		{name: "empty ranking", relevant: []string{"a"}},
		{name: "two of two", ranking: Ranking{"b", "x", "a"}, relevant: []string{"a", "b"}, r1: 0.5, r5: 1, rr: 1,
			ndcg: (1 + 1/math.Log2(4)) / (1 + 1/math.Log2(3))},
		{name: "duplicate counted once", ranking: Ranking{"a", "a"}, relevant: []string{"a", "b"}, r1: 0.5, r5: 0.5, rr: 1,
			ndcg: 1 / (1 + 1/math.Log2(3))},
		{name: "beyond the cut-off", ranking: Ranking{"1", "2", "3", "4", "5", "a"}, relevant: []string{"a"}, rr: 1.0 / 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				what      string
				got, want float64
			}{
				{"recall@1", RecallAt(tt.ranking, tt.relevant, 1), tt.r1},
				{"recall@5", RecallAt(tt.ranking, tt.relevant, 5), tt.r5},
				{"reciprocal rank", ReciprocalRank(tt.ranking, tt.relevant, 10), tt.rr},
				{"ndcg@5", NDCGAt(tt.ranking, tt.relevant, 5), tt.ndcg},
			} {
				if math.Abs(c.got-c.want) > 1e-9 {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
		})
	}
}

// TestReportKeys pins the report's JSON keys: they are the eval contract other tools read.
func TestReportKeys(t *testing.T) {
	b, err := json.Marshal(newAccum().report())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"cases", "recall@1", "recall@5", "recall@10", "mrr", "ndcg@5", "ndcg@10", "top1",
		"pack_hit_rate", "forbidden_exposure_rate", "when_not_to_use_violation_rate", "high_risk_top1_rate",
		"resolution_accuracy", "latency_p50_us", "latency_p95_us", "partial_rate", "avg_candidates",
		"avg_returned", "per_retriever", "calibration"}
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("report keys = %v, want %v", got, want)
	}
	if m["recall@5"] != nil {
		t.Errorf("recall@5 of an empty run = %v, want null", m["recall@5"])
	}
}

func TestCatalogQueries(t *testing.T) {
	caps := Catalog(1000)
	ids := map[string]bool{}
	for _, c := range caps {
		ids[c.ID] = true
	}
	tests := []struct {
		name  string
		count int
		want  int
	}{
		{name: "a sample", count: 50, want: 50},
		{name: "more than there are", count: 1 << 20, want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qs, err := CatalogQueries(caps, tt.count)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := CatalogQueries(caps, tt.count)
			if !slices.EqualFunc(qs, again, func(a, b LabelledQuery) bool {
				return a.Query == b.Query && slices.Equal(a.Relevant, b.Relevant)
			}) {
				t.Fatal("the same arguments gave different queries")
			}
			if tt.want >= 0 && len(qs) != tt.want {
				t.Fatalf("got %d queries, want %d", len(qs), tt.want)
			}
			if len(qs) < 100 && tt.want < 0 {
				t.Fatalf("only %d queries over 1000 capabilities", len(qs))
			}
			seen := map[string]bool{}
			langs := map[string]int{}
			for _, q := range qs {
				if seen[q.Query] {
					t.Errorf("query %q appears twice", q.Query)
				}
				seen[q.Query] = true
				langs[q.Lang]++
				for _, id := range q.Relevant {
					if !ids[id] {
						t.Errorf("query %q labels unknown id %s", q.Query, id)
					}
				}
				if (q.Lang == "zh") != strings.HasPrefix(q.Query, "在") {
					t.Errorf("query %q has lang %s", q.Query, q.Lang)
				}
			}
			if len(qs) >= 50 && (langs["en"] == 0 || langs["zh"] == 0) {
				t.Errorf("queries by language = %v, want both", langs)
			}
		})
	}
}

// TestSearchQuality runs the engine end to end on the generated 1k catalogue and on a few
// queries of each evaluation set present: it guards the benchmarks' wiring (catalogue,
// caller, labels), so a floor far below today's figures is enough.
func TestSearchQuality(t *testing.T) {
	ctx := context.Background()
	t.Run("catalog=1k", func(t *testing.T) {
		f := openCatalog(t, 1000)
		r, err := evalWith(ctx, f.e, f.queries[:100], f.rc, false)
		if err != nil {
			t.Fatal(err)
		}
		if r.Cases != 100 || r.Recall5 == nil || *r.Recall5 < 0.5 {
			t.Errorf("cases %d, recall@5 %v: want 100 cases and recall@5 ≥ 0.5", r.Cases, fmtp(r.Recall5))
		}
	})
	for _, set := range EvalSets {
		t.Run("set="+set, func(t *testing.T) {
			if testing.Short() && set != "metatool" {
				t.Skip("-short: only the smallest set")
			}
			f := openEvalSet(t, set)
			qs := f.queries[:min(40, len(f.queries))]
			r, err := EvalQueries(ctx, f.e, qs, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Cases != len(qs) || r.Recall5 == nil || *r.Recall5 < 0.2 {
				t.Errorf("cases %d, recall@5 %v: want %d cases and recall@5 ≥ 0.2", r.Cases, fmtp(r.Recall5), len(qs))
			}
		})
	}
}

func fmtp(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestPackIndex(t *testing.T) {
	caps := []*registry.Capability{
		{ID: "ops", ResourceType: registry.TypePack},
		{ID: "ops.restart", ResourceType: registry.TypeAction, ExternalID: "restart_service"},
		{ID: "ops.stop", ResourceType: registry.TypeAction},
		{ID: "db.drop", ResourceType: registry.TypeAction},
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	p := newPackIndex(snap, labeller(snap))
	tests := []struct {
		name     string
		top      string
		relevant []string
		want     bool
	}{
		{name: "sibling", top: "ops.stop", relevant: []string{"ops.restart"}, want: true},
		{name: "by external id", top: "ops.stop", relevant: []string{"restart_service"}, want: true},
		{name: "the pack itself", top: "ops", relevant: []string{"restart_service"}, want: true},
		{name: "another pack", top: "db.drop", relevant: []string{"ops.restart"}, want: false},
		{name: "unknown label", top: "ops.stop", relevant: []string{"nope"}, want: false},
		{name: "root has no pack", top: "ops", relevant: []string{"ops"}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.samePack(tt.top, tt.relevant); got != tt.want {
				t.Errorf("samePack(%s, %v) = %v, want %v", tt.top, tt.relevant, got, tt.want)
			}
		})
	}
}
