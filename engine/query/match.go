package query

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/capdex/capdex/registry"
)

// NextStep is one value of a structured match's next_step and the capability types it
// selects (seed 003 §5, step 1: next_step decides the class of capability).
type NextStep struct {
	Step  string
	Types []string
}

// NextSteps is the one table mapping next_step values to capability types
// (registry.CapabilityTypes); docs/matching.md lists it. Each type has one step named
// after what the orchestrator does next ("run_rule" as in seed 003 §4); two broader steps
// select a family.
var NextSteps = []NextStep{
	{"run_rule", []string{"rule"}},
	{"run_skill", []string{"skill"}},
	{"call_mcp", []string{"mcp"}},
	{"run_task", []string{"task"}},
	{"query_database", []string{"database_query"}},
	{"search_knowledge", []string{"knowledge_search"}},
	{"generate_report", []string{"report_generator"}},
	{"notify", []string{"notification"}},
	{"use_tool", []string{"tool"}},
	{"call_model", []string{"model"}},
	{"delegate_agent", []string{"agent"}},
	{"start_workflow", []string{"workflow"}},
	// families
	{"retrieve", []string{"knowledge_search", "database_query"}},
	{"call_service", []string{"mcp", "tool"}},
}

// NextStepTypes returns the capability types next_step value step selects, and false for
// a value NextSteps does not hold.
func NextStepTypes(step string) ([]string, bool) {
	for _, s := range NextSteps {
		if s.Step == step {
			return s.Types, true
		}
	}
	return nil, false
}

func nextStepNames() string {
	names := make([]string, len(NextSteps))
	for i, s := range NextSteps {
		names[i] = s.Step
	}
	return strings.Join(names, ", ")
}

// Limits of a structured match.
const (
	// MaxMatchValues bounds each list of a structured match.
	MaxMatchValues = 16
	// MaxMatchValueBytes bounds each value of a structured match.
	MaxMatchValueBytes = 64
)

// Capability fields a Filter reads.
const (
	FieldCapabilityType = "capability_type"
	FieldDomain         = "domain"
	FieldScenarios      = "scenarios"
)

// Filter is one hard filter of a structured match: a capability passes when its field
// (one of the Field* constants) holds one of Values, compared folded (FoldMatchValue). A
// capability without the field passes no filter on it, packs included.
type Filter struct {
	// Name is the request field the filter comes from ("match.domain"), for errors and
	// for the reason of an answer the filter emptied.
	Name string
	// Field is the capability field compared.
	Field string
	// Values are the accepted values, folded.
	Values []string
}

// Admits reports whether c passes the filter.
func (f *Filter) Admits(c *registry.Capability) bool {
	switch f.Field {
	case FieldCapabilityType:
		return slices.Contains(f.Values, FoldMatchValue(c.CapabilityType))
	case FieldDomain:
		return slices.Contains(f.Values, FoldMatchValue(c.Domain))
	case FieldScenarios:
		for _, s := range c.Scenarios {
			if slices.Contains(f.Values, FoldMatchValue(s)) {
				return true
			}
		}
	}
	return false
}

// Key names the filter's field and values, for caching its result.
func (f *Filter) Key() string { return f.Field + "=" + strings.Join(f.Values, "\x00") }

// Describe says what the filter asks for ("match.domain \"finance\"").
func (f *Filter) Describe() string {
	if len(f.Values) == 1 {
		return fmt.Sprintf("%s %q", f.Name, f.Values[0])
	}
	return fmt.Sprintf("%s %q", f.Name, f.Values)
}

// Match is a search request's structured match, checked and folded (ParseMatch).
type Match struct {
	// Filters are the hard filters, in seed 003 §5's priority order: next_step (its
	// capability types), capability_types, domain, scenario.
	Filters []Filter
	// Intents (seed 003 §5 step 5) and RiskSignals (step 4) are ranking signals:
	// intents meet a capability's intents, risk signals its symptoms (the rules that
	// detect them declare them there) and its risk words.
	Intents, RiskSignals []string
}

// FoldMatchValue folds a structured value for comparison: lowercase, surrounding space
// trimmed, inner spaces and hyphens as underscores ("Invoice Validation" and
// "invoice-validation" are invoice_validation).
func FoldMatchValue(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, s)
}

// ParseMatch checks a structured match and returns it folded; nil for nil. An error
// names the field and, for next_step and capability_types, the allowed values.
func ParseMatch(m *registry.StructuredMatch) (*Match, error) {
	if m == nil {
		return nil, nil
	}
	out := &Match{}
	if m.NextStep != "" {
		step := FoldMatchValue(m.NextStep)
		types, ok := NextStepTypes(step)
		if !ok {
			return nil, fmt.Errorf("match.next_step: unknown value %q (want one of: %s)", m.NextStep, nextStepNames())
		}
		out.Filters = append(out.Filters, Filter{Name: "match.next_step", Field: FieldCapabilityType, Values: types})
	}
	if len(m.CapabilityTypes) > 0 {
		types, err := values("match.capability_types", m.CapabilityTypes)
		if err != nil {
			return nil, err
		}
		for i, t := range types {
			if !slices.Contains(registry.CapabilityTypes, t) {
				return nil, fmt.Errorf("match.capability_types[%d]: unknown capability type %q (want one of: %s)", i, m.CapabilityTypes[i], strings.Join(registry.CapabilityTypes, ", "))
			}
		}
		out.Filters = append(out.Filters, Filter{Name: "match.capability_types", Field: FieldCapabilityType, Values: types})
	}
	if m.Domain != "" {
		v, err := value("match.domain", m.Domain)
		if err != nil {
			return nil, err
		}
		out.Filters = append(out.Filters, Filter{Name: "match.domain", Field: FieldDomain, Values: []string{v}})
	}
	if m.Scenario != "" {
		v, err := value("match.scenario", m.Scenario)
		if err != nil {
			return nil, err
		}
		out.Filters = append(out.Filters, Filter{Name: "match.scenario", Field: FieldScenarios, Values: []string{v}})
	}
	var err error
	if out.Intents, err = values("match.intents", m.Intents); err != nil {
		return nil, err
	}
	if out.RiskSignals, err = values("match.risk_signals", m.RiskSignals); err != nil {
		return nil, err
	}
	return out, nil
}

// values checks and folds the values of a list field.
func values(field string, in []string) ([]string, error) {
	if len(in) > MaxMatchValues {
		return nil, fmt.Errorf("%s: %d values, at most %d", field, len(in), MaxMatchValues)
	}
	var out []string
	for i, s := range in {
		v, err := value(fmt.Sprintf("%s[%d]", field, i), s)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// value checks and folds one value: letters, digits, '_', '-', '.', ':' and spaces, at
// most MaxMatchValueBytes, not empty.
func value(field, s string) (string, error) {
	v := FoldMatchValue(s)
	if v == "" {
		return "", fmt.Errorf("%s: empty value", field)
	}
	if len(v) > MaxMatchValueBytes {
		return "", fmt.Errorf("%s: value of %d bytes, at most %d", field, len(v), MaxMatchValueBytes)
	}
	for _, r := range v {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '.' && r != ':' {
			return "", fmt.Errorf("%s: %q holds %q (want letters, digits, '_', '-', '.', ':' or spaces)", field, s, r)
		}
	}
	return v, nil
}
