package rank

import (
	"slices"
	"strings"

	"github.com/capdex/capdex/registry"
)

// Signals is what the normalised query says, in the terms Rerank, Diversify and Resolve
// compare with a capability's fields. All strings are expected folded (lowercase).
type Signals struct {
	// Intents, Entities and Symptoms are compared with the capability's fields of the same
	// name. The query side expands intents to every registry value sharing their concept, so
	// the comparison here is plain equality.
	Intents, Entities, Symptoms []string
	// Forbidden lists intents the user forbade ("不要直接更新" → update, upgrade).
	Forbidden []string
	// Constraints such as read_first, dry_run, read_only, no_restart.
	Constraints []string
	// Terms are the analysed query terms (concept names may be added with a "~" prefix, as
	// the term function of the TermCache does). Sorted and unique is fastest; Rerank copies
	// and sorts them otherwise.
	Terms []string
	// Phrase is the query's PhraseKey, for alias phrase matches.
	Phrase string
	// Vague: the request names what to do but not what to do it to ("I want to cancel
	// it"); Resolve answers ambiguous rather than confident unless a scope narrows it.
	Vague bool
	// IDs are explicit ids or tool names written in the query.
	IDs []string
	// ExplicitWrite: the user explicitly asks for a write ("帮我删除这个日程").
	ExplicitWrite bool
	// Browse: the user asks what exists rather than for one action.
	Browse bool
	// HowTo: the user asks how to do something or for the steps, which a recipe answers.
	HowTo bool
	// Scope is a pack id the query implies or the request names; candidates under it get
	// RerankOptions.ScopeBonus.
	Scope string
	// Lang is the query's language ("zh", "en" or "mixed"); Resolve writes
	// missing_information in Chinese for "zh".
	Lang string
	// PolicyHidden tells Resolve that the caller may know that matches exist which policy
	// hides from it; only then does Resolve answer the reason policy_hidden.
	PolicyHidden bool
}

// RerankOptions holds the rerank constants. They are on the scale of the fused score: with
// K = 60 a retriever's best candidate contributes weight/61 (0.020 for lexical, 0.0066 for
// semantic with the default weights), and a candidate at half the best BM25 score gets half
// of that. A bonus of 0.01 therefore outweighs a clear lead in one retriever's scores but
// not a retriever's whole contribution. The zero value disables every adjustment; use
// DefaultRerankOptions.
type RerankOptions struct {
	// NoBreakdown makes Rerank leave Candidate.Breakdown as Fuse left it instead of adding
	// its addends (the score is the same). The zero value adds them.
	NoBreakdown bool
	// IntentBonus is added per matched intent, for at most MaxIntents matches.
	// Default 0.006 (a third of lexical's best contribution: the query's intents are
	// extracted by rules and expanded by concept, so they tip near ties rather than
	// overrule the text match), 2.
	IntentBonus float64
	MaxIntents  int
	// EntityBonus is added per matched entity, for at most MaxEntities matches.
	// Default 0.004, 3.
	EntityBonus float64
	MaxEntities int
	// SymptomBonus is added per matched symptom, for at most MaxSymptoms matches. Symptoms
	// are specific, so they weigh most. Default 0.015, 2.
	SymptomBonus float64
	MaxSymptoms  int
	// AliasBonus is added when the query holds one of the capability's aliases of two words
	// or more as a phrase (Signals.Phrase, needs Terms): an alias is a curated way of asking
	// for the capability, and "review this PR: #17" names the one aliased "review this pr".
	// Default 0.010.
	AliasBonus float64
	// WhenToUseBonus scales the best coverage (0..1) of one when_to_use entry by the query
	// terms. Default 0.010.
	WhenToUseBonus float64
	// WhenNotToUsePenalty scales the best coverage of one when_not_to_use entry, applied only
	// when that coverage reaches WhenNotToUseMin. Default 0.030, 0.5.
	WhenNotToUsePenalty float64
	WhenNotToUseMin     float64
	// ForbiddenPenalty is subtracted when a capability's intents meet Signals.Forbidden.
	// Default 0.080: larger than the sum of all retrievers' rank-1 contributions short of
	// an exact hit, so a forbidden action falls below every plausible alternative.
	ForbiddenPenalty float64
	// Availability penalties (context fit): needs_confirmation 0.002, missing_credentials
	// 0.003 (the caller can supply them), forbidden 0.012 (it may not run it at all),
	// unavailable and incompatible 0.020; available costs nothing.
	NeedsConfirmationPenalty, MissingCredentialsPenalty, ForbiddenAvailabilityPenalty, UnusablePenalty float64
	// SideEffectPenalty is charged per side-effect level (R 0 … I 3) and RiskPenalty per
	// risk level (low 0 … critical 3). Default 0.0005 each: a tie-breaker between equally
	// relevant candidates, not a reason to bury the write the user asked for.
	SideEffectPenalty, RiskPenalty float64
	// CautionFactor multiplies the risk penalty when the query asks for caution: a
	// constraint in CautionConstraints, or a forbidden intent, without an explicit write.
	// Default 8.
	CautionFactor float64
	// CautionConstraints default to read_first, dry_run, read_only.
	CautionConstraints []string
	// ReadIntents are the intents that only read; default DefaultReadIntents().
	//
	// Deprecated: Rerank no longer raises the risk penalty for queries whose intents all
	// read. Measured on the public catalogues of ../shared/eval, whose side effects are
	// inferred from tool names, it cost recall; caution now comes only from constraints and
	// forbidden intents. The field is kept for callers that still set it.
	ReadIntents []string
	// ScopeBonus is added to candidates inside Signals.Scope (the scope itself included).
	// Default 0.004.
	ScopeBonus float64
	// PackBias is added to packs when the query browses (Signals.Browse) and subtracted
	// from them otherwise. A pack's text sums up its children's, so it matches most requests
	// for one of them; it is the answer to a browse, and to a task only when no child fits
	// clearly better. Default 0.010 (about half a retriever's best contribution).
	PackBias float64
	// RecipeBias is added to recipes when the query asks how (Signals.HowTo) and
	// subtracted from them otherwise: a recipe shows the steps, an action takes them.
	// Default 0.004.
	RecipeBias float64
	// Terms supplies the analysed when_to_use, when_not_to_use and alias entries and the
	// descriptive text of each capability (Candidate.Coverage). Nil falls back to substring
	// tests of the query terms in the raw when_to_use text, gives no alias bonus and leaves
	// Coverage at 1 (unknown).
	Terms *TermCache
}

// DefaultReadIntents returns the intents that only read or look.
func DefaultReadIntents() []string {
	return []string{
		"diagnose", "inspect", "verify", "check", "list", "search", "query", "get", "show",
		"view", "read", "status", "monitor", "analyze", "explain", "find", "lookup", "browse",
		"compare", "describe", "estimate", "preview", "summarize", "report", "audit", "test",
		"explore", "navigate", "recommend", "translate", "calculate", "track", "watch",
	}
}

// DefaultRerankOptions returns the documented defaults.
func DefaultRerankOptions() RerankOptions {
	return RerankOptions{
		IntentBonus: 0.006, MaxIntents: 2,
		EntityBonus: 0.004, MaxEntities: 3,
		SymptomBonus: 0.015, MaxSymptoms: 2,
		WhenToUseBonus:      0.010,
		AliasBonus:          0.010,
		WhenNotToUsePenalty: 0.030, WhenNotToUseMin: 0.5,
		ForbiddenPenalty:         0.080,
		NeedsConfirmationPenalty: 0.002, MissingCredentialsPenalty: 0.003,
		ForbiddenAvailabilityPenalty: 0.012, UnusablePenalty: 0.020,
		SideEffectPenalty: 0.0005, RiskPenalty: 0.0005, CautionFactor: 8,
		CautionConstraints: []string{"read_first", "dry_run", "read_only"},
		ReadIntents:        DefaultReadIntents(),
		ScopeBonus:         0.004,
		PackBias:           0.010,
		RecipeBias:         0.004,
	}
}

// Breakdown component names added by Rerank.
const (
	CompIntent       = "intent"
	CompEntity       = "entity"
	CompSymptom      = "symptom"
	CompWhenToUse    = "when_to_use"
	CompAlias        = "alias"
	CompScope        = "scope"
	CompPackBias     = "pack"
	CompRecipeBias   = "recipe"
	CompAvailability = "availability"
	CompRisk         = "risk"
	CompWhenNotToUse = "when_not_to_use"
	CompForbidden    = "forbidden_intent"
)

// Rerank adds fitness to the fused relevance of every candidate and sorts cands by the new
// Score, best first. The score is
//
//	Fused
//	+ IntentBonus·min(#intents matched, MaxIntents)
//	+ EntityBonus·min(#entities matched, MaxEntities)
//	+ SymptomBonus·min(#symptoms matched, MaxSymptoms)
//	+ AliasBonus when the query holds an alias as a phrase
//	+ WhenToUseBonus·coverage(best when_to_use entry)
//	+ ScopeBonus (inside Signals.Scope)
//	± PackBias for packs: added for a browse, subtracted otherwise
//	± RecipeBias for recipes: added for a how-to question, subtracted otherwise
//	− availability penalty (context fit)
//	− risk penalty: (SideEffectPenalty·side-effect level + RiskPenalty·risk level), times
//	  CautionFactor when the query asks for caution (a caution constraint or a forbidden
//	  intent, no explicit write); zero when the user explicitly asks for a write and the
//	  capability's intents match the query's
//	− WhenNotToUsePenalty·coverage(best when_not_to_use entry) when coverage ≥ WhenNotToUseMin;
//	  an entry naming another usable candidate by id ("… (use maintenance.codex.diagnose)")
//	  counts as covered as far as the query covers that candidate's when_to_use, when it
//	  does so better than this capability's own
//	− ForbiddenPenalty when the capability's intents meet Signals.Forbidden
//
// Every non-zero addend is appended to Breakdown (penalties as negative values). Coverage
// of an entry is the share of its terms that the query holds. Fuse must have run first
// (Rerank starts from Fused and keeps Breakdown's fusion components). With
// opts.NoBreakdown nothing is appended (the score is the same). The order Rerank leaves does
// not depend on the order it is given (ties go by id), so Fuse need not sort before it
// (Weights.Unsorted).
func Rerank(cands []Candidate, s Signals, opts RerankOptions) {
	terms := s.Terms
	if !sortedUnique(terms) {
		terms = slices.Clone(terms)
		slices.Sort(terms)
		terms = slices.Compact(terms)
	}
	riskFactor := 1.0
	if !s.ExplicitWrite && opts.CautionFactor > 0 {
		caution := len(s.Forbidden) > 0 // "don't update it": the user is wary of changes
		for _, c := range s.Constraints {
			if contains(opts.CautionConstraints, c) {
				caution = true
			}
		}
		if caution {
			riskFactor = opts.CautionFactor
		}
	}
	tc := opts.Terms
	q := tc.query(terms)
	q.markValues(tc, &s)
	var pairBuf [128]uint64
	pairs := tc.wordPairs(pairBuf[:0], s.Phrase)
	// What the TermCache tells of every candidate first, reading each record once: a
	// when_not_to_use entry that names another candidate compares their when_to_use.
	docs := q.docs[:0]
	q.touch += touch(cands, tc)
	byDoc := tc != nil && tc.byID // every candidate has a record, so docIDs order ids
	wanted := [valueKinds]bool{valueIntent: len(s.Intents) > 0, valueEntity: len(s.Entities) > 0, valueSymptom: len(s.Symptoms) > 0}
	wantAny := wanted != [valueKinds]bool{}
	room := 0
	for i := range cands {
		c := &cands[i]
		m := termsFor(c, tc, q, terms, &pairs, opts.AliasBonus != 0)
		byDoc = byDoc && m.rec >= 0
		if wantAny {
			room += m.matchRoom(c, tc, wanted)
		}
		docs = append(docs, m)
	}
	// One slice for the matched values of every candidate without room of its own, so
	// Rerank allocates at most once.
	var arena []string
	if room > 0 {
		arena = make([]string, room)
	}
	for i := range cands {
		c := &cands[i]
		cp := c.Cap
		m := &docs[i]
		c.Breakdown = trimToFusion(c.Breakdown)
		sc := scorer{c: c, score: c.Fused, noBreakdown: opts.NoBreakdown}
		arena = m.setMatched(c, tc, q, &s, arena)
		sc.add(CompIntent, opts.IntentBonus*float64(min(len(c.MatchedIntents), opts.MaxIntents)))
		sc.add(CompEntity, opts.EntityBonus*float64(min(len(c.MatchedEntities), opts.MaxEntities)))
		sc.add(CompSymptom, opts.SymptomBonus*float64(min(len(c.MatchedSymptoms), opts.MaxSymptoms)))
		if m.alias {
			sc.add(CompAlias, opts.AliasBonus)
		}
		if opts.WhenToUseBonus != 0 {
			sc.add(CompWhenToUse, opts.WhenToUseBonus*m.use)
		}
		if s.Scope != "" && (cp.ID == s.Scope || strings.HasPrefix(cp.ID, s.Scope) && len(cp.ID) > len(s.Scope) && cp.ID[len(s.Scope)] == '.') {
			sc.add(CompScope, opts.ScopeBonus)
		}
		if m.attrs.has(attrPack) && opts.PackBias != 0 {
			if s.Browse {
				sc.add(CompPackBias, opts.PackBias)
			} else {
				sc.add(CompPackBias, -opts.PackBias)
			}
		}
		if m.attrs.has(attrRecipe) && opts.RecipeBias != 0 {
			if s.HowTo {
				sc.add(CompRecipeBias, opts.RecipeBias)
			} else {
				sc.add(CompRecipeBias, -opts.RecipeBias)
			}
		}
		sc.add(CompAvailability, -availabilityPenalty(c.Availability, &opts))
		if !(s.ExplicitWrite && len(c.MatchedIntents) > 0) {
			risk := opts.SideEffectPenalty*float64(max(m.attrs.side, 0)) +
				opts.RiskPenalty*float64(max(m.attrs.risk, 0))
			risk *= riskFactor
			sc.add(CompRisk, -risk)
		}
		if len(terms) > 0 && opts.WhenNotToUsePenalty != 0 && m.attrs.has(attrWhenNotToUse) {
			cov := m.notUse
			if m.rec < 0 {
				cov = rawCoverage(cp.WhenNotToUse, terms)
			} else {
				// an entry naming another candidate ("… (use maintenance.codex.diagnose)")
				// is met when the query fits that candidate's when_to_use better than this
				// one's
				d := &tc.docs[m.rec]
				for _, r := range tc.nums[d.refer:d.values] {
					if j := candidateOf(cands, r); j >= 0 && usable(cands[j].Availability) && docs[j].use > m.use {
						cov = max(cov, docs[j].use)
					}
				}
			}
			if cov >= opts.WhenNotToUseMin {
				sc.add(CompWhenNotToUse, -opts.WhenNotToUsePenalty*cov)
			}
		}
		if len(s.Forbidden) > 0 && m.forbidden(cp, tc, q, s.Forbidden) {
			sc.add(CompForbidden, -opts.ForbiddenPenalty)
		}
		c.Score = sc.score
	}
	q.docs = docs[:0]
	sortCands(cands, byDoc)
	// Coverage is read of the best usable candidate only (see Candidate.Coverage).
	first := true
	for i := range cands {
		c := &cands[i]
		c.Coverage = 0
		if first {
			c.Coverage = tc.textCoverage(tc.doc(c), q)
			first = !usable(c.Availability)
		}
	}
	q.release()
}

// touch reads a word of every cache line of the numbers Rerank reads of each candidate in
// the TermCache (all but the descriptive text, read for Coverage of a few candidates only),
// and returns a sum to keep: these reads miss the cache and do not depend on one another, so
// the processor overlaps them, where the computation that follows would otherwise wait for
// each candidate's misses in turn.
func touch(cands []Candidate, tc *TermCache) uint32 {
	const lineWords = 64 / 4
	var sum uint32
	for i := range cands {
		c := &cands[i]
		if d := tc.doc(c); d != nil {
			for p := d.off; p < d.text; p += lineWords {
				sum += tc.nums[p]
			}
			sum += tc.nums[d.text-1]
		}
	}
	return sum
}

// candTerms is what Rerank knows of one candidate before scoring it: what its TermCache
// record tells of the query, the capability's attributes and where the record's value
// numbers lie. It holds no pointers, so Rerank writes one per candidate cheaply.
type candTerms struct {
	docMatch
	rec   int32 // the candidate's docID when it has a TermCache record, else -1
	attrs attrs
}

// scorer sums a candidate's score, recording each addend in its Breakdown unless
// noBreakdown.
type scorer struct {
	c           *Candidate
	score       float64
	noBreakdown bool
}

// add adds v (when not zero) as the component name.
func (s *scorer) add(name string, v float64) {
	if v == 0 {
		return
	}
	s.score += v
	if !s.noBreakdown {
		s.c.Breakdown = append(s.c.Breakdown, registry.ScoreComponent{Name: name, Value: v})
	}
}

// termsFor computes a candidate's candTerms: from its record when tc has one for it, else
// from the capability itself (when_to_use coverage by substring tests, no alias match). The
// arguments are Rerank's (see there).
func termsFor(c *Candidate, tc *TermCache, q *queryTerms, terms []string, p *phrasePairs, aliases bool) candTerms {
	d := tc.doc(c)
	if d == nil {
		m := candTerms{rec: -1, attrs: attrsOf(c.Cap)}
		if len(terms) > 0 && len(c.Cap.WhenToUse) > 0 {
			m.use = rawCoverage(c.Cap.WhenToUse, terms)
		}
		return m
	}
	return candTerms{rec: int32(c.Doc), docMatch: tc.match(d, q, p, aliases), attrs: d.attrs}
}

// haves returns the capability's intents, entities and symptoms (by value kind).
func haves(c *registry.Capability) [valueKinds][]string {
	return [valueKinds][]string{valueIntent: c.Intents, valueEntity: c.Entities, valueSymptom: c.Symptoms}
}

// matchRoom returns the room candidate c needs in Rerank's arena for its matched values:
// for each kind the query names (wanted), all of c's values when c's own storage lacks room
// for them.
func (m *candTerms) matchRoom(c *Candidate, tc *TermCache, wanted [valueKinds]bool) int {
	var counts [valueKinds]int
	if m.rec >= 0 {
		counts = tc.valueCounts(&tc.docs[m.rec])
	} else {
		for k, v := range haves(c.Cap) {
			counts[k] = len(v)
		}
	}
	dsts := [valueKinds][]string{valueIntent: c.MatchedIntents, valueEntity: c.MatchedEntities, valueSymptom: c.MatchedSymptoms}
	n := 0
	for k, have := range counts {
		if wanted[k] && cap(dsts[k]) < have {
			n += have
		}
	}
	return n
}

// setMatched sets c's MatchedIntents, MatchedEntities and MatchedSymptoms to the
// capability's values that s names, compared by value number when the candidate has a
// record (q marks the values s names) and as strings otherwise. Storage comes from arena
// when c's own lacks room; it returns the rest of the arena.
func (m *candTerms) setMatched(c *Candidate, tc *TermCache, q *queryTerms, s *Signals, arena []string) []string {
	if m.rec >= 0 && len(q.marked) == 0 { // the query names no value of the cache
		c.MatchedIntents, c.MatchedEntities, c.MatchedSymptoms = c.MatchedIntents[:0], c.MatchedEntities[:0], c.MatchedSymptoms[:0]
		return arena
	}
	dsts := [valueKinds]*[]string{valueIntent: &c.MatchedIntents, valueEntity: &c.MatchedEntities, valueSymptom: &c.MatchedSymptoms}
	if m.rec >= 0 {
		for k, have := range tc.valuesOf(&tc.docs[m.rec]) {
			*dsts[k], arena = tc.matchValues(*dsts[k], arena, have, q, 1<<k)
		}
		return arena
	}
	have, want := haves(c.Cap), [valueKinds][]string{valueIntent: s.Intents, valueEntity: s.Entities, valueSymptom: s.Symptoms}
	for k, dst := range dsts {
		*dst, arena = matchInto(*dst, arena, have[k], want[k])
	}
	return arena
}

// forbidden reports whether one of the capability's intents is among the forbidden ones
// (q marks them when the candidate has a record).
func (m *candTerms) forbidden(c *registry.Capability, tc *TermCache, q *queryTerms, forbidden []string) bool {
	if m.rec >= 0 {
		return q.marksAny(tc.valuesOf(&tc.docs[m.rec])[valueIntent], markForbidden)
	}
	for _, in := range c.Intents {
		if containsFold(forbidden, in) {
			return true
		}
	}
	return false
}

// candidateOf returns the position of docID d among cands, or -1.
func candidateOf(cands []Candidate, d uint32) int {
	for i := range cands {
		if cands[i].Doc == d {
			return i
		}
	}
	return -1
}

func availabilityPenalty(a registry.Availability, o *RerankOptions) float64 {
	switch a {
	case registry.NeedsConfirmation:
		return o.NeedsConfirmationPenalty
	case registry.MissingCredentials:
		return o.MissingCredentialsPenalty
	case registry.Forbidden:
		return o.ForbiddenAvailabilityPenalty
	case registry.Unavailable, registry.Incompatible:
		return o.UnusablePenalty
	}
	return 0
}

// trimToFusion drops the components a previous Rerank added, keeping the fusion ones.
func trimToFusion(b []registry.ScoreComponent) []registry.ScoreComponent {
	n := 0
	for n < len(b) && strings.HasPrefix(b[n].Name, "rrf.") {
		n++
	}
	return b[:n]
}

// matchInto returns the values of have that occur in want, stored in dst's storage when it
// has room for all of have and carved from arena otherwise, and the rest of the arena.
func matchInto(dst, arena, have, want []string) ([]string, []string) {
	dst = dst[:0]
	if len(want) == 0 || len(have) == 0 {
		return dst, arena
	}
	for _, h := range have {
		if containsFold(want, h) {
			dst, arena = carve(dst, arena, len(have))
			dst = append(dst, h)
		}
	}
	return dst, arena
}

// matchValues is matchInto for a record's value numbers (have), matching the values q marks
// with bit.
func (t *TermCache) matchValues(dst, arena []string, have []uint32, q *queryTerms, bit uint8) ([]string, []string) {
	dst = dst[:0]
	if len(q.marked) == 0 {
		return dst, arena
	}
	for _, v := range have {
		if q.marks[v]&bit != 0 {
			dst, arena = carve(dst, arena, len(have))
			dst = append(dst, t.values[v])
		}
	}
	return dst, arena
}

// carve gives an empty dst without room for n values storage for n carved from arena, when
// the arena has that much, and returns dst and the rest of the arena.
func carve(dst, arena []string, n int) ([]string, []string) {
	if len(dst) == 0 && cap(dst) < n && len(arena) >= n {
		return arena[:0:n], arena[n:]
	}
	return dst, arena
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if x == s || len(x) == len(s) && strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func sortedUnique(a []string) bool {
	for i := 1; i < len(a); i++ {
		if a[i-1] >= a[i] {
			return false
		}
	}
	return true
}
