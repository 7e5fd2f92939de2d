package query

import (
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

// TestNextStepsTable: every next_step names known capability types, every capability type
// has a step of its own, and no step is listed twice.
func TestNextStepsTable(t *testing.T) {
	own := map[string]int{}
	seen := map[string]bool{}
	for _, s := range NextSteps {
		if seen[s.Step] || FoldMatchValue(s.Step) != s.Step {
			t.Errorf("step %q listed twice or not folded", s.Step)
		}
		seen[s.Step] = true
		for _, ty := range s.Types {
			if !slices.Contains(registry.CapabilityTypes, ty) {
				t.Errorf("step %s: unknown capability type %q", s.Step, ty)
			}
		}
		if len(s.Types) == 1 {
			own[s.Types[0]]++
		}
	}
	for _, ty := range registry.CapabilityTypes {
		if own[ty] != 1 {
			t.Errorf("capability type %s has %d steps of its own, want 1", ty, own[ty])
		}
	}
	if got, ok := NextStepTypes("run_rule"); !ok || !slices.Equal(got, []string{"rule"}) {
		t.Errorf("run_rule: %v %v (seed 003 §4)", got, ok)
	}
}

// TestParseMatch: the filters come in seed 003 §5's order whatever the JSON order, values
// are folded, and the ranking fields are kept.
func TestParseMatch(t *testing.T) {
	m, err := ParseMatch(&registry.StructuredMatch{Scenario: "Invoice Validation", Domain: "Reimbursement",
		CapabilityTypes: []string{"Rule", "skill"}, NextStep: "RUN_RULE", Intents: []string{"Explain"}, RiskSignals: []string{"duplicate-invoice"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m.Filters {
		got = append(got, f.Name+"="+strings.Join(f.Values, ","))
	}
	want := []string{"match.next_step=rule", "match.capability_types=rule,skill", "match.domain=reimbursement", "match.scenario=invoice_validation"}
	if !slices.Equal(got, want) {
		t.Errorf("filters %v, want %v", got, want)
	}
	if !slices.Equal(m.Intents, []string{"explain"}) || !slices.Equal(m.RiskSignals, []string{"duplicate_invoice"}) {
		t.Errorf("intents %v risk signals %v", m.Intents, m.RiskSignals)
	}
	c := &registry.Capability{CapabilityType: "rule", Domain: "reimbursement", Scenarios: []string{"audit", "invoice_validation"}}
	for _, f := range m.Filters {
		if !f.Admits(c) {
			t.Errorf("%s does not admit %+v", f.Describe(), c)
		}
	}
	if m.Filters[3].Admits(&registry.Capability{Scenarios: []string{"audit"}}) || m.Filters[2].Admits(&registry.Capability{}) {
		t.Error("a capability without the value passes")
	}
	if m, err := ParseMatch(nil); m != nil || err != nil {
		t.Errorf("nil: %v %v", m, err)
	}
}
