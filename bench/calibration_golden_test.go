package bench

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/capdex/capdex/engine"
)

var updateCalibration = flag.Bool("update-calibration", false, "rewrite testdata/eval/calibration.golden.json from this run")

// calibrationGoldenPath is the golden calibration file, relative to the package directory.
const calibrationGoldenPath = "../testdata/eval/calibration.golden.json"

// calibrationFigures are the figures the golden file keeps per set.
type calibrationFigures struct {
	Answers            int      `json:"answers"`
	Confident          *float64 `json:"confident"`
	NoMatch            *float64 `json:"no_match"`
	PrecisionConfident *float64 `json:"precision@1_confident"`
	RightNotConfident  *float64 `json:"right_not_confident"`
	ECE                *float64 `json:"ece"`
}

func figuresOf(c *Calibration) calibrationFigures {
	return calibrationFigures{c.Answers, c.Confident, c.NoMatch, c.PrecisionConfident, c.RightNotConfident, c.ECE}
}

// TestGoldenCalibration compares the calibration of the default confidence model on the
// seed cases, the off-topic negatives and (without -short, when present) the public sets
// with testdata/eval/calibration.golden.json. `go test ./bench -run GoldenCalibration
// -update-calibration` rewrites it; review its diff like code.
func TestGoldenCalibration(t *testing.T) {
	golden := map[string]calibrationFigures{}
	if b, err := os.ReadFile(calibrationGoldenPath); err == nil {
		if err := json.Unmarshal(b, &golden); err != nil {
			t.Fatalf("%s: %v", calibrationGoldenPath, err)
		}
	} else if !*updateCalibration {
		t.Fatalf("%s: %v", calibrationGoldenPath, err)
	}
	got := map[string]calibrationFigures{}
	ctx := context.Background()
	for name, path := range map[string]string{"seed_cases": seedCasesPath, "negatives_en": negativesPaths[0], "negatives_zh": negativesPaths[1]} {
		cases, err := ReadJSONL[Case](path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := EvalCases(ctx, qualityEngine(t, nil), cases, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got[name] = figuresOf(r.Calibration)
	}
	if dir, ok := EvalDir(); ok && !testing.Short() {
		for _, name := range EvalSets {
			r, err := EvalToolsWith(ctx, filepath.Join(dir, name, "tools.jsonl"), filepath.Join(dir, name, "queries.jsonl"), engine.Options{Deadlines: QualityDeadlines()}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got[name] = figuresOf(r.Calibration)
		}
	}
	if *updateCalibration {
		for k, v := range got {
			golden[k] = v
		}
		writeGolden(t, calibrationGoldenPath, golden)
		return
	}
	same := func(a, b *float64) bool {
		return a == nil && b == nil || a != nil && b != nil && math.Abs(*a-*b) <= goldenTolerance+1e-4
	}
	for name, g := range got {
		w, ok := golden[name]
		if !ok {
			t.Errorf("%s: not in %s; run go test ./bench -run GoldenCalibration -update-calibration", name, calibrationGoldenPath)
			continue
		}
		if g.Answers != w.Answers || !same(g.Confident, w.Confident) || !same(g.NoMatch, w.NoMatch) ||
			!same(g.PrecisionConfident, w.PrecisionConfident) || !same(g.RightNotConfident, w.RightNotConfident) || !same(g.ECE, w.ECE) {
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			t.Errorf("%s: calibration %s, golden %s (rerun with -update-calibration if intended)", name, gb, wb)
		}
	}
}
