package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/index"
)

// TestLexicalLOSO runs the stated procedure that chose index.DefaultLexicalParams, in two
// stages: LexicalBM25Grid with the default clause parameters, then LexicalClauseGrid with
// the first stage's choice. Each point is scored on the whole of every public set (nDCG@5 of
// the fused search, limit 10, as capdex eval) and on the seed cases; points that rank a
// seed case's expected action below first (seed MRR < 1) are out; of the others, the best
// mean nDCG@5 over the public sets is the stage's choice, and the test fails when the
// default is not it. Each stage logs its leave-one-set-out figures (chosen on the two other
// sets, scored on the third). It takes minutes: it runs only with CAPDEX_TUNE=1 and the
// sets present.
func TestLexicalLOSO(t *testing.T) {
	if os.Getenv("CAPDEX_TUNE") == "" {
		t.Skip("set CAPDEX_TUNE=1 to run the lexical grid (minutes)")
	}
	dir, ok := EvalDir()
	if !ok {
		t.Skip("evaluation sets not found (set CAPDEX_EVAL_DIR to the shared/eval folder)")
	}
	def := index.DefaultLexicalParams()
	t.Cleanup(func() {
		if _, err := index.SetLexicalParams(def); err != nil {
			t.Error(err)
		}
	})
	stage := func(name string, grid []LexicalPoint) index.LexicalParams {
		best := lexicalStage(t, dir, name, grid)
		if best.Params != def {
			t.Errorf("%s: the grid's best point is %q (%+v), but index.DefaultLexicalParams is %+v", name, best.Name, best.Params, def)
		}
		return best.Params
	}
	first := stage("BM25F", LexicalBM25Grid(def))
	stage("clauses", LexicalClauseGrid(first))
}

// lexicalStage scores every point of grid and returns the eligible point with the best mean
// nDCG@5, logging the table and the leave-one-set-out figures.
func lexicalStage(t *testing.T, dir, stage string, grid []LexicalPoint) LexicalPoint {
	t.Helper()
	dl := map[string]time.Duration{}
	for _, r := range Retrievers {
		dl[r] = 30 * time.Second // no retriever times out on a loaded machine
	}
	ctx := context.Background()
	scores, r5, seedMRR := map[string]map[string]float64{}, map[string]map[string]float64{}, map[string]float64{}
	var eligible, names []string
	for _, p := range grid {
		if _, err := index.SetLexicalParams(p.Params); err != nil {
			t.Fatal(err)
		}
		names = append(names, p.Name)
		seed, err := Ablate(ctx, qualityEngine(t, nil), seedQueries(t), AblateOptions{Retrievers: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		seedMRR[p.Name] = seed.Row("fused").MRR
		if seedMRR[p.Name] == 1 {
			eligible = append(eligible, p.Name)
		}
		for _, set := range EvalSets {
			rep, err := EvalToolsWith(ctx, filepath.Join(dir, set, "tools.jsonl"), filepath.Join(dir, set, "queries.jsonl"),
				engine.Options{Deadlines: dl}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if scores[set] == nil {
				scores[set], r5[set] = map[string]float64{}, map[string]float64{}
			}
			scores[set][p.Name], r5[set][p.Name] = *rep.NDCG5, *rep.Recall5
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n\n| point | %s | mean nDCG@5 | seed MRR |\n|---|---|---|---|---|---|\n", stage, strings.Join(EvalSets, " | "))
	best, bestMean := -1, -1.0
	for i, p := range names {
		sum := 0.0
		fmt.Fprintf(&b, "| %s |", p)
		for _, s := range EvalSets {
			sum += scores[s][p]
			fmt.Fprintf(&b, " %.4f (R@5 %.4f) |", scores[s][p], r5[s][p])
		}
		m := sum / float64(len(EvalSets))
		fmt.Fprintf(&b, " %.4f | %.4f |\n", m, seedMRR[p])
		if seedMRR[p] == 1 && m > bestMean {
			best, bestMean = i, m
		}
	}
	if best < 0 {
		t.Fatalf("%s: no point keeps the seed cases at MRR 1\n%s", stage, b.String())
	}
	rows, err := LeaveOneSetOut(scores, eligible, names[best])
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\n| held out | chosen on the others | its nDCG@5 | the choice's | best in hindsight |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %.4f | %.4f | %.4f (%s) |\n", r.HeldOut, r.Chosen, r.Score, r.Reference, r.BestScore, r.Best)
	}
	t.Log(b.String())
	return grid[best]
}
