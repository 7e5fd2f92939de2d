package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/registry"
)

// TestSemanticGainByKind measures the semantic retriever's marginal gain (fused nDCG@5
// with it minus without it) per kind of request, on every public set: the procedure behind
// the planner's choice of where to run it (docs/semantic.md, bench/report/i17e.md). Kinds
// come from the parse: language, number of terms, concepts named, whether entities, intents
// or symptoms were found, vague, cross-language; the cross-language sets of
// testdata/eval/xlang are measured too. Run with -v for the table. It asserts that the semantic
// retriever does not lower the fused nDCG@5 of any set overall: a stage that costs time
// must not cost quality.
func TestSemanticGainByKind(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the public sets take a while")
	}
	sets := slices.Clone(EvalSets)
	for _, x := range xlangSets {
		sets = append(sets, x.name)
	}
	for _, name := range sets {
		t.Run(name, func(t *testing.T) {
			var e *engine.Engine
			var qs []AblationQuery
			var ok bool
			if i := slices.IndexFunc(xlangSets, func(x xlangSet) bool { return x.name == name }); i >= 0 {
				e, qs, ok = xlangQueries(t, xlangSets[i])
			} else {
				e, qs, ok = evalSetQueries(t, name)
			}
			if !ok {
				t.Skipf("evaluation sets not found (set CAPDEX_EVAL_DIR to the shared/eval folder)")
			}
			kinds := semanticGainByKind(t, e, qs)
			var b strings.Builder
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range kinds {
					if !yield(k) {
						return
					}
				}
			}) {
				g := kinds[k]
				fmt.Fprintf(&b, "%-24s n=%5d  nDCG@5 with %.4f without %.4f  gain %+.4f\n", k, g.n, g.with/float64(g.n), g.without/float64(g.n), (g.with-g.without)/float64(g.n))
			}
			t.Logf("%s\n%s", name, b.String())
			if all := kinds["all"]; all.with < all.without {
				t.Errorf("semantic lowers the fused nDCG@5: %.4f with, %.4f without", all.with/float64(all.n), all.without/float64(all.n))
			}
		})
	}
}

// kindGain sums one kind's nDCG@5 with and without the semantic retriever.
type kindGain struct {
	n             int
	with, without float64
}

// semanticGainByKind searches each query with and without the semantic retriever and
// sums nDCG@5 by the kinds of its parse.
func semanticGainByKind(tb testing.TB, e *engine.Engine, qs []AblationQuery) map[string]*kindGain {
	tb.Helper()
	ctx := context.Background()
	label := labeller(e.Snapshot())
	lex := query.NewLexicon(e.Snapshot())
	out := map[string]*kindGain{}
	ndcg := func(r *registry.SearchResponse, rel []string) float64 {
		rk := make(Ranking, 0, len(r.Matches))
		for _, m := range r.Matches {
			rk = append(rk, label(m.ResourceID))
		}
		return NDCGAt(rk, rel, 5)
	}
	for _, q := range qs {
		req := q.Request
		req.Limit = 10
		p, err := query.Rules{}.Normalize(ctx, req.Query, lex)
		if err != nil {
			continue
		}
		with, err := e.Search(ctx, req, q.RC)
		if err != nil {
			continue
		}
		without, err := e.SearchVariant(ctx, req, q.RC, engine.Variant{Skip: []string{"semantic"}})
		if err != nil {
			tb.Fatal(err)
		}
		a, b := ndcg(with, q.Relevant), ndcg(without, q.Relevant)
		for _, k := range requestKinds(p, lex) {
			g := out[k]
			if g == nil {
				g = &kindGain{}
				out[k] = g
			}
			g.n++
			g.with += a
			g.without += b
		}
	}
	return out
}

// requestKinds names the kinds a parse belongs to ("all" for every one).
func requestKinds(p *query.Parsed, lex *query.Lexicon) []string {
	bucket := func(n int, bounds ...int) string {
		lo := 0
		for _, b := range bounds {
			if n <= b {
				return fmt.Sprintf("%d-%d", lo, b)
			}
			lo = b + 1
		}
		return fmt.Sprintf("%d+", lo)
	}
	meta := "no"
	if len(p.Entities)+len(p.Intents)+len(p.Symptoms) > 0 {
		meta = "yes"
	}
	out := []string{"all", "lang=" + p.Lang, "terms=" + bucket(len(p.Terms), 3, 7), "concepts=" + bucket(len(p.Concepts), 0, 2), "metadata=" + meta}
	if p.Vague {
		out = append(out, "vague")
	}
	if query.CrossLanguage(p, lex) {
		out = append(out, "cross-language")
	}
	return out
}
