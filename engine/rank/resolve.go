package rank

import (
	"math"
	"slices"
	"strings"

	"github.com/capdex/capdex/registry"
)

// Reason codes returned by Resolve.
const (
	ReasonNoMatch      = "no_match"
	ReasonUnavailable  = "unavailable"
	ReasonIncompatible = "incompatible"
	ReasonPolicyHidden = "policy_hidden"
)

// Resolve says how sure a search is, from the ranked candidates (Rerank's order, before or
// after Diversify), the query's signals and the thresholds:
//
//   - no candidates: no_confident_match, reason no_match (policy_hidden instead when
//     s.PolicyHidden);
//   - an exact-id hit at the top (the exact retriever's rank 1) that is usable: confident;
//   - ids written in the query (s.IDs) that no candidate is an exact hit for: those
//     capabilities are not visible to the caller, and their neighbours are not what was
//     asked for: no_confident_match;
//   - the lexical retriever's best hit a pack in which nothing is visible to the caller
//     (s.EmptyAreaFirst), outside a browse: no_confident_match — what the request names
//     cannot serve this caller, and a neighbour from another area is not what it asked;
//   - the top score below t.Floor: no_confident_match, reason no_match;
//   - no usable candidate among those above the floor: no_confident_match with reason
//     incompatible (when the top one is incompatible) or unavailable (a candidate only
//     missing credentials counts as usable: it is the right match, and its availability
//     tells the caller what to supply);
//   - otherwise, with the best usable candidate b and the next usable one:
//     b's Coverage below t.MinCoverage (outside a browse): no_confident_match, reason
//     no_match — the best candidate speaks to too little of the request (with a model:
//     Coverage 0, or the model's Found probability under its NoMatchBelow);
//     a browse: ambiguous — the user is choosing among capabilities; with a model, a vague
//     request without scope (s.Vague) whose best candidate speaks to some of its words
//     (Coverage above 0) is ambiguous too, before the model's no-match (seed 000 §17: a
//     vague goal is answered by asking, not refused), and so is one whose best candidate
//     is a pack that declares an intent of the request and holds a usable child that
//     does it (packServing: the request is about this area; which child is the question);
//     b a pack that declares an intent of the request while nothing usable inside it
//     declares one (s.Serves, else the candidates: packCannotServe): no_confident_match
//     (what would serve it is hidden from or unusable by the caller);
//     b a pack (a task answered by an area, not a capability), or a vague request
//     (s.Vague, no scope): ambiguous;
//     b.Score ≥ t.Confident and b.Score − next ≥ t.Margin: confident;
//     else ambiguous.
//
// For ambiguous answers, missing names what would tell the closest candidates apart: the
// tools (entities) they differ by, read only versus change (side effects), the actions
// (primary intents), or else their titles; in Chinese when s.Lang is "zh".
func Resolve(cands []Candidate, s Signals, t Thresholds) (res registry.Resolution, reason string, missing []string) {
	return resolve(cands, s, t, nil)
}

// ResolveConfidence returns Resolve's answer and Confidence's, reading the model once
// where Resolve already did.
func ResolveConfidence(cands []Candidate, s Signals, t Thresholds) (res registry.Resolution, reason string, missing []string, conf float64) {
	conf = -1
	res, reason, missing = resolve(cands, s, t, &conf)
	if conf < 0 {
		conf = Confidence(cands, s, t)
	}
	return res, reason, missing, conf
}

// resolve is Resolve; when it reads the model for a candidate Features accepts, it stores the
// top answer's probability (what Confidence returns) in *conf, when conf is not nil.
func resolve(cands []Candidate, s Signals, t Thresholds, conf *float64) (res registry.Resolution, reason string, missing []string) {
	noMatch := ReasonNoMatch
	if s.PolicyHidden {
		noMatch = ReasonPolicyHidden
	}
	if len(cands) == 0 {
		return registry.NoConfidentMatch, noMatch, nil
	}
	settle(cands, 1)
	top := &cands[0]
	if top.ExactHit() && Usable(top.Availability) {
		return registry.Confident, "", nil
	}
	if idsMissed(cands, s) || s.EmptyAreaFirst && !s.Browse {
		return registry.NoConfidentMatch, noMatch, nil
	}
	floor := t.Floor
	if t.Model != nil {
		floor = math.Inf(-1) // the model reads the scores itself
	}
	if top.Score < floor && !top.ExactHit() {
		return registry.NoConfidentMatch, noMatch, nil
	}
	b, next := -1, -1
	for i := range cands {
		settle(cands, i+1) // a pending ranking (RerankOptions.Prune) is read no further
		if cands[i].Score < floor && !(i == 0 && top.ExactHit()) {
			break
		}
		if !Usable(cands[i].Availability) {
			continue
		}
		if b < 0 {
			b = i
		} else if next < 0 {
			next = i
			break
		}
	}
	if b < 0 {
		reason = ReasonUnavailable
		if top.Availability == registry.Incompatible {
			reason = ReasonIncompatible
		}
		return registry.NoConfidentMatch, reason, nil
	}
	second := 0.0
	if next >= 0 {
		second = cands[next].Score
	}
	best := &cands[b]
	if t.Model != nil {
		f, ok := Features(cands, s)
		d, pc := t.Model.Decide(f)
		if conf != nil && ok {
			*conf = pc
		}
		serves, cannot := packServing(cands, best, s)
		switch {
		case s.Browse || s.Vague && s.Scope == "" && f[fCoverage] > 0 || serves:
			return registry.Ambiguous, "", missingInfo(cands, b, t, s)
		case d == registry.NoConfidentMatch:
			// the Found probability is low, or the best candidate speaks to none of the
			// request's words (docs/calibration.md, "No words met")
			return registry.NoConfidentMatch, noMatch, nil
		case cannot:
			return registry.NoConfidentMatch, noMatch, nil
		case best.Cap.ResourceType == registry.TypePack || s.Vague && s.Scope == "":
			return registry.Ambiguous, "", missingInfo(cands, b, t, s)
		case d == registry.Confident:
			return registry.Confident, "", nil
		}
		return registry.Ambiguous, "", missingInfo(cands, b, t, s)
	}
	switch {
	case !s.Browse && best.Coverage < t.MinCoverage:
		return registry.NoConfidentMatch, noMatch, nil
	case s.Browse:
		return registry.Ambiguous, "", missingInfo(cands, b, t, s)
	case best.Cap.ResourceType == registry.TypePack && packCannotServe(cands, best, s):
		return registry.NoConfidentMatch, noMatch, nil
	case best.Cap.ResourceType == registry.TypePack || s.Vague && s.Scope == "":
		return registry.Ambiguous, "", missingInfo(cands, b, t, s)
	case best.Score >= t.Confident && best.Score-second >= t.Margin:
		return registry.Confident, "", nil
	}
	return registry.Ambiguous, "", missingInfo(cands, b, t, s)
}

// packCannotServe reports whether pack p, the best candidate, declares what the request
// asks (one of s.Intents) while nothing usable inside it does: the area is named for the
// request, but nothing in it the caller may use serves it (its child that does is hidden or
// unusable for the caller). With s.Serves the whole subtree is asked; without it, the
// candidates inside the pack.
func packCannotServe(cands []Candidate, p *Candidate, s Signals) bool {
	if len(s.Intents) == 0 || !slices.ContainsFunc(p.Cap.Intents, func(v string) bool { return slices.Contains(s.Intents, v) }) {
		return false
	}
	if s.Serves != nil {
		return !s.Serves(p.Cap.ID, s.Intents)
	}
	prefix := p.Cap.ID + "."
	settle(cands, len(cands))
	for i := range cands {
		c := &cands[i]
		if Usable(c.Availability) && strings.HasPrefix(c.Cap.ID, prefix) &&
			slices.ContainsFunc(c.Cap.Intents, func(v string) bool { return slices.Contains(s.Intents, v) }) {
			return false
		}
	}
	return true
}

// packServing tells, for a best candidate p that is a pack declaring what the request asks
// (one of s.Intents), whether something usable inside it does too (serves) or nothing does
// (cannot: packCannotServe); both are false for anything else. A pack that serves is asked
// about even where the model finds no match: the request is about this area, which can
// serve it, and what is missing is which of its children ("something is off with my dev
// environment, can you sort it out": the maintenance pack, which diagnoses).
func packServing(cands []Candidate, p *Candidate, s Signals) (serves, cannot bool) {
	if p.Cap.ResourceType != registry.TypePack || len(s.Intents) == 0 ||
		!slices.ContainsFunc(p.Cap.Intents, func(v string) bool { return slices.Contains(s.Intents, v) }) {
		return false, false
	}
	cannot = packCannotServe(cands, p, s)
	return !cannot, cannot
}

// idsMissed reports whether the query wrote ids (outside a browse) and no candidate is an
// exact hit: the capabilities named are hidden from the caller.
func idsMissed(cands []Candidate, s Signals) bool {
	if len(s.IDs) == 0 || s.Browse {
		return false
	}
	for i := range cands {
		if cands[i].best(Exact) > 0 {
			return false
		}
	}
	return true
}

func label(lang, en, zh string) string {
	if lang == "zh" {
		return zh
	}
	return en
}

// missingInfo compares the best usable candidate with the usable ones close to it (within
// t.Margin, at most four in all); a best candidate with no close rival asks for detail.
func missingInfo(cands []Candidate, b int, t Thresholds, s Signals) []string {
	var groupBuf [4]*Candidate
	group := append(groupBuf[:0], &cands[b])
	near := t.Margin
	if t.Model != nil {
		near = 0.1 * math.Abs(cands[b].Score) // the model has no margin: a tenth of the best score
	}
	for i := b + 1; i < len(cands) && len(group) < len(groupBuf); i++ {
		settle(cands, i+1)
		c := &cands[i]
		if !Usable(c.Availability) {
			continue
		}
		if cands[b].Score-c.Score > near {
			break
		}
		group = append(group, c)
	}
	if group[0].Cap.ResourceType == registry.TypePack {
		// The user must pick inside the pack: its children, in rank order.
		settle(cands, len(cands))
		var kids []string
		for i := range cands {
			c := cands[i].Cap
			if registry.Parent(c.ID) == group[0].Cap.ID && len(kids) < 4 {
				kids = append(kids, registry.Leaf(c.ID))
			}
		}
		if len(kids) >= 2 {
			return []string{question(s.Lang, "which capability in "+group[0].Cap.ID, group[0].Cap.ID+" 中的哪个能力", kids)}
		}
		return []string{label(s.Lang, "which capability in "+group[0].Cap.ID+"?", group[0].Cap.ID+" 中的哪个能力？")}
	}
	if len(group) < 2 {
		return []string{label(s.Lang, "more detail: is "+title(group[0].Cap)+" what you want?", "更多细节：是否需要「"+title(group[0].Cap)+"」？")}
	}
	var out []string
	var ents []string
	for _, c := range group {
		if e := distinct(c.Cap.Entities, group, func(x *registry.Capability) []string { return x.Entities }); e != "" && !contains(ents, e) {
			ents = append(ents, e)
		}
	}
	if len(ents) >= 2 {
		out = append(out, question(s.Lang, "which tool", "哪个工具", ents))
	}
	read, write := false, false
	for _, c := range group {
		if c.Cap.ResourceType != registry.TypeAction {
			continue
		}
		if c.Cap.SideEffect == registry.SideEffectRead {
			read = true
		} else {
			write = true
		}
	}
	if read && write {
		out = append(out, label(s.Lang, "read only or change?", "只读查看还是修改？"))
	}
	var acts []string
	for _, c := range group {
		if len(c.Cap.Intents) > 0 && !contains(acts, c.Cap.Intents[0]) {
			acts = append(acts, c.Cap.Intents[0])
		}
	}
	if len(acts) >= 2 {
		out = append(out, question(s.Lang, "which action", "哪个操作", acts))
	}
	if len(out) == 0 {
		titles := make([]string, 0, len(group))
		for _, c := range group {
			titles = append(titles, title(c.Cap))
		}
		out = append(out, question(s.Lang, "which one", "哪一个", titles))
	}
	return out
}

// distinct returns the first of vals that some other group member lacks.
func distinct(vals []string, group []*Candidate, field func(*registry.Capability) []string) string {
	for _, v := range vals {
		for _, o := range group {
			if !containsFold(field(o.Cap), v) {
				return v
			}
		}
	}
	return ""
}

func title(c *registry.Capability) string {
	if c.Title != "" {
		return c.Title
	}
	return c.ID
}

// question renders "which tool: a, b or c?" / "哪个工具：a、b 还是 c？".
func question(lang, en, zh string, opts []string) string {
	var sb strings.Builder
	if lang == "zh" {
		sb.WriteString(zh)
		sb.WriteString("：")
		for i, o := range opts {
			switch {
			case i == 0:
			case i == len(opts)-1:
				sb.WriteString(" 还是 ")
			default:
				sb.WriteString("、")
			}
			sb.WriteString(o)
		}
		sb.WriteString("？")
		return sb.String()
	}
	sb.WriteString(en)
	sb.WriteString(": ")
	for i, o := range opts {
		switch {
		case i == 0:
		case i == len(opts)-1:
			sb.WriteString(" or ")
		default:
			sb.WriteString(", ")
		}
		sb.WriteString(o)
	}
	sb.WriteString("?")
	return sb.String()
}

// PackQuestion asks which of a pack's sub-packs the user means: "which area of
// maintenance: codex, python or npm?" / "maintenance 中的哪一类：codex、python 还是 npm？".
func PackQuestion(lang, pack string, kids []string) string {
	return question(lang, "which area of "+pack, pack+" 中的哪一类", kids)
}
