package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/capdex/capdex/actors"
	"github.com/capdex/capdex/engine/policy"
	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// Update is one step of a streamed search: partial rankings as retrievers answer, then the
// final one (Final true), after which the channel is closed.
type Update struct {
	Response *registry.SearchResponse
	Final    bool
}

// Search finds the capabilities that fit req.Query for the caller rc. It never fails
// because a retriever is slow or broken: the answer is then partial and says so in
// SearchMeta. It returns ErrInvalidRequest for a request that breaks the protocol.
func (e *Engine) Search(ctx context.Context, req registry.SearchRequest, rc registry.RuntimeContext) (*registry.SearchResponse, error) {
	e.busy.Add(1)
	defer e.busy.Add(-1)
	return e.search(ctx, req, rc, nil)
}

// search runs one search, with the pipeline changed by v when v is not nil.
func (e *Engine) search(ctx context.Context, req registry.SearchRequest, rc registry.RuntimeContext, v *Variant) (*registry.SearchResponse, error) {
	job, sc, err := e.prepareVariant(ctx, &req, &rc, false, v)
	if err != nil {
		return nil, err
	}
	resp, err := e.sys.Search(ctx, job)
	if err == nil {
		sc.release() // the final ranking is done; after an error the gather actor may not be
		e.recordSearch(sc, resp)
	}
	return resp, err
}

// SearchStream is Search with the partial rankings: the channel carries an Update per
// retriever answer, then the final one, and is closed.
func (e *Engine) SearchStream(ctx context.Context, req registry.SearchRequest, rc registry.RuntimeContext) (<-chan Update, error) {
	e.busy.Add(1)
	job, sc, err := e.prepare(ctx, &req, &rc, true)
	if err != nil {
		e.busy.Add(-1)
		return nil, err
	}
	out := make(chan Update, 1)
	in, err := e.sys.SearchStream(ctx, job)
	if err != nil {
		e.busy.Add(-1)
		return nil, err
	}
	go func() {
		defer e.busy.Add(-1)
		defer close(out)
		final := false
		for u := range in {
			final = final || u.Final
			if u.Final {
				e.recordSearch(sc, u.Response)
			}
			out <- Update{Response: u.Response, Final: u.Final}
		}
		if final {
			sc.release()
		}
	}()
	return out, nil
}

// ValidateSearch checks a request against the protocol of docs/ARCHITECTURE.md "Protocol" and fills defaults.
func ValidateSearch(req *registry.SearchRequest) error {
	if strings.TrimSpace(req.Query) == "" {
		return fmt.Errorf("%w: query is empty", ErrInvalidRequest)
	}
	if req.Limit == 0 {
		req.Limit = registry.DefaultLimit
	}
	if req.Limit < 1 || req.Limit > registry.MaxLimit {
		return fmt.Errorf("%w: limit %d is outside 1..%d", ErrInvalidRequest, req.Limit, registry.MaxLimit)
	}
	for _, t := range req.Types {
		switch t {
		case registry.TypePack, registry.TypeAction, registry.TypeRecipe:
		default:
			return fmt.Errorf("%w: types: unknown resource type %q (want pack, action or recipe)", ErrInvalidRequest, t)
		}
	}
	if req.SideEffectMax != "" && req.SideEffectMax.Level() < 0 {
		return fmt.Errorf("%w: side_effect_max: unknown side effect %q (want R, W-local, W-shared or I)", ErrInvalidRequest, req.SideEffectMax)
	}
	if req.Within != "" && !registry.ValidID(req.Within) {
		return fmt.Errorf("%w: within: %q is not a pack id", ErrInvalidRequest, req.Within)
	}
	if _, err := query.ParseMatch(req.Match); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	return nil
}

// prepare validates and normalises the request and builds the actor job and the ranking
// side of the search.
func (e *Engine) prepare(ctx context.Context, req *registry.SearchRequest, rc *registry.RuntimeContext, stream bool) (*actors.Job, *searchCtx, error) {
	return e.prepareVariant(ctx, req, rc, stream, nil)
}

// prepareVariant is prepare with the pipeline changed by v (nil: unchanged).
func (e *Engine) prepareVariant(ctx context.Context, req *registry.SearchRequest, rc *registry.RuntimeContext, stream bool, v *Variant) (*actors.Job, *searchCtx, error) {
	if err := ValidateSearch(req); err != nil {
		return nil, nil, err
	}
	st := e.state.Load()
	if st == nil {
		return nil, nil, ErrClosed
	}
	start := time.Now()
	parsed, err := e.norm.Normalize(ctx, req.Query, st.lex)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	fs := index.FilterSpec{Within: req.Within, Types: req.Types, SideEffectMax: req.SideEffectMax}
	if fs.Within == "" && parsed.Browse && parsed.Scope != "" {
		// A browse of one pack ("Codex 维护相关能力有哪些？") lists that pack's subtree, not
		// its neighbours.
		fs.Within = parsed.Scope
	}
	mt, err := query.ParseMatch(req.Match)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	allow, emptied := st.matchAllow(st.gen.Filter(rc, fs), mt)
	steps := query.PlanSteps(parsed, req, st.lex)
	plan := make([]actors.Step, 0, len(steps))
	for _, s := range steps {
		k := s.Kind
		if v.skips(k) {
			continue
		}
		plan = append(plan, actors.Step{Kind: k, Deadline: e.deadlines[k], Limit: stepLimit(k)})
	}
	iq := &index.Query{
		Text: parsed.Text, Terms: parsed.Terms, IDs: parsed.IDs,
		Intents: parsed.Intents, Entities: parsed.Entities, Symptoms: withRiskSignals(parsed.Symptoms, mt),
		Match: req.Match, Within: req.Within, Browse: parsed.Browse,
		User: rc.User, Project: rc.Project, Tenant: rc.Tenant,
	}
	if iq.Within == "" && parsed.Browse {
		iq.Within = parsed.Scope
	}
	// the normaliser's scan found the concepts (and terms) of the text: the lexical
	// retriever need not scan it again
	if ids, ok := parsed.ConceptIDs(); ok {
		iq.ConceptIDs = ids
		if iq.Terms == nil {
			iq.Terms = []string{} // the text has no terms: do not analyse it again
		}
	}
	if mt != nil && len(mt.RiskSignals) > 0 {
		// a risk signal also meets the words of the rules that mention it without declaring
		// it as a symptom ("split invoice detection" for split_invoice)
		terms := iq.Terms
		if terms == nil {
			terms = text.Analyze(iq.Text)
		}
		for _, rs := range mt.RiskSignals {
			terms = appendNew(terms, text.Analyze(strings.ReplaceAll(rs, "_", " ")))
		}
		iq.Terms = terms
	}
	sc := &searchCtx{e: e, st: st, req: req, rc: rc, parsed: parsed, allow: allow, start: start, variant: v, plan: steps, sm: mt, emptied: emptied}
	sc.signals = e.signals(st, parsed, req, mt)
	retrieve := actors.RetrieveFunc(st.gen.Retrieve)
	if e.opts.WrapRetriever != nil {
		retrieve = e.opts.WrapRetriever(retrieve)
	}
	job := &actors.Job{
		Query: iq, Allow: allow, Plan: plan,
		Retrieve:      retrieve,
		Rank:          sc.rank,
		Stream:        stream,
		MaxCandidates: e.opts.MaxCandidates,
		Inline:        e.inline,
		Alone:         e.busy.Load() == 1,
	}
	return job, sc, nil
}

// inlineKinds returns the retriever kinds whose calls may run on a Search caller's
// goroutine (actors.Job.Inline): every built-in retriever works in memory, but the
// semantic one calls a dense embedder for the query, which may be a remote service, and
// a wrapped retriever (Options.WrapRetriever) may do anything.
func inlineKinds(o Options, emb embed.Embedder) uint16 {
	if o.WrapRetriever != nil {
		return 0
	}
	kinds := uint16(1)<<index.NumKinds - 1
	if _, sparse := emb.(embed.SparseEmbedder); !sparse {
		kinds &^= 1 << index.Semantic
	}
	return kinds
}

func stepLimit(k index.Kind) int {
	switch k {
	case index.Exact:
		return 10
	case index.History:
		return 20
	}
	return 50
}

// signals are what the ranking reads of the parse. The phrase key comes from the
// normaliser's own scan when it has one (the rules do): scanning the text again would cost
// as much as the rest of the signals.
func (e *Engine) signals(st *state, p *query.Parsed, req *registry.SearchRequest, mt *query.Match) rank.Signals {
	phrase, ok := p.PhraseKey()
	if !ok {
		phrase = rank.PhraseKey(p.Text)
	}
	s := rank.Signals{
		Intents: p.Intents, Entities: p.Entities, Symptoms: symptomsOf(p),
		Forbidden: p.Forbidden, Constraints: p.Constraints,
		Terms: p.SignalTerms(), Phrase: phrase, IDs: p.IDs,
		ExplicitWrite: p.ExplicitWrite, Browse: p.Browse, HowTo: p.HowTo, Vague: p.Vague, Scope: p.Scope, Lang: p.Lang,
	}
	if req.Within != "" {
		s.Scope = req.Within
	}
	if mt != nil {
		// the structured match's intents and risk signals rank like the parse's intents and
		// symptoms (seed 003 §5 steps 4 and 5): a risk signal meets the rules and other
		// capabilities that declare it as a symptom
		s.Intents = appendNew(s.Intents, mt.Intents)
		s.Symptoms = withRiskSignals(s.Symptoms, mt)
	}
	return s
}

// withRiskSignals returns symptoms followed by the match's risk signals it lacks, in a new
// slice when there are any (never into the parse's own array).
func withRiskSignals(symptoms []string, mt *query.Match) []string {
	if mt == nil {
		return symptoms
	}
	return appendNew(symptoms, mt.RiskSignals)
}

// appendNew returns list followed by the values of add it lacks, in a new slice when it
// adds any.
func appendNew(list, add []string) []string {
	for _, v := range add {
		if !slices.Contains(list, v) {
			list = append(slices.Clip(list), v)
		}
	}
	return list
}

// symptomsOf returns the symptoms the ranking compares: the parse's, then the symptom
// concepts of the shared lexicon (text.IsSymptom) it names, such as "unreachable" for
// "连不上", which meet the capabilities documented for them (see rank.Rerank). A concept
// that one of the parse's symptoms already names ("npm_registry_unreachable") is left out,
// so one reported problem is not counted twice.
func symptomsOf(p *query.Parsed) []string {
	out := p.Symptoms
	for _, c := range p.Concepts {
		if text.IsSymptom(c) && !slices.Contains(out, c) && !namesConcept(p.Symptoms, c) {
			out = append(slices.Clip(out), c) // never into the parse's own array
		}
	}
	return out
}

// namesConcept reports whether one of the symptom values names the concept in its words.
func namesConcept(symptoms []string, concept string) bool {
	for _, s := range symptoms {
		if slices.Contains(text.ConceptsIn(strings.ReplaceAll(s, "_", " ")), concept) {
			return true
		}
	}
	return false
}

func scopeOf(req *registry.SearchRequest) string {
	if req.Within != "" {
		return req.Within
	}
	return "all"
}

// searchCtx is one search's state on the ranking side. rank is called by the gather
// actor, never concurrently for one search.
type searchCtx struct {
	e       *Engine
	st      *state
	req     *registry.SearchRequest
	rc      *registry.RuntimeContext
	parsed  *query.Parsed
	signals rank.Signals
	allow   *roaring.Bitmap
	start   time.Time
	bufs    *rankBufs // taken on the first rank call, returned by release
	// variant, when set, changes the pipeline (SearchVariant).
	variant *Variant
	// expected, when set, makes the final ranking record a calibration sample.
	expected registry.Resolution
	plan     []query.Step // the planner's retrievers and reasons
	// sm is the request's structured match (nil without one); emptied, when not empty,
	// says which of its hard filters left nothing the caller may discover.
	sm       *query.Match
	emptied  string
	sampling bool
	sample   rank.Sample
	// visible holds what the caller may see whatever the request's filters (computed on the
	// first pack candidate); packs caches which packs have a visible descendant.
	visible *roaring.Bitmap
	packs   []packSeen
}

// rankBufs is the working memory of a search's rank calls, recycled across searches.
type rankBufs struct {
	cands []rank.Candidate
	pos   docTable
	nsrc  []int32       // per candidate, the number of sources (rank's first pass)
	hitc  []int32       // per hit, in the order the passes read them, its candidate or skipped
	srcs  []rank.Source // the candidates' evidence, carved per candidate
	avail policy.Caller // the candidates' availability for the search's caller
}

var rankPool = sync.Pool{New: func() any { return new(rankBufs) }}

// release returns the search's rank buffers to the pool once no rank call can follow.
// The responses built from them hold copies only.
func (sc *searchCtx) release() {
	b := sc.bufs
	if b == nil {
		return
	}
	sc.bufs = nil
	clear(b.cands) // drop the capabilities and evidence they point to
	clear(b.srcs)
	b.cands, b.nsrc, b.hitc = b.cands[:0], b.nsrc[:0], b.hitc[:0]
	rankPool.Put(b)
}

// packSeen records whether a pack has a descendant the caller can see.
type packSeen struct {
	doc   uint32
	empty bool
}

// rank turns the evidence gathered so far into a response.
func (sc *searchCtx) rank(g *actors.Gathered) *registry.SearchResponse {
	e, gen := sc.e, sc.st.gen
	if g.Final && e.opts.RetrieverTimes != nil {
		for i := range g.Evidence {
			if ev := &g.Evidence[i]; ev.Took > 0 {
				e.opts.RetrieverTimes(ev.Kind.String(), ev.Took)
			}
		}
	}
	hits := 0
	for i := range g.Evidence {
		if g.Evidence[i].Outcome == actors.OK {
			hits += len(g.Evidence[i].Hits)
		}
	}
	if sc.bufs == nil {
		sc.bufs = rankPool.Get().(*rankBufs)
		sc.bufs.avail.Reset(sc.st.facts.avail, sc.rc)
	}
	b := sc.bufs
	b.pos.reset(hits)
	if cap(b.cands) < hits {
		b.cands = make([]rank.Candidate, 0, hits)
	}
	b.cands, b.nsrc, b.hitc = b.cands[:0], b.nsrc[:0], b.hitc[:0]
	// The evidence is read in retriever order, not in order of arrival, so the candidates,
	// their evidence and the floating-point sums of fusion do not depend on which retriever
	// answered first: the same search gives the same scores, to the last bit.
	var orderBuf [int(index.NumKinds)]int
	order := orderBuf[:0]
	for i := range g.Evidence {
		order = append(order, i)
	}
	slices.SortFunc(order, func(x, y int) int { return int(g.Evidence[x].Kind) - int(g.Evidence[y].Kind) })
	// First pass: the candidates, in order of first appearance, how many sources each gets
	// (nsrc), and each hit's candidate (hitc).
	for _, i := range order {
		ev := &g.Evidence[i]
		if ev.Outcome != actors.OK {
			continue
		}
		for _, h := range ev.Hits {
			slot, j := b.pos.find(h.Doc)
			if j < 0 {
				if !sc.allow.Contains(h.Doc) {
					// The final gate (seed 000 §14.2: judge again, never trust that the
					// retrievers filtered): a hit outside what the caller may discover under
					// this request's tenant, status and within never becomes a candidate.
					j = skipped
				} else if sc.st.facts.pack(h.Doc) && sc.emptyPack(h.Doc) {
					j = skipped // everything in it is hidden from the caller: not an answer
				} else {
					j = int32(len(b.cands))
					b.cands = append(b.cands, rank.Candidate{Doc: h.Doc})
					b.nsrc = append(b.nsrc, 0)
				}
				b.pos.set(slot, h.Doc, j)
			}
			b.hitc = append(b.hitc, j)
			if j != skipped {
				b.nsrc[j]++
			}
		}
	}
	// The capabilities and their availability, in a loop of their own: reading them does not
	// depend on the other candidates', so the cache misses of all the candidates overlap
	// (the capabilities themselves, mostly out of cache, are not read: only the candidates
	// shown need them).
	for i := range b.cands {
		c := &b.cands[i]
		c.Cap, c.Availability = gen.Doc(c.Doc), b.avail.Availability(c.Doc)
	}
	// Second pass: every candidate's sources, in the order gathered, carved from one arena.
	n := 0
	for _, k := range b.nsrc {
		n += int(k)
	}
	if cap(b.srcs) < n {
		b.srcs = make([]rank.Source, n)
	}
	b.srcs = b.srcs[:n]
	arena := b.srcs
	for i := range b.cands {
		c := &b.cands[i]
		k := int(b.nsrc[i])
		c.Evidence, arena = arena[:0:k], arena[k:]
	}
	hitc := b.hitc
	for _, i := range order {
		ev := &g.Evidence[i]
		if ev.Outcome != actors.OK {
			continue
		}
		name := ev.Kind.String()
		floor := listFloor(g.Planned, ev)
		for r, h := range ev.Hits {
			j := hitc[0]
			hitc = hitc[1:]
			if j == skipped {
				continue
			}
			c := &b.cands[j]
			c.Evidence = append(c.Evidence, rank.Source{Retriever: name, Rank: r + 1, Raw: h.Score, Floor: floor, Matched: h.Matched})
		}
	}
	cands := b.cands
	noBreakdown := !sc.req.Explain // the breakdown is shown only in an explanation
	w := e.weights
	if v := sc.variant; v != nil && v.Weights != nil {
		w = *v.Weights
	}
	for _, s := range sc.plan {
		if s.Weight > 0 {
			scaleWeight(&w, s.Kind, s.Weight)
		}
	}
	w.NoBreakdown = noBreakdown
	rerank := sc.variant == nil || !sc.variant.NoRerank
	w.Unsorted = rerank // Rerank sorts
	rank.Fuse(cands, w)
	rank.DemoteDeprecated(cands, gen.Deprecated, rank.DeprecatedPenalty, !rerank)
	if rerank {
		ro := e.rerank
		ro.Terms = sc.st.terms
		ro.NoBreakdown = noBreakdown
		rank.Rerank(cands, sc.signals, ro)
	}
	th := *e.thresh.Load()
	sig := sc.signals
	sig.PolicyHidden = sc.policyHidden()
	sig.Serves = sc.packServes
	sig.EmptyAreaFirst = sc.emptyAreaFirst(g)
	res, reason, missing, conf := rank.ResolveConfidence(cands, sig, th)
	if reason == rank.ReasonPolicyHidden && sc.namedIncompatible() {
		reason = rank.ReasonIncompatible // named, discoverable, but made for another os
	}
	if sc.sampling && g.Final {
		sc.sample = rank.SampleOf(cands, sig, sc.expected)
	}
	do := e.diversify
	// The list spreads over packs and intents when the thresholds find a near tie or the
	// request is ambiguous by its form (a browse, a pack, a vague goal): the calibrated
	// confidence says whether to act on the top, not how to lay out the alternatives.
	spread := res
	if th.Model != nil {
		plain := th
		plain.Model = nil
		spread, _, _ = rank.Resolve(cands, sig, plain)
	}
	do.Ambiguous = spread == registry.Ambiguous || res == registry.Ambiguous && (sig.Browse || sig.Vague)
	if sig.Browse && sc.parsed.Scope != "" {
		do.Ambiguous = false // a browse of one pack lists its children: nothing to fold or spread
	}
	do.ExplicitWrite = sc.signals.ExplicitWrite
	do.NoBreakdown = noBreakdown
	var top []rank.Candidate
	if sc.variant != nil && sc.variant.NoDiversify {
		rank.Complete(cands)
		top = cands[:min(sc.req.Limit, len(cands))]
	} else {
		top = rank.Diversify(cands, sc.req.Limit, do)
	}
	if res == registry.Ambiguous && !sig.Browse && len(top) > 0 && top[0].Cap.ResourceType == registry.TypePack {
		// An ambiguous goal answered by a pack of packs ("帮我处理一下开发环境" → maintenance)
		// is a choice among its sub-packs (seed 000 §19): answer those.
		if kids := sc.subPacks(top[0].Doc, cands); len(kids) >= 2 {
			if len(kids) > sc.req.Limit {
				kids = kids[:sc.req.Limit]
			}
			names := make([]string, len(kids))
			for i := range kids {
				names[i] = registry.Leaf(kids[i].Cap.ID)
			}
			top, missing = kids, []string{rank.PackQuestion(sig.Lang, top[0].Cap.ID, names)}
		}
	}

	resp := &registry.SearchResponse{
		Query: sc.req.Query, Scope: scopeOf(sc.req), Resolution: res, Reason: reason,
		Confidence: round4(conf), Decision: registry.Decide(res, reason),
		MissingInformation: missing, Matches: make([]registry.Match, 0, len(top)),
	}
	if len(top) == 0 && sc.emptied != "" {
		resp.ReasonDetail = sc.emptied
	}
	for i := range top {
		resp.Matches = append(resp.Matches, sc.match(i+1, &top[i]))
	}
	resp.Fallback = registry.Fallbacks(resp)
	m := &resp.SearchMeta
	if len(g.Planned) > 0 {
		m.PlannedRetrievers = make([]string, 0, len(g.Planned))
	}
	for _, s := range g.Planned {
		m.PlannedRetrievers = append(m.PlannedRetrievers, s.Kind.String())
		for _, p := range sc.plan {
			if p.Kind == s.Kind {
				m.PlanReasons = append(m.PlanReasons, registry.PlanReason{Retriever: p.Kind.String(), Reason: p.Reason})
			}
		}
	}
	m.CompletedRetrievers, m.TimedOutRetrievers = make([]string, 0, len(g.Evidence)), []string{}
	for _, ev := range g.Evidence {
		switch ev.Outcome {
		case actors.OK:
			m.CompletedRetrievers = append(m.CompletedRetrievers, ev.Kind.String())
		case actors.TimedOut:
			m.TimedOutRetrievers = append(m.TimedOutRetrievers, ev.Kind.String())
		default:
			m.FailedRetrievers = append(m.FailedRetrievers, ev.Kind.String())
		}
	}
	for _, k := range g.Pending {
		switch {
		case !g.Final: // a streamed partial answer: still running, not timed out
			m.PendingRetrievers = append(m.PendingRetrievers, k.String())
		case !slices.Contains(m.TimedOutRetrievers, k.String()):
			m.TimedOutRetrievers = append(m.TimedOutRetrievers, k.String())
		}
	}
	m.CandidateCount = len(cands)
	m.ReturnedCount = len(resp.Matches)
	m.Partial = len(m.TimedOutRetrievers) > 0 || len(m.FailedRetrievers) > 0 || !g.Final
	m.TookUS = time.Since(sc.start).Microseconds()
	m.Generation = gen.Snapshot().Generation
	return resp
}

// emptyPack reports whether none of the pack's descendants is visible to the caller
// (policy only: the request's within, types and side_effect_max filters do not count, so a
// search for packs alone still finds packs). Such a pack is an empty shell for this caller
// ("发一条短信" offline, where the only SMS action is hidden) and is left out of the
// ranking. Results are cached per search.
func (sc *searchCtx) emptyPack(d uint32) bool {
	for _, p := range sc.packs {
		if p.doc == d {
			return p.empty
		}
	}
	gen := sc.st.gen
	if sc.visible == nil {
		sc.visible = sc.allow
		if r := sc.req; r.Within != "" || len(r.Types) > 0 || r.SideEffectMax != "" || sc.sm != nil && len(sc.sm.Filters) > 0 {
			sc.visible = gen.Filter(sc.rc, index.FilterSpec{})
		}
	}
	r := sc.st.packs[d]
	lo, hi := int(r[0]), int(r[1])
	empty := true
	if hi > lo {
		n := sc.visible.Rank(uint32(hi - 1))
		if lo > 0 {
			n -= sc.visible.Rank(uint32(lo - 1))
		}
		empty = n == 0
	}
	sc.packs = append(sc.packs, packSeen{doc: d, empty: empty})
	return empty
}

// subPacks returns the child packs of pack d that the caller may see and that hold
// something visible, as candidates: those ranked in cands first, in rank order, then the
// others in id order.
func (sc *searchCtx) subPacks(d uint32, cands []rank.Candidate) []rank.Candidate {
	gen := sc.st.gen
	id := gen.Doc(d).ID
	r, ok := sc.st.packs[d]
	if !ok {
		return nil
	}
	var out []rank.Candidate
	for k := r[0]; k < r[1]; k++ {
		c := gen.Doc(k)
		if c.ResourceType != registry.TypePack || registry.Parent(c.ID) != id || !sc.allow.Contains(k) || sc.emptyPack(k) {
			continue
		}
		kid := rank.Candidate{Doc: k, Cap: c, Availability: sc.bufs.avail.Availability(k)}
		for i := range cands {
			if cands[i].Doc == k {
				kid = cands[i]
				break
			}
		}
		out = append(out, kid)
	}
	slices.SortStableFunc(out, func(a, b rank.Candidate) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}

// listFloor is the raw score under which ev's retriever returned nothing (rank.Source.Floor):
// the last score when the list reached the step's limit (the retriever cut it there), else 0
// (it returned every match).
func listFloor(plan []actors.Step, ev *actors.Evidence) float64 {
	n := len(ev.Hits)
	if n == 0 {
		return 0
	}
	for i := range plan {
		if plan[i].Kind == ev.Kind && plan[i].Limit > 0 && n >= plan[i].Limit {
			return ev.Hits[n-1].Score
		}
	}
	return 0
}

// policyHidden reports whether an id the query names exists, the caller may discover it,
// and the request's own filters (within, types, side_effect_max) or the environment hid it.
func (sc *searchCtx) policyHidden() bool {
	snap := sc.st.gen.Snapshot()
	for _, id := range sc.parsed.IDs {
		d, ok := snap.DocID(id)
		if !ok || sc.allow.Contains(d) {
			continue
		}
		if policy.Check(snap.Caps[d], sc.rc, registry.GateDiscover).Allowed {
			return true
		}
	}
	return false
}

// namedIncompatible reports whether every id the query names that policyHidden counts is
// made for another os than the caller's (the pre-filter drops what supported_os excludes):
// the answer is then incompatible (seed 004), not policy_hidden.
func (sc *searchCtx) namedIncompatible() bool {
	snap := sc.st.gen.Snapshot()
	found := false
	for _, id := range sc.parsed.IDs {
		d, ok := snap.DocID(id)
		if !ok || sc.allow.Contains(d) {
			continue
		}
		c := snap.Caps[d]
		if !policy.Check(c, sc.rc, registry.GateDiscover).Allowed {
			continue
		}
		if policy.SupportsOS(c, sc.rc.OS) {
			return false
		}
		found = true
	}
	return found
}

func (sc *searchCtx) match(n int, c *rank.Candidate) registry.Match {
	cp := c.Cap
	m := registry.Match{
		Rank: n, ResourceType: cp.ResourceType, ResourceID: cp.ID, Title: cp.Title, Summary: cp.Summary,
		MatchedEntities: nonNil(c.MatchedEntities), MatchedIntents: nonNil(c.MatchedIntents),
		MatchedSymptoms: nonNil(c.MatchedSymptoms),
		SideEffect:      cp.SideEffect, RiskLevel: cp.RiskLevel,
		RequiresConfirmation: policy.NeedsConfirmation(cp),
		Availability:         c.Availability,
		Score:                round4(c.Score),
		NextStep:             registry.NextStep{Tool: "capability_describe", Arguments: map[string]string{"resource_id": cp.ID}},
		Warnings:             registry.DeprecatedWarning(cp, sc.signals.Lang),
	}
	if m.Availability == "" {
		m.Availability = registry.Available
	}
	if m.Availability == registry.Unavailable {
		if _, rs := policy.Availability(cp, sc.rc); len(rs) > 0 {
			m.AvailabilityReasons = rs
		}
	}
	if sc.req.Explain {
		x := &registry.Explanation{Score: slices.Clone(c.Breakdown)}
		if cp.Status == registry.StatusDeprecated {
			x.Score = append(x.Score, registry.ScoreComponent{Name: rank.CompDeprecated, Value: -rank.DeprecatedPenalty})
		}
		for _, s := range c.Evidence {
			x.Evidence = append(x.Evidence, registry.EvidenceItem{Retriever: s.Retriever, Rank: s.Rank, RawScore: round4(s.Raw), Matched: s.Matched})
		}
		m.Explain = x
	}
	return m
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

func round4(f float64) float64 {
	return math.Round(f*1e4) / 1e4
}

// Probe runs one retriever alone on the current generation — no actors, fusion or rerank —
// with the same normalisation and pre-filter as Search, and returns the capabilities it
// ranks, best first. It is for evaluation and debugging.
func (e *Engine) Probe(ctx context.Context, retriever string, req registry.SearchRequest, rc registry.RuntimeContext) ([]*registry.Capability, error) {
	k, err := index.ParseKind(retriever)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	job, sc, err := e.prepare(ctx, &req, &rc, false)
	if err != nil {
		return nil, err
	}
	hits, err := job.Retrieve(ctx, k, job.Query, job.Allow, req.Limit)
	if err != nil {
		return nil, err
	}
	gen := sc.st.gen
	out := make([]*registry.Capability, len(hits))
	for i, h := range hits {
		out[i] = gen.Doc(h.Doc)
	}
	return out, nil
}

// CalibrationSample runs a search and returns its response with the sample its final
// ranking gives rank.Calibrate (labelled with the resolution the case expects) and whose
// Features rank.Fit learns from.
func (e *Engine) CalibrationSample(ctx context.Context, req registry.SearchRequest, rc registry.RuntimeContext, expected registry.Resolution) (*registry.SearchResponse, rank.Sample, error) {
	e.busy.Add(1)
	defer e.busy.Add(-1)
	job, sc, err := e.prepare(ctx, &req, &rc, false)
	if err != nil {
		return nil, rank.Sample{}, err
	}
	sc.expected, sc.sampling = expected, true
	resp, err := e.sys.Search(ctx, job)
	if err != nil {
		return nil, rank.Sample{}, err
	}
	sc.release()
	return resp, sc.sample, nil
}

// skipped marks a document in a docTable that is not a candidate (an empty pack).
const skipped = -2

// docTable maps document ids to candidate positions for one rank call: a small
// open-addressing table (linear probing) sized from the number of hits, reused across
// the calls of one search. It replaces a map, whose hashing and growth cost more.
type docTable struct {
	keys []uint32 // doc+1; 0 is an empty slot
	vals []int32
	mask uint32
}

// reset empties the table and makes room for n documents at a load of at most one half.
func (t *docTable) reset(n int) {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	if len(t.keys) < size {
		t.keys = make([]uint32, size)
		t.vals = make([]int32, size)
	} else {
		size = len(t.keys)
		clear(t.keys)
	}
	t.mask = uint32(size - 1)
}

// find returns doc's slot and its value, or the empty slot where it belongs and -1.
func (t *docTable) find(doc uint32) (int, int32) {
	k := doc + 1
	i := (k * 0x9E3779B1) & t.mask
	for {
		switch t.keys[i] {
		case k:
			return int(i), t.vals[i]
		case 0:
			return int(i), -1
		}
		i = (i + 1) & t.mask
	}
}

// set stores v for doc in the slot find returned.
func (t *docTable) set(slot int, doc uint32, v int32) {
	t.keys[slot], t.vals[slot] = doc+1, v
}

// scaleWeight multiplies retriever k's fusion weight in w by f (a plan step's Weight).
func scaleWeight(w *rank.Weights, k index.Kind, f float64) {
	switch k {
	case index.Exact:
		w.Exact *= f
	case index.Lexical:
		w.Lexical *= f
	case index.Semantic:
		w.Semantic *= f
	case index.Metadata:
		w.Metadata *= f
	case index.Hierarchy:
		w.Hierarchy *= f
	case index.History:
		w.History *= f
	}
}
