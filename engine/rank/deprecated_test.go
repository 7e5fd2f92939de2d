package rank

import (
	"slices"
	"testing"

	"github.com/capdex/capdex/registry"
)

// TestDemoteDeprecated: the deprecated candidate loses DeprecatedPenalty from Fused and
// Score and, resorted, falls below the active one it led by less than that, staying above
// the one it led by more.
func TestDemoteDeprecated(t *testing.T) {
	mk := func(doc uint32, id string, s float64) Candidate {
		return Candidate{Doc: doc, Cap: &registry.Capability{ID: id}, Fused: s, Score: s}
	}
	cands := []Candidate{mk(0, "a.old", 0.030), mk(1, "a.new", 0.025), mk(2, "b.far", 0.010), mk(3, "b.low", 0.005)}
	deprecated := func(d uint32) bool { return d == 0 || d == 2 }
	if n := DemoteDeprecated(cands, deprecated, DeprecatedPenalty, true); n != 2 {
		t.Fatalf("demoted %d, want 2", n)
	}
	var order []string
	for _, c := range cands {
		order = append(order, c.Cap.ID)
	}
	if want := []string{"a.new", "a.old", "b.low", "b.far"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if c := cands[1]; c.Fused != c.Score || c.Score > 0.0200001 || c.Score < 0.0199999 {
		t.Errorf("a.old: fused %v score %v, want 0.020", c.Fused, c.Score)
	}
	if n := DemoteDeprecated(cands, func(uint32) bool { return false }, DeprecatedPenalty, true); n != 0 {
		t.Errorf("demoted %d without deprecated candidates", n)
	}
}
