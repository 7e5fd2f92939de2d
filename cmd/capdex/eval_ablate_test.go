package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdex/capdex/bench"
)

// TestEvalAblate: capdex eval --ablate on the seed cases prints every row of the ablation
// (the fused search, each retriever alone and left out, no rerank, no diversification,
// each fusion method), and the fused search ranks every case's expected action first.
func TestEvalAblate(t *testing.T) {
	cases := filepath.Join("..", "..", "testdata", "eval", "seed_cases.jsonl")
	var rep bench.AblationReport
	cliJSON(t, t.TempDir(), &rep, "eval", "--ablate", "--cases", cases, "--json")
	want := append(bench.AblationRows(bench.Retrievers), "fusion:rrf", "fusion:score")
	if len(rep.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rep.Rows), len(want))
	}
	for i, r := range rep.Rows {
		if r.Name != want[i] {
			t.Errorf("row %d is %q, want %q", i, r.Name, want[i])
		}
	}
	if f := rep.Row("fused"); f == nil || f.MRR != 1 || rep.Queries == 0 || f.LatencyP50US <= 0 {
		t.Errorf("fused %+v over %d queries, want MRR 1 and a latency", f, rep.Queries)
	}
	if a := rep.Row("alone:lexical"); a == nil || a.MRR >= 1 {
		t.Errorf("lexical alone %+v: the seed cases need more than one retriever", a)
	}
	out, _, code := cli(t, t.TempDir(), "eval", "--ablate", "--cases", cases, "--fusion", "rrf")
	if code != 0 || !strings.Contains(out, "without:semantic") || !strings.Contains(out, "ΔnDCG@5") {
		t.Errorf("table (exit %d):\n%s", code, out)
	}
	if _, stderr, code := cli(t, t.TempDir(), "eval", "--ablate", "--cases", cases, "--fusion", "borda"); code != exitUsage || !strings.Contains(stderr, "borda") {
		t.Errorf("--fusion borda: exit %d, %s", code, stderr)
	}
	if _, stderr, code := cli(t, t.TempDir(), "eval", "--ablate", "--cases", cases, "--embedder", "bert:x"); code != exitUsage || !strings.Contains(stderr, "bert") {
		t.Errorf("--embedder bert:x: exit %d, %s", code, stderr)
	}
}
