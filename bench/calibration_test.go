package bench

import (
	"context"
	"math"
	"testing"

	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
)

// TestCalibrationReport checks the shares, the reliability table and ECE on answers whose
// figures are known.
func TestCalibrationReport(t *testing.T) {
	var c Calibration
	// Bin 0.9-1.0: four confident answers at 0.95, three right.
	for i := 0; i < 4; i++ {
		c.add(0.95, registry.Confident, i < 3)
	}
	// Bin 0.2-0.3: four at 0.25, one right, none confident; one is no match.
	for i := 0; i < 4; i++ {
		res := registry.Ambiguous
		if i == 3 {
			res = registry.NoConfidentMatch
		}
		c.add(0.25, res, i == 0)
	}
	c.add(1, registry.Confident, true) // 1.0 falls in the last bin
	r := c.finish()
	near := func(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 1e-4 }
	if !near(r.Confident, 5.0/9) || !near(r.NoMatch, 1.0/9) {
		t.Errorf("confident %v, no match %v", *r.Confident, *r.NoMatch)
	}
	if !near(r.PrecisionConfident, 4.0/5) {
		t.Errorf("precision %v", *r.PrecisionConfident)
	}
	if !near(r.RightNotConfident, 1.0/5) {
		t.Errorf("right not confident %v", *r.RightNotConfident)
	}
	if len(r.Bins) != 2 || r.Bins[0].Answers != 4 || r.Bins[1].Answers != 5 {
		t.Fatalf("bins %+v", r.Bins)
	}
	// |0.25-0.25|·4 + |0.96-0.8|·5, over 9.
	if want := (5 * math.Abs((0.95*4+1)/5-0.8)) / 9; !near(r.ECE, round6(want)) {
		t.Errorf("ECE %v, want %v", *r.ECE, want)
	}
	var empty Calibration
	if e := empty.finish(); e.ECE != nil || e.Confident != nil {
		t.Errorf("empty report %+v", e)
	}
}

// TestHalfOf: the two halves of a set are its searches at even and at odd positions.
func TestHalfOf(t *testing.T) {
	ls := make([]labelledSearch, 5)
	for i := range ls {
		ls[i].l.Weight = float64(i)
	}
	for h, want := range [][]float64{{0, 2, 4}, {1, 3}} {
		got := halfOf(ls, h)
		if len(got) != len(want) {
			t.Fatalf("half %d: %d searches, want %d", h, len(got), len(want))
		}
		for i, s := range got {
			if s.l.Weight != want[i] {
				t.Errorf("half %d: search %d is %v, want %v", h, i, s.l.Weight, want[i])
			}
		}
	}
}

// TestFitConfidenceReportsEveryFold: FitConfidence scores every set three ways (left out,
// half out, all), each over all of the set's searches.
func TestFitConfidenceReportsEveryFold(t *testing.T) {
	cases, err := ReadJSONL[Case](seedCasesPath)
	if err != nil {
		t.Fatal(err)
	}
	neg, err := ReadJSONL[Case](negativesPaths[0])
	if err != nil {
		t.Fatal(err)
	}
	sets := []LabelledSet{{Name: "seeds", Cases: cases[:30]}, {Name: "negatives", Cases: neg[:20]}}
	rep, err := FitConfidence(context.Background(), sets, rank.FitOptions{Precision: 0.9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		f, ok := rep.PerSet[s.Name]
		if !ok {
			t.Fatalf("%s: not reported", s.Name)
		}
		for name, c := range map[string]*Calibration{"held out": f.HeldOut, "half out": f.HalfOut, "all": f.All} {
			if c == nil || c.Answers != len(s.Cases) || f.Searches != len(s.Cases) {
				t.Errorf("%s %s: %+v, want %d answers", s.Name, name, c, len(s.Cases))
			}
		}
	}
}
