package registry

import "encoding/json"

// SearchRequest is the input of capability_search (docs/ARCHITECTURE.md "Protocol").
type SearchRequest struct {
	Query string `json:"query"`
	// Within limits the search to a pack and its subtree.
	Within string `json:"within,omitempty"`
	// Types limits resource types (pack, action, recipe); empty means all.
	Types []ResourceType `json:"types,omitempty"`
	// SideEffectMax drops capabilities with a stronger side effect.
	SideEffectMax SideEffect `json:"side_effect_max,omitempty"`
	// Limit is 1..10; 0 means the default 5.
	Limit int `json:"limit,omitempty"`
	// Match is an optional structured match for orchestrators that hold an ontology.
	Match *StructuredMatch `json:"match,omitempty"`
	// Explain adds each match's evidence per retriever.
	Explain bool `json:"explain,omitempty"`
}

// StructuredMatch is the optional structured part of a search request (seed 003 §4-§5,
// docs/matching.md). NextStep, CapabilityTypes, Domain and Scenario are hard filters, in
// that order; Intents and RiskSignals rank.
type StructuredMatch struct {
	// NextStep names the orchestrator's next step ("run_rule"); it selects capability
	// types by the table of engine/query (NextSteps).
	NextStep        string   `json:"next_step,omitempty"`
	Domain          string   `json:"domain,omitempty"`
	Scenario        string   `json:"scenario,omitempty"`
	Intents         []string `json:"intents,omitempty"`
	RiskSignals     []string `json:"risk_signals,omitempty"`
	CapabilityTypes []string `json:"capability_types,omitempty"`
}

// DefaultLimit and MaxLimit bound SearchRequest.Limit.
const (
	DefaultLimit = 5
	MaxLimit     = 10
)

// Resolution says how sure a search is.
type Resolution string

// Resolutions.
const (
	Confident        Resolution = "confident"
	Ambiguous        Resolution = "ambiguous"
	NoConfidentMatch Resolution = "no_confident_match"
)

// PlanReason is one planned retriever and why the planner chose it.
type PlanReason struct {
	Retriever string `json:"retriever"`
	Reason    string `json:"reason"`
}

// DeprecatedWarning is the warning a deprecated capability carries in search matches and
// describe (seed 003: deprecated capabilities are shown with a warning, behind active ones).
func DeprecatedWarning(c *Capability, lang string) []string {
	if c.Status != StatusDeprecated {
		return nil
	}
	if lang == "zh" {
		return []string{"已弃用：" + c.ID + " 不再维护，优先选用仍在维护的能力"}
	}
	return []string{"deprecated: " + c.ID + " is no longer maintained; prefer an active capability"}
}

// Route decisions (seed 004): what the caller should do with a search's answer.
const (
	DecisionConfident    = "confident"
	DecisionClarify      = "clarify"
	DecisionNoMatch      = "no_match"
	DecisionUnavailable  = "unavailable"
	DecisionIncompatible = "incompatible"
	DecisionPolicyHidden = "policy_hidden"
)

// Fallback steps (seed 004's order).
const (
	FallbackObserve  = "observe"   // run a read-only capability to gather the missing facts
	FallbackAsk      = "ask"       // ask the user the question missing_information names
	FallbackReadOnly = "read_only" // fall back to a more general, read-only capability (a pack to browse)
	FallbackHandOff  = "hand_off"  // hand over to a person or a specialised agent
	FallbackRefuse   = "refuse"    // say plainly that nothing fits rather than pick at random
)

// FallbackStep is one step of SearchResponse.Fallback; ResourceID names the capability
// the step uses, when it uses one.
type FallbackStep struct {
	Step       string `json:"step"`
	ResourceID string `json:"resource_id,omitempty"`
}

// Fallbacks returns the fallback steps of a response with its decision, matches and
// missing information set: none for a confident answer; for a question, the first usable
// read-only action shown (observe), the question (ask) and the parent pack of the first
// match (read_only), then hand off and refuse; otherwise hand off and refuse.
func Fallbacks(r *SearchResponse) []FallbackStep {
	switch r.Decision {
	case DecisionConfident, "":
		return nil
	case DecisionClarify:
		var out []FallbackStep
		for _, m := range r.Matches {
			if m.ResourceType == TypeAction && m.SideEffect == SideEffectRead && m.Availability == Available {
				out = append(out, FallbackStep{Step: FallbackObserve, ResourceID: m.ResourceID})
				break
			}
		}
		if len(r.MissingInformation) > 0 {
			out = append(out, FallbackStep{Step: FallbackAsk})
		}
		if len(r.Matches) > 0 {
			if p := Parent(r.Matches[0].ResourceID); p != "" {
				out = append(out, FallbackStep{Step: FallbackReadOnly, ResourceID: p})
			} else if r.Matches[0].ResourceType == TypePack {
				out = append(out, FallbackStep{Step: FallbackReadOnly, ResourceID: r.Matches[0].ResourceID})
			}
		}
		return append(out, FallbackStep{Step: FallbackHandOff}, FallbackStep{Step: FallbackRefuse})
	}
	return []FallbackStep{{Step: FallbackHandOff}, {Step: FallbackRefuse}}
}

// Decide maps a resolution and its reason code to the route decision: confident stays
// confident, ambiguous is clarify (ask the one question missing_information names), and
// no_confident_match is its reason (no_match when none is given).
func Decide(res Resolution, reason string) string {
	switch res {
	case Confident:
		return DecisionConfident
	case Ambiguous:
		return DecisionClarify
	}
	switch reason {
	case DecisionUnavailable, DecisionIncompatible, DecisionPolicyHidden:
		return reason
	}
	return DecisionNoMatch
}

// Availability says whether a candidate can be used by this caller now.
type Availability string

// Availabilities.
const (
	Available          Availability = "available"
	NeedsConfirmation  Availability = "needs_confirmation"
	MissingCredentials Availability = "missing_credentials"
	Unavailable        Availability = "unavailable"
	Incompatible       Availability = "incompatible"
	// Forbidden: the caller may discover the capability but not run it.
	Forbidden Availability = "forbidden"
)

// SearchResponse is the output of capability_search. It never carries schemas.
type SearchResponse struct {
	Query      string     `json:"query"`
	Scope      string     `json:"scope"`
	Resolution Resolution `json:"resolution"`
	// Reason is a code such as no_match, unavailable, incompatible, policy_hidden.
	Reason string `json:"reason,omitempty"`
	// ReasonDetail says, when a hard filter of the request's match left no capability the
	// caller may discover, which filter it was ("match.domain \"hr\": ...").
	ReasonDetail string `json:"reason_detail,omitempty"`
	// Confidence (0..1) is the calibrated probability that the first match is the one
	// wanted (see docs/calibration.md).
	Confidence float64 `json:"confidence"`
	// Decision is the route decision of seed 004: confident, clarify, no_match,
	// unavailable, incompatible or policy_hidden (see Decide).
	Decision string `json:"decision"`
	// Fallback lists, when the decision is not confident, what the caller may do next, in
	// seed 004's order: observe cheaply, ask the one separating question, fall back to a
	// general read-only capability, hand off, refuse.
	Fallback           []FallbackStep `json:"fallback,omitempty"`
	MissingInformation []string       `json:"missing_information,omitempty"`
	Matches            []Match        `json:"matches"`
	SearchMeta         SearchMeta     `json:"search_meta"`
}

// Match is one returned capability summary.
type Match struct {
	Rank                 int          `json:"rank"`
	ResourceType         ResourceType `json:"resource_type"`
	ResourceID           string       `json:"resource_id"`
	Title                string       `json:"title"`
	Summary              string       `json:"summary"`
	MatchedEntities      []string     `json:"matched_entities"`
	MatchedIntents       []string     `json:"matched_intents"`
	MatchedSymptoms      []string     `json:"matched_symptoms"`
	SideEffect           SideEffect   `json:"side_effect,omitempty"`
	RiskLevel            RiskLevel    `json:"risk_level,omitempty"`
	RequiresConfirmation bool         `json:"requires_confirmation"`
	Availability         Availability `json:"availability"`
	// AvailabilityReasons say why a match is unavailable ("unavailable: health is down:
	// upstream MCP server calc is down: ..."); empty otherwise.
	AvailabilityReasons []string `json:"availability_reasons,omitempty"`
	Score               float64  `json:"score"`
	NextStep            NextStep `json:"next_step"`
	// Warnings tell the caller what to know before using it ("deprecated: ...").
	Warnings []string `json:"warnings,omitempty"`
	// Explain is present when the request asked for it.
	Explain *Explanation `json:"explain,omitempty"`
}

// NextStep tells the model which meta-tool to call next.
type NextStep struct {
	Tool      string            `json:"tool"`
	Arguments map[string]string `json:"arguments"`
}

// Explanation is a match's evidence per retriever and its score breakdown.
type Explanation struct {
	Evidence []EvidenceItem   `json:"evidence"`
	Score    []ScoreComponent `json:"score_breakdown"`
	Extra    json.RawMessage  `json:"extra,omitempty"`
}

// EvidenceItem is what one retriever said about one candidate.
type EvidenceItem struct {
	Retriever string   `json:"retriever"`
	Rank      int      `json:"rank"`
	RawScore  float64  `json:"raw_score"`
	Matched   []string `json:"matched_fields,omitempty"`
}

// ScoreComponent is one named addend of a final score.
type ScoreComponent struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// SearchMeta describes how a search ran.
type SearchMeta struct {
	PlannedRetrievers []string `json:"planned_retrievers"`
	// PlanReasons says why each planned retriever ran (seed 000 §10).
	PlanReasons         []PlanReason `json:"plan_reasons,omitempty"`
	CompletedRetrievers []string     `json:"completed_retrievers"`
	TimedOutRetrievers  []string     `json:"timed_out_retrievers"`
	// PendingRetrievers are still running when a streamed partial answer is sent (empty in
	// a final answer, where a retriever that never answered counts as timed out).
	PendingRetrievers []string `json:"pending_retrievers,omitempty"`
	FailedRetrievers  []string `json:"failed_retrievers,omitempty"`
	CandidateCount    int      `json:"candidate_count"`
	ReturnedCount     int      `json:"returned_count"`
	Partial           bool     `json:"partial"`
	TookUS            int64    `json:"took_us"`
	Generation        uint64   `json:"generation,omitempty"`
}
