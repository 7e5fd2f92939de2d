package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/engine/rank"
)

func TestLeaveOneSetOut(t *testing.T) {
	scores := map[string]map[string]float64{
		"a": {"p": 0.9, "q": 0.5, "ref": 0.7},
		"b": {"p": 0.8, "q": 0.6, "ref": 0.7},
		"c": {"p": 0.1, "q": 0.9, "ref": 0.7},
	}
	rows, err := LeaveOneSetOut(scores, []string{"p", "q"}, "ref")
	if err != nil {
		t.Fatal(err)
	}
	want := []LOSORow{
		{HeldOut: "a", Chosen: "q", Score: 0.5, Best: "p", BestScore: 0.9, Reference: 0.7}, // b+c: p .45, q .75
		{HeldOut: "b", Chosen: "q", Score: 0.6, Best: "p", BestScore: 0.8, Reference: 0.7}, // a+c: p .5, q .7
		{HeldOut: "c", Chosen: "p", Score: 0.1, Best: "q", BestScore: 0.9, Reference: 0.7}, // a+b: p .85, q .55
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", rows, want)
	}
	if _, err := LeaveOneSetOut(map[string]map[string]float64{"a": {"p": 1}, "b": {}}, []string{"p"}, "p"); err == nil {
		t.Error("a set without a point's score: no error")
	}
}

// TestFusionLOSO runs the stated procedure that chose rank.DefaultWeights: every point of
// FusionGrid on every public set (nDCG@5 of the fused search, limit 10) and on the seed
// cases; points that rank a case's expected action below first (seed MRR < 1) are out;
// of the others, the point with the best mean nDCG@5 over the public sets is the default,
// and each set's leave-one-set-out figure (chosen on the two others, scored on it) is
// logged. It takes minutes: it runs
// only with CAPDEX_TUNE=1 and the sets present.
func TestFusionLOSO(t *testing.T) {
	if os.Getenv("CAPDEX_TUNE") == "" {
		t.Skip("set CAPDEX_TUNE=1 to run the fusion grid (minutes)")
	}
	grid := FusionGrid()
	names := make([]string, len(grid))
	for i, p := range grid {
		names[i] = p.Name
	}
	def := rank.DefaultWeights()
	scores := map[string]map[string]float64{}
	r5 := map[string]map[string]float64{}
	var extra []NamedVariant
	for _, p := range grid {
		w := p.Weights
		extra = append(extra, NamedVariant{Name: p.Name, Variant: engine.Variant{Weights: &w}})
	}
	seed, err := Ablate(context.Background(), qualityEngine(t, nil), seedQueries(t), AblateOptions{Retrievers: []string{}, Extra: extra})
	if err != nil {
		t.Fatal(err)
	}
	var eligible []string
	for _, p := range grid {
		if seed.Row(p.Name).MRR == 1 {
			eligible = append(eligible, p.Name)
		}
	}
	for _, set := range EvalSets {
		e, qs, ok := evalSetQueries(t, set)
		if !ok {
			t.Skip("evaluation sets not found (set CAPDEX_EVAL_DIR to the shared/eval folder)")
		}
		rep, err := Ablate(context.Background(), e, qs, AblateOptions{Label: labeller(e.Snapshot()), Retrievers: []string{}, Extra: extra})
		if err != nil {
			t.Fatal(err)
		}
		scores[set], r5[set] = map[string]float64{}, map[string]float64{}
		for _, p := range grid {
			row := rep.Row(p.Name)
			scores[set][p.Name], r5[set][p.Name] = row.NDCG5, row.Recall5
		}
		scores[set]["default"] = rep.Row("fused").NDCG5
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| point | %s | mean | seed MRR |\n|---|---|---|---|---|---|\n", strings.Join(EvalSets, " | "))
	best, bestMean := "", -1.0
	for _, p := range names {
		sum := 0.0
		fmt.Fprintf(&b, "| %s |", p)
		for _, s := range EvalSets {
			sum += scores[s][p]
			fmt.Fprintf(&b, " %.4f (R@5 %.4f) |", scores[s][p], r5[s][p])
		}
		m := sum / float64(len(EvalSets))
		fmt.Fprintf(&b, " %.4f | %.4f |\n", m, seed.Row(p).MRR)
		if m > bestMean && slices.Contains(eligible, p) {
			best, bestMean = p, m
		}
	}
	rows, err := LeaveOneSetOut(scores, eligible, "default")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\n| held out | chosen on the others | its nDCG@5 | default's | best in hindsight |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %.4f | %.4f | %.4f (%s) |\n", r.HeldOut, r.Chosen, r.Score, r.Reference, r.BestScore, r.Best)
	}
	t.Log(b.String())
	for _, p := range grid {
		if p.Name == best && p.Weights != def {
			t.Errorf("the grid's best point over all sets is %q (%+v), but rank.DefaultWeights is %+v", best, p.Weights, def)
		}
	}
}
