package rank

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/capdex/capdex/registry"
)

// Signals is what the normalised query says, in the terms Rerank, Diversify and Resolve
// compare with a capability's fields. All strings are expected folded (lowercase).
type Signals struct {
	// Intents, Entities and Symptoms are compared with the capability's fields of the same
	// name. The query side expands intents to every registry value sharing their concept, so
	// the comparison here is plain equality. A capability's symptoms include the symptom
	// concepts of the shared lexicon (text.IsSymptom: "unreachable", "crash") that its
	// aliases, when_to_use entries and symptoms name, so Symptoms may hold such concept names
	// for a query reporting the problem in any language.
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
	// Serves, when set, reports whether a descendant of the pack with this id that the
	// caller may discover and use declares one of intents. Resolve's pack rule asks it, so a
	// serving child that no retriever returned is not taken for a hidden one; without it the
	// rule looks only at the candidates.
	Serves func(pack string, intents []string) bool
	// EmptyAreaFirst: the lexical retriever's first hit is a pack the caller may discover
	// in which nothing is visible to it (everything inside offline or hidden), which the
	// engine leaves out of the candidates. The request names an area that cannot serve this
	// caller ("rent a car at the airport" while the one car action is offline): Resolve
	// answers no_confident_match rather than a neighbour from another area.
	EmptyAreaFirst bool
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
	// Prune, when above 0, lets Rerank rank exactly only the candidates that can still be
	// among the first Prune: it bounds each candidate's score from what needs no scan of its
	// terms, ranks candidates in order of that bound until Prune of them score above the
	// bound of all the others, and leaves the others pending (their Score, Breakdown,
	// matched values and Coverage unset, after the ranked ones in cands). Resolve,
	// Diversify and SampleOf finish a pending ranking themselves when they read past the
	// ranked candidates, so their results are those of a full ranking; any other reader of
	// the candidates calls Complete first. Rerank ranks everything when the TermCache lacks a
	// record of some candidate. Default 12: the longest list a search returns (10) and the
	// runners-up Resolve compares.
	Prune int
	// Terms supplies the analysed when_to_use, when_not_to_use and alias entries and the
	// descriptive text of each capability (Candidate.Coverage). Nil falls back to substring
	// tests of the query terms in the raw when_to_use text, gives no alias bonus and leaves
	// Coverage at 1 (unknown).
	Terms *TermCache
}

// DefaultReadIntents returns the intents that only read or look (registry.ReadIntents).
func DefaultReadIntents() []string { return registry.ReadIntents() }

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
		Prune:              12,
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
//
// With opts.Prune = D > 0 Rerank may rank exactly only the candidates that can still be
// among the first D, and leave the others pending; see RerankOptions.Prune.
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
	r := getReranker()
	r.sv, r.ov = s, opts
	r.start(cands, &r.sv, &r.ov, terms, riskFactor)
	if !(opts.Prune > 0 && len(cands) > opts.Prune && r.tc != nil && r.prune()) {
		r.all(false)
	}
	putReranker(r)
}

// rerankers holds reranker working states: one holds its phrase pairs in its own buffer,
// so it would otherwise be allocated by every call.
var rerankers = sync.Pool{New: func() any { return new(reranker) }}

func getReranker() *reranker { return rerankers.Get().(*reranker) }

// putReranker releases r's query terms and returns r to the pool, keeping none of the
// call's references.
func putReranker(r *reranker) {
	r.q.release()
	r.cands, r.s, r.opts, r.tc, r.terms, r.q, r.docs = nil, nil, nil, nil, nil, nil, nil
	r.sv, r.ov, r.pairs = Signals{}, RerankOptions{}, phrasePairs{}
	rerankers.Put(r)
}

// reranker is one Rerank call's (or one completion's) working state.
type reranker struct {
	cands      []Candidate
	s          *Signals
	opts       *RerankOptions
	sv         Signals       // Rerank's copy of its signals (s points here)
	ov         RerankOptions // and of its options (opts points here)
	tc         *TermCache
	terms      []string
	riskFactor float64
	q          *queryTerms
	pairBuf    [128]uint64
	pairs      phrasePairs
	docs       []candTerms
	wanted     [valueKinds]bool
	wantAny    bool
}

// start numbers and marks the query for cands; call q.release when done.
func (r *reranker) start(cands []Candidate, s *Signals, opts *RerankOptions, terms []string, riskFactor float64) {
	r.cands, r.s, r.opts, r.terms, r.riskFactor = cands, s, opts, terms, riskFactor
	r.tc = opts.Terms
	r.q = r.tc.query(terms)
	r.q.markValues(r.tc, s)
	r.pairs = r.tc.wordPairs(r.pairBuf[:0], s.Phrase)
	r.wanted = [valueKinds]bool{valueIntent: len(s.Intents) > 0, valueEntity: len(s.Entities) > 0, valueSymptom: len(s.Symptoms) > 0}
	r.wantAny = r.wanted != [valueKinds]bool{}
}

// all ranks every candidate (but those prune ranked, when completing a pending ranking),
// sorts them and sets Coverage.
func (r *reranker) all(completing bool) {
	cands, tc, q := r.cands, r.tc, r.q
	// What the TermCache tells of every candidate first, reading each record once: a
	// when_not_to_use entry that names another candidate compares their when_to_use.
	docs := q.docs[:0]
	q.touch += touch(cands, tc)
	byDoc := tc != nil && tc.byID // every candidate has a record, so docIDs order ids
	room := 0
	for i := range cands {
		c := &cands[i]
		m := termsFor(c, tc, q, r.terms, &r.pairs, r.opts.AliasBonus != 0)
		byDoc = byDoc && m.rec >= 0
		if r.wantAny && !(completing && c.reranked) {
			room += m.matchRoom(c, r.wanted)
		}
		docs = append(docs, m)
	}
	r.docs = docs
	// One slice for the matched values of every candidate without room of its own, so
	// Rerank allocates at most once.
	var arena []string
	if room > 0 {
		arena = make([]string, room)
	}
	for i := range cands {
		c := &cands[i]
		if !(completing && c.reranked) {
			arena = r.score(i, arena)
		}
		c.reranked, c.lazy = false, nil
	}
	q.docs = docs[:0]
	sortCands(cands, byDoc)
	r.coverage(len(cands))
}

// coverage sets the Coverage of cands[:n] (see Candidate.Coverage): up to the first usable
// candidate, 0 after it.
func (r *reranker) coverage(n int) {
	first := true
	for i := range r.cands[:n] {
		c := &r.cands[i]
		c.Coverage = 0
		if first {
			c.Coverage = r.tc.textCoverage(r.tc.doc(c), r.q)
			first = !Usable(c.Availability)
		}
	}
}

// useOf returns candidate j's when_to_use coverage, computing it when prune has not.
func (r *reranker) useOf(j int) float64 {
	m := &r.docs[j]
	if !m.useDone && m.rec >= 0 {
		if len(r.q.nums) > 0 {
			d := &r.tc.docs[m.rec]
			m.use = r.q.coverage(r.tc.nums[d.off:d.notUse])
		}
		m.useDone = true
	}
	return m.use
}

// score computes candidate i's Score (and Breakdown and matched values) from r.docs[i].
func (r *reranker) score(i int, arena []string) []string {
	cands, s, opts, tc, q := r.cands, r.s, r.opts, r.tc, r.q
	c := &cands[i]
	cp := c.Cap
	m := &r.docs[i]
	c.Breakdown = trimToFusion(c.Breakdown)
	sc := scorer{c: c, score: c.Fused, noBreakdown: opts.NoBreakdown}
	arena = m.setMatched(c, tc, q, s, arena)
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
	sc.add(CompAvailability, -availabilityPenalty(c.Availability, opts))
	if !(s.ExplicitWrite && len(c.MatchedIntents) > 0) {
		risk := opts.SideEffectPenalty*float64(max(m.attrs.side, 0)) +
			opts.RiskPenalty*float64(max(m.attrs.risk, 0))
		risk *= r.riskFactor
		sc.add(CompRisk, -risk)
	}
	if len(r.terms) > 0 && opts.WhenNotToUsePenalty != 0 && m.attrs.has(attrWhenNotToUse) {
		cov := m.notUse
		if m.rec < 0 {
			cov = rawCoverage(cp.WhenNotToUse, r.terms)
		} else {
			// an entry naming another candidate ("… (use maintenance.codex.diagnose)")
			// is met when the query fits that candidate's when_to_use better than this
			// one's
			d := &tc.docs[m.rec]
			for _, ref := range tc.nums[d.refer:d.values] {
				if j := candidateOf(cands, ref); j >= 0 && Usable(cands[j].Availability) && r.useOf(j) > m.use {
					cov = max(cov, r.docs[j].use)
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
	return arena
}

// pending is a ranking Rerank left unfinished (RerankOptions.Prune): what finishing it
// needs. Every candidate of cands points to it until then.
type pending struct {
	cands      []Candidate
	s          Signals
	opts       RerankOptions
	terms      []string
	riskFactor float64
	// p: cands[:p] are ranked and in their final order, and every other candidate ranks
	// below them.
	p int
}

// pruneSlack is added to each upper bound of prune, far above the rounding of sums of a
// few score addends in another order.
const pruneSlack = 1e-9

// prune ranks the candidates that can still be among the first opts.Prune, in order of an
// upper bound of their score, until opts.Prune ranked ones score above the bound of every
// other, and leaves the others pending. It returns false, having done nothing, when some
// candidate has no record (all then ranks every candidate).
//
// The bound is the exact sum of the addends that need no scan of the record's terms
// (intents, entities and symptoms counted by value number, the alias phrase, pack and recipe
// bias, availability, risk, forbidden intent) plus the largest the others can add: the
// when_to_use bonus when the record has an entry, the scope bonus when the query has a
// scope (read in the capability, mostly out of cache); when_not_to_use only subtracts. What
// ranking a candidate adds is the scan of its when_to_use and when_not_to_use entries, its
// matched values and its breakdown.
func (r *reranker) prune() bool {
	cands, tc, q, s, opts := r.cands, r.tc, r.q, r.s, r.opts
	n, want := len(cands), r.opts.Prune
	q.touch += touchValues(cands, tc)
	docs := q.docs[:0]
	for i := range cands {
		d := tc.doc(&cands[i])
		if d == nil {
			return false
		}
		cands[i].reranked = false // (left by an earlier Rerank without Fuse)
		m := candTerms{rec: int32(cands[i].Doc), attrs: d.attrs}
		m.countMatched(tc, d, q)
		docs = append(docs, m)
	}
	r.docs = docs
	q.hi = slices.Grow(q.hi[:0], n)[:n]
	q.keys = slices.Grow(q.keys[:0], n)[:n]
	aliases := opts.AliasBonus != 0 && r.pairs.phrase != ""
	low := uint64(1)<<bits.Len(uint(n-1)) - 1
	room := 0
	for i := range cands {
		c, m := &cands[i], &docs[i]
		d := &tc.docs[m.rec]
		hi := c.Fused
		hi += opts.IntentBonus * float64(min(int(m.matched[valueIntent]), opts.MaxIntents))
		hi += opts.EntityBonus * float64(min(int(m.matched[valueEntity]), opts.MaxEntities))
		hi += opts.SymptomBonus * float64(min(int(m.matched[valueSymptom]), opts.MaxSymptoms))
		if aliases && d.text > d.heads && tc.aliasIn(d, &r.pairs) {
			m.alias = true
			hi += opts.AliasBonus
		}
		if len(q.nums) > 0 && d.notUse > d.off {
			hi += max(opts.WhenToUseBonus, 0)
		}
		if s.Scope != "" {
			hi += max(opts.ScopeBonus, 0)
		}
		if m.attrs.has(attrPack) {
			if s.Browse {
				hi += opts.PackBias
			} else {
				hi -= opts.PackBias
			}
		}
		if m.attrs.has(attrRecipe) {
			if s.HowTo {
				hi += opts.RecipeBias
			} else {
				hi -= opts.RecipeBias
			}
		}
		hi -= availabilityPenalty(c.Availability, opts)
		if !(s.ExplicitWrite && m.matched[valueIntent] > 0) {
			hi -= (opts.SideEffectPenalty*float64(max(m.attrs.side, 0)) + opts.RiskPenalty*float64(max(m.attrs.risk, 0))) * r.riskFactor
		}
		if len(r.terms) > 0 && m.attrs.has(attrWhenNotToUse) {
			hi += max(-opts.WhenNotToUsePenalty, 0) // a penalty; a bonus only if negative
		}
		if len(s.Forbidden) > 0 && m.forbidden(c.Cap, tc, q, s.Forbidden) {
			hi -= opts.ForbiddenPenalty
		}
		hi += pruneSlack + math.Abs(hi)*1e-12
		q.hi[i] = hi
		q.keys[i] = descending(hi)&^low | uint64(i)
		if r.wantAny {
			room += m.matchRoom(c, r.wanted)
		}
	}
	// In order of the bound, best first; sufmax[k] is the largest bound from the k-th on
	// (the keys' low bits hold positions, so their order is the bounds' only nearly).
	slices.Sort(q.keys)
	for k := range q.keys {
		q.keys[k] &= low
	}
	q.sufmax = slices.Grow(q.sufmax[:0], n+1)[:n+1]
	q.sufmax[n] = math.Inf(-1)
	for k := n - 1; k >= 0; k-- {
		q.sufmax[k] = max(q.sufmax[k+1], q.hi[q.keys[k]])
	}
	var arena []string
	if room > 0 {
		arena = make([]string, room)
	}
	// top holds the best want scores ranked so far, best first.
	var topBuf [16]float64
	top := topBuf[:0]
	ranked := 0
	for k := range q.keys {
		i := int(q.keys[k])
		c, m := &cands[i], &docs[i]
		if len(q.nums) > 0 {
			d := &tc.docs[m.rec]
			m.use, m.notUse = q.coverage(tc.nums[d.off:d.notUse]), q.coverage(tc.nums[d.notUse:d.refer])
		}
		m.useDone = true
		arena = r.score(i, arena)
		c.reranked = true
		ranked++
		if len(top) < want {
			top = append(top, c.Score)
		} else if c.Score > top[len(top)-1] {
			top[len(top)-1] = c.Score
		}
		for j := len(top) - 1; j > 0 && top[j] > top[j-1]; j-- {
			top[j], top[j-1] = top[j-1], top[j]
		}
		if len(top) == want && top[want-1] > q.sufmax[k+1] {
			break
		}
	}
	if ranked == n {
		for i := range cands {
			cands[i].reranked, cands[i].lazy = false, nil
		}
		q.docs = docs[:0]
		sortCands(cands, tc.byID)
		r.coverage(n)
		return true
	}
	// The candidates ranked above every other's bound go first, in order; the others
	// follow in their order.
	bound := q.sufmax[ranked]
	st := &pending{cands: cands, s: *s, opts: *opts, terms: r.terms, riskFactor: r.riskFactor}
	head := q.keys[:0] // q.keys holds ranked positions from here on, then n positions
	for i := range cands {
		c := &cands[i]
		c.lazy, c.Coverage = st, 0 // (the others' Score is still their Fused)
		if c.reranked && c.Score > bound {
			head = append(head, uint64(i))
		}
	}
	p := len(head)
	slices.SortFunc(head, func(a, b uint64) int { return lessBy(&cands[a], &cands[b], tc.byID) })
	perm := slices.Grow(head, n-p)
	for i := range cands {
		if c := &cands[i]; !(c.reranked && c.Score > bound) {
			perm = append(perm, uint64(i))
		}
	}
	q.keys = perm
	permute(cands, perm)
	q.docs = docs[:0]
	st.p = p
	// Coverage as the full ranking sets it on the first p: up to the first usable candidate
	// (the completion sets the rest).
	r.coverage(p)
	return true
}

// Complete finishes a ranking Rerank left pending (RerankOptions.Prune), so that every
// candidate has its score, breakdown and matched values and cands are in their final order.
// Resolve, Diversify and SampleOf call it themselves when they read past the ranked
// candidates; a caller that reads the candidates otherwise calls it first. It does nothing
// to a complete ranking.
func Complete(cands []Candidate) {
	settle(cands, len(cands))
}

// settle makes sure cands[:n] are ranked and in their final order, completing a pending
// ranking when they are not.
func settle(cands []Candidate, n int) {
	if len(cands) == 0 || cands[0].lazy == nil {
		return
	}
	st := cands[0].lazy
	if n <= st.p && &cands[0] == &st.cands[0] {
		return
	}
	r := getReranker()
	r.start(st.cands, &st.s, &st.opts, st.terms, st.riskFactor)
	r.all(true)
	putReranker(r)
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

// touchValues is touch for prune, which reads of every candidate its record's values and
// alias heads only.
func touchValues(cands []Candidate, tc *TermCache) uint32 {
	var sum uint32
	for i := range cands {
		if d := tc.doc(&cands[i]); d != nil {
			sum += tc.nums[d.values] + tc.nums[d.text-1]
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
	// matched counts, for a candidate with a record, its values of each kind that the query
	// marks (the length of each Matched list setMatched sets), and marks ors the marks of all
	// its values.
	matched [valueKinds]uint16
	marks   uint8
	// useDone: docMatch.use is computed (all of docMatch, unless prune computed use alone
	// for another candidate's when_not_to_use).
	useDone bool
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
		m := candTerms{rec: -1, attrs: attrsOf(c.Cap), useDone: true}
		if len(terms) > 0 && len(c.Cap.WhenToUse) > 0 {
			m.use = rawCoverage(c.Cap.WhenToUse, terms)
		}
		return m
	}
	m := candTerms{rec: int32(c.Doc), docMatch: tc.match(d, q, p, aliases), attrs: d.attrs, useDone: true}
	m.countMatched(tc, d, q)
	return m
}

// haves returns the capability's intents, entities and symptoms (by value kind), the
// symptoms with those its texts document (symptomValues).
func haves(c *registry.Capability) [valueKinds][]string {
	return [valueKinds][]string{valueIntent: c.Intents, valueEntity: c.Entities, valueSymptom: symptomValues(c)}
}

// countMatched sets m.marks and m.matched from the record d (q marks the values the query
// names): one pass over the record's values, and a second, per kind, only when one of them
// is marked as an intent, entity or symptom.
func (m *candTerms) countMatched(tc *TermCache, d *docTerms, q *queryTerms) {
	if len(q.marked) == 0 {
		return
	}
	nums, marks := tc.nums, q.marks
	var or uint8
	for _, v := range nums[d.values+valueKinds : d.heads] {
		or |= marks[v]
	}
	m.marks = or
	if or&(1<<valueKinds-1) == 0 {
		return
	}
	p := d.values + valueKinds
	for k := range valueKinds {
		n := nums[d.values+uint32(k)]
		bit := uint8(1) << k
		c := uint16(0)
		for _, v := range nums[p : p+n] {
			if marks[v]&bit != 0 {
				c++
			}
		}
		m.matched[k] = c
		p += n
	}
}

// matchRoom returns the room candidate c needs in Rerank's arena for its matched values:
// with a record, for each kind, the values it matched when c's own storage lacks room for
// them; without one, for each kind the query names (wanted), all of c's values when c's own
// storage lacks room for them.
func (m *candTerms) matchRoom(c *Candidate, wanted [valueKinds]bool) int {
	dsts := [valueKinds][]string{valueIntent: c.MatchedIntents, valueEntity: c.MatchedEntities, valueSymptom: c.MatchedSymptoms}
	n := 0
	if m.rec >= 0 {
		for k, have := range m.matched {
			if cap(dsts[k]) < int(have) {
				n += int(have)
			}
		}
		return n
	}
	for k, v := range haves(c.Cap) {
		if wanted[k] && cap(dsts[k]) < len(v) {
			n += len(v)
		}
	}
	return n
}

// setMatched sets c's MatchedIntents, MatchedEntities and MatchedSymptoms to the
// capability's values that s names, compared by value number when the candidate has a
// record (q marks the values s names, countMatched counted them) and as strings otherwise.
// Storage comes from arena when c's own lacks room; it returns the rest of the arena.
func (m *candTerms) setMatched(c *Candidate, tc *TermCache, q *queryTerms, s *Signals, arena []string) []string {
	dsts := [valueKinds]*[]string{valueIntent: &c.MatchedIntents, valueEntity: &c.MatchedEntities, valueSymptom: &c.MatchedSymptoms}
	if m.rec >= 0 {
		if m.matched == [valueKinds]uint16{} { // mostly: the candidate has none of the values the query names
			c.MatchedIntents, c.MatchedEntities, c.MatchedSymptoms = c.MatchedIntents[:0], c.MatchedEntities[:0], c.MatchedSymptoms[:0]
			return arena
		}
		for k, have := range tc.valuesOf(&tc.docs[m.rec]) {
			*dsts[k], arena = tc.matchValues(*dsts[k], arena, have, q, 1<<k, int(m.matched[k]))
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
		return m.marks&markForbidden != 0 && q.marksAny(tc.valuesOf(&tc.docs[m.rec])[valueIntent], markForbidden)
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
	for n < len(b) && isFusionComponent(b[n].Name) {
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

// matchValues is matchInto for a record's value numbers (have), matching the n values q
// marks with bit; dst's storage is used when it has room for them, else arena's.
func (t *TermCache) matchValues(dst, arena []string, have []uint32, q *queryTerms, bit uint8, n int) ([]string, []string) {
	dst = dst[:0]
	if n == 0 {
		return dst, arena
	}
	dst, arena = carve(dst, arena, n)
	for _, v := range have {
		if q.marks[v]&bit != 0 {
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
