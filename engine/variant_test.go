package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
)

// TestSearchVariant checks each change a Variant makes: a skipped retriever is neither
// planned nor run, other weights change the scores, no rerank leaves the fused scores, no
// diversification returns the ranking's head, and the zero variant is Search itself.
func TestSearchVariant(t *testing.T) {
	ctx := context.Background()
	e := open(t, engine.Options{})
	req := registry.SearchRequest{Query: "Codex 更新后还是旧版本，帮我检查并修好", Limit: 5, Explain: true}
	base, err := e.Search(ctx, req, dev)
	if err != nil {
		t.Fatal(err)
	}
	// the default fusion is score fusion, and the explanation says so
	for _, m := range base.Matches {
		fused := 0
		for _, c := range m.Explain.Score {
			if strings.HasPrefix(c.Name, "rrf.") {
				t.Errorf("%s: component %s under score fusion", m.ResourceID, c.Name)
			}
			if strings.HasPrefix(c.Name, "score.") {
				fused++
			}
		}
		if fused == 0 {
			t.Errorf("%s: no score.* component: %+v", m.ResourceID, m.Explain.Score)
		}
	}
	same, err := e.SearchVariant(ctx, req, dev, engine.Variant{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(base), ids(same)) || base.Matches[0].Score != same.Matches[0].Score {
		t.Errorf("zero variant %v, search %v", ids(same), ids(base))
	}

	skip, err := e.SearchVariant(ctx, req, dev, engine.Variant{Skip: []string{"lexical"}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(skip.SearchMeta.PlannedRetrievers, "lexical") || slices.Contains(skip.SearchMeta.CompletedRetrievers, "lexical") {
		t.Errorf("lexical skipped but planned %v, completed %v", skip.SearchMeta.PlannedRetrievers, skip.SearchMeta.CompletedRetrievers)
	}
	if !slices.Contains(base.SearchMeta.CompletedRetrievers, "lexical") {
		t.Fatalf("the search itself did not run lexical: %v", base.SearchMeta.CompletedRetrievers)
	}
	for _, m := range skip.Matches {
		for _, ev := range m.Explain.Evidence {
			if ev.Retriever == "lexical" {
				t.Errorf("%s has lexical evidence with lexical skipped", m.ResourceID)
			}
		}
	}

	w := rank.SeedWeights()
	rrf, err := e.SearchVariant(ctx, req, dev, engine.Variant{Weights: &w, NoRerank: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rrf.Matches {
		sum := 0.0
		for _, c := range m.Explain.Score {
			sum += c.Value
			if len(c.Name) < 4 || c.Name[:4] != "rrf." {
				t.Errorf("%s: component %s with no rerank", m.ResourceID, c.Name)
			}
		}
		// plain weighted RRF: each retriever adds weight/(60+rank)
		want := 0.0
		for _, ev := range m.Explain.Evidence {
			want += w.Of(ev.Retriever) / (60 + float64(ev.Rank))
		}
		if d := sum - want; d > 1e-3 || d < -1e-3 {
			t.Errorf("%s: score %.5f, weighted RRF of its evidence %.5f", m.ResourceID, sum, want)
		}
	}

	if _, err := e.SearchVariant(ctx, req, dev, engine.Variant{Skip: []string{"telepathy"}}); !errors.Is(err, engine.ErrInvalidRequest) {
		t.Errorf("unknown retriever skipped: err %v, want ErrInvalidRequest", err)
	}
}

// TestSearchVariantNoDiversify checks that without the diversification the answer is the
// ranking's head: scores never increase down the list.
func TestSearchVariantNoDiversify(t *testing.T) {
	ctx := context.Background()
	e := open(t, engine.Options{})
	req := registry.SearchRequest{Query: "codex", Limit: 10}
	r, err := e.SearchVariant(ctx, req, dev, engine.Variant{NoDiversify: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Matches) < 2 {
		t.Fatalf("want several matches, got %v", ids(r))
	}
	for i := 1; i < len(r.Matches); i++ {
		if r.Matches[i].Score > r.Matches[i-1].Score {
			t.Errorf("rank %d score %.4f above rank %d's %.4f", i+1, r.Matches[i].Score, i, r.Matches[i-1].Score)
		}
	}
}
