package query

import (
	"context"
	"slices"

	"github.com/capdex/capdex/index/text"
)

// Parsed is a normalised query. All values are folded (lowercase); lists hold each value
// once, in order of first appearance.
type Parsed struct {
	// Raw is the input, truncated to MaxQueryBytes and with invalid UTF-8 repaired.
	Raw string `json:"raw"`
	// Text is Raw with control characters removed and white space collapsed.
	Text string `json:"text"`
	// Lang is "zh", "en" or "mixed".
	Lang string `json:"lang"`
	// Terms are text.Analyze(Text).
	Terms []string `json:"terms,omitempty"`
	// Concepts are the concept names of the shared lexicon named in Text.
	Concepts []string `json:"concepts,omitempty"`
	// Intents are what the user wants done: concept names of the verbs present (not
	// forbidden, not past events), expanded with every registry intent value sharing their
	// concept, plus registry intent values written as such.
	Intents []string `json:"intents,omitempty"`
	// Entities are registry entity values named in the text.
	Entities []string `json:"entities,omitempty"`
	// Symptoms are registry symptom values named in the text (as words or via aliases).
	Symptoms []string `json:"symptoms,omitempty"`
	// Events are the verbs the user tells as what already happened ("刚更新了 Codex",
	// "after updating", "已删除"): the request's context, never its intent.
	Events []string `json:"events,omitempty"`
	// Constraints: read_first, dry_run, read_only, confirm_first, no_network, and
	// no_<concept> for each forbidden verb ("no_restart", "no_update").
	Constraints []string `json:"constraints,omitempty"`
	// Forbidden lists intents the user forbade, with their close relatives and the
	// registry intent values sharing their concepts (reinstall ⇒ reinstall, update,
	// install; update ⇒ update, upgrade).
	Forbidden []string `json:"forbidden,omitempty"`
	// IDs are explicit capability ids or tool names written in the text, as registry ids
	// (a pin is kept: "maintenance.codex.diagnose@3").
	IDs []string `json:"ids,omitempty"`
	// Browse: the user asks what exists ("Codex 维护相关能力有哪些？").
	Browse bool `json:"browse,omitempty"`
	// Scope is a pack id implied by a browse request or by "within …".
	Scope string `json:"scope,omitempty"`
	// Outcome is the desired result, as written ("so that it uses the new version").
	Outcome string `json:"outcome,omitempty"`
	// HowTo: the user asks how to do something or for the steps ("how do I fix …",
	// "给我排查步骤"): a guide (recipe) answers it better than an action.
	HowTo bool `json:"how_to,omitempty"`
	// Vague: the request says what to do but not to what ("I want to cancel it",
	// "查一下状态"): no entity, symptom, id or scope, and at most one content word besides
	// its verbs, pronouns, time words and cue words.
	Vague bool `json:"vague,omitempty"`
	// ExplicitWrite: the user explicitly asks for a write ("帮我删除这个日程",
	// "book the flight").
	ExplicitWrite bool `json:"explicit_write,omitempty"`
	// Normalizer names who produced the fields: "rules" or "llm".
	Normalizer string `json:"normalizer,omitempty"`
	// Notes record what the normaliser did not do as asked (for example
	// "llm fallback: timeout", "truncated to 4096 bytes").
	Notes []string `json:"notes,omitempty"`

	// derived holds what the ranking takes from Text, Terms and Concepts (PhraseKey,
	// SignalTerms) when the rules computed it in the scan that gave them.
	derived derived
}

// derived is what the rules derive for the ranking from a parse's Text, Terms and
// Concepts. It holds for a parse as long as those are the values it was derived from: a
// normaliser may replace them.
type derived struct {
	text            string
	terms, concepts []string
	phrase          string   // rank.PhraseKey(text)
	signal          []string // SignalTerms of terms and concepts
	conceptIDs      []int32  // the concept ids of text (see ConceptIDs); nil when not derived
	idsBuf          [6]int32 // holds conceptIDs when they fit: no allocation of their own
}

// Normalizer turns a search text into a Parsed query. Implementations must be safe for
// concurrent use; lex may be nil (the shared concept lexicon only).
type Normalizer interface {
	Normalize(ctx context.Context, text string, lex *Lexicon) (*Parsed, error)
}

// PhraseKey returns rank.PhraseKey(p.Text) as the rules computed it while scanning the
// text, and false when p holds none (a parse another normaliser built, or whose Text was
// replaced since).
func (p *Parsed) PhraseKey() (string, bool) {
	d := &p.derived
	return d.phrase, d.phrase != "" && d.text == p.Text
}

// ConceptIDs returns the ids (text.ConceptID) of the shared lexicon's concepts named in
// p.Text, each once in order of first appearance: what text.AppendConceptIDs finds in the
// text with its repeats removed, as the lexical retriever would find them itself. The
// rules take them from their scan; ok is false when p holds none (a parse another
// normaliser built, or whose Text or Terms were replaced since). When ok, the slice is
// not nil (empty for a text naming no concept) and p.Terms is the analysis of p.Text (nil
// for none). The slice is shared: the caller must not modify it.
func (p *Parsed) ConceptIDs() ([]int32, bool) {
	d := &p.derived
	if d.conceptIDs == nil || d.text != p.Text || !same(d.terms, p.Terms) {
		return nil, false
	}
	return d.conceptIDs, true
}

// SignalTerms returns the sorted, unique terms rank compares with when_to_use and
// when_not_to_use entries: the analysed Terms plus "~"-prefixed concept names. It matches
// FieldTerms, which the engine passes to rank.NewTermCache. For a parse of the rules it
// is computed once, from their scan, and shared: the caller must not modify it.
func (p *Parsed) SignalTerms() []string {
	if d := &p.derived; d.phrase != "" && same(d.terms, p.Terms) && same(d.concepts, p.Concepts) {
		return d.signal
	}
	out := make([]string, 0, len(p.Terms)+len(p.Concepts))
	out = append(out, p.Terms...)
	for _, c := range p.Concepts {
		out = append(out, "~"+c)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// FieldTerms analyses a capability's text the way SignalTerms renders a query: the terms
// of text.Analyze plus "~"-prefixed concept names.
func FieldTerms(s string) []string {
	out := text.Analyze(s)
	for _, c := range text.ConceptsIn(s) {
		out = append(out, "~"+c)
	}
	return out
}

// same reports whether a and b are the same list (one array, one length).
func same(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// addUnique appends v to list unless it is empty or present.
func addUnique(list []string, v ...string) []string {
	for _, x := range v {
		if x != "" && !slices.Contains(list, x) {
			list = append(list, x)
		}
	}
	return list
}
