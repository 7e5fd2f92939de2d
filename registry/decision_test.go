package registry

import (
	"slices"
	"testing"
)

func TestDecide(t *testing.T) {
	for _, tt := range []struct {
		res    Resolution
		reason string
		want   string
	}{
		{Confident, "", DecisionConfident},
		{Ambiguous, "", DecisionClarify},
		{NoConfidentMatch, "", DecisionNoMatch},
		{NoConfidentMatch, "no_match", DecisionNoMatch},
		{NoConfidentMatch, "unavailable", DecisionUnavailable},
		{NoConfidentMatch, "incompatible", DecisionIncompatible},
		{NoConfidentMatch, "policy_hidden", DecisionPolicyHidden},
	} {
		if got := Decide(tt.res, tt.reason); got != tt.want {
			t.Errorf("Decide(%s, %q) = %s, want %s", tt.res, tt.reason, got, tt.want)
		}
	}
}

// TestFallbacks: seed 004's order, each step only where it applies.
func TestFallbacks(t *testing.T) {
	steps := func(fs []FallbackStep) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Step+":"+f.ResourceID)
		}
		return out
	}
	clarify := &SearchResponse{Decision: DecisionClarify, MissingInformation: []string{"which one?"}, Matches: []Match{
		{ResourceID: "m.c.update", ResourceType: TypeAction, SideEffect: SideEffectWriteLocal, Availability: Available},
		{ResourceID: "m.c.status", ResourceType: TypeAction, SideEffect: SideEffectRead, Availability: Forbidden},
		{ResourceID: "m.c.diagnose", ResourceType: TypeAction, SideEffect: SideEffectRead, Availability: Available},
	}}
	if got, want := steps(Fallbacks(clarify)), []string{"observe:m.c.diagnose", "ask:", "read_only:m.c", "hand_off:", "refuse:"}; !slices.Equal(got, want) {
		t.Errorf("clarify: %v, want %v", got, want)
	}
	if got := Fallbacks(&SearchResponse{Decision: DecisionConfident}); got != nil {
		t.Errorf("confident: %v", got)
	}
	if got, want := steps(Fallbacks(&SearchResponse{Decision: DecisionNoMatch})), []string{"hand_off:", "refuse:"}; !slices.Equal(got, want) {
		t.Errorf("no match: %v", got)
	}
}
