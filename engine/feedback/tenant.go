package feedback

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry/store"
)

// tenant holds one tenant's sessions, what its successful sessions taught and its funnel.
// mu guards everything.
type tenant struct {
	mu sync.RWMutex
	// sessions maps a live session to its current (latest) search.
	sessions map[string]*store.FeedbackRecord
	// learned are the successful searches: one per (search, capability run successfully).
	learned []learned
	// dict numbers the terms of the learned searches (names is its inverse); post holds by
	// term number the indexes of the learned searches holding it (ascending): the inverted
	// index votes walks.
	dict  map[string]int32
	names []string
	post  [][]int32
	// capTerm counts the learned searches holding a term that led to one capability, and
	// capDF by term number the capabilities a term led to (the keys of capTerm with that
	// term). A term weighs by how few of the capabilities learned it led to (idf), not by
	// how many searches held it: a phrase every user says whatever they want ("help me",
	// "the place mentioned in my notes") led to many capabilities and weighs little,
	// however often one capability was searched for with it.
	capTerm map[termCap]int32
	capDF   []int32
	// capNum and userNum number the capabilities and users of learned (capIDs is capNum's
	// inverse), so that votes adds up by numbers.
	capNum  map[string]int32
	capIDs  []string
	userNum map[string]int32
	// norms holds per learned search Σ idf² of its terms, with the idf of when it was
	// computed: all of them by refresh when the tenant had learned normN searches of normC
	// capabilities, each later one when it was learned. stale says either has grown by a
	// sixteenth since (or learned was cut), so that refresh must recompute them.
	// minNorm is the least of norms, votes' bound for pruning.
	norms   []float64
	minNorm float64
	normN   int
	normC   int
	stale   bool
	caps    map[string]*counts
	tot     Totals
}

// termCap is a (term, capability) pair of capTerm.
type termCap struct {
	term int32
	id   string
}

// learned is a successful search: who searched, the capability it led to, when, and the
// search's distinct terms (numbers of tenant.dict), ascending.
type learned struct {
	user, id string
	cap, usr int32 // numbers of id and user (tenant.capNum, tenant.userNum)
	at       int64
	terms    []int32
}

type counts struct{ searched, described, ran, succeeded int }

func newTenant() *tenant {
	return &tenant{sessions: map[string]*store.FeedbackRecord{}, caps: map[string]*counts{}, dict: map[string]int32{},
		capTerm: map[termCap]int32{}, capNum: map[string]int32{}, userNum: map[string]int32{}}
}

func (t *tenant) count(id string) *counts {
	c := t.caps[id]
	if c == nil {
		c = &counts{}
		t.caps[id] = c
	}
	return c
}

// snapshot returns a copy of rec that shares nothing with it.
func snapshot(rec *store.FeedbackRecord) store.FeedbackRecord {
	c := *rec
	c.Shown, c.Described = slices.Clone(c.Shown), slices.Clone(c.Described)
	c.Ran, c.Succeeded = slices.Clone(c.Ran), slices.Clone(c.Succeeded)
	return c
}

// searched makes rec its session's current search and counts it.
func (t *tenant) searched(rec *store.FeedbackRecord, maxSessions int) store.FeedbackRecord {
	if cur := t.sessions[rec.Session]; cur != nil && !rec.At.After(cur.At) {
		rec.At = cur.At.Add(time.Nanosecond) // two searches of a session never share a key
	}
	t.sessions[rec.Session] = rec
	t.tot.Searches++
	if rec.Clarify {
		t.tot.Clarified++
	}
	for _, id := range rec.Shown {
		t.count(id).searched++
	}
	t.evict(maxSessions)
	return snapshot(rec)
}

// evict forgets the oldest eighth of the sessions once there are more than max.
func (t *tenant) evict(max int) {
	if len(t.sessions) <= max {
		return
	}
	ats := make([]int64, 0, len(t.sessions))
	for _, r := range t.sessions {
		ats = append(ats, r.At.UnixNano())
	}
	slices.Sort(ats)
	cut := ats[len(ats)/8]
	for s, r := range t.sessions {
		if r.At.UnixNano() <= cut {
			delete(t.sessions, s)
		}
	}
}

func (t *tenant) described(session, id string) (store.FeedbackRecord, bool) {
	rec := t.sessions[session]
	if rec == nil {
		return store.FeedbackRecord{}, false
	}
	if !slices.Contains(rec.Described, id) {
		if len(rec.Described) == 0 {
			t.tot.SearchesDescribed++
		}
		rec.Described = append(rec.Described, id)
		t.tot.Described++
		t.count(id).described++
	}
	return snapshot(rec), true
}

func (t *tenant) ran(session, id string, ok bool, now time.Time, maxLearned int) (store.FeedbackRecord, bool) {
	rec := t.sessions[session]
	if rec == nil {
		return store.FeedbackRecord{}, false
	}
	if !slices.Contains(rec.Ran, id) {
		rec.Ran = append(rec.Ran, id)
		t.countRan(rec, id)
	}
	if ok && !slices.Contains(rec.Succeeded, id) {
		rec.Succeeded = append(rec.Succeeded, id)
		t.countSucceeded(rec, id, maxLearned)
	}
	return snapshot(rec), true
}

func (t *tenant) countRan(rec *store.FeedbackRecord, id string) {
	t.tot.Ran++
	t.count(id).ran++
	if slices.Contains(rec.Described, id) {
		t.tot.DescribedRan++
	}
}

// countSucceeded counts a success and learns it when the search led there (showed the
// capability, or the session described it after the search).
func (t *tenant) countSucceeded(rec *store.FeedbackRecord, id string, maxLearned int) {
	t.tot.Succeeded++
	t.count(id).succeeded++
	if !slices.Contains(rec.Shown, id) && !slices.Contains(rec.Described, id) {
		return
	}
	t.learn(rec.User, id, rec.At.UnixNano(), Terms(rec.Query))
	if len(t.learned) > maxLearned {
		// forget the oldest quarter, and index the rest again (numbering their terms anew,
		// so that the forgotten ones' terms go too)
		slices.SortStableFunc(t.learned, func(a, b learned) int { return cmp.Compare(a.at, b.at) })
		kept := slices.Clone(t.learned[len(t.learned)-maxLearned*3/4:])
		names := t.names
		t.learned, t.norms, t.names, t.post, t.capDF = t.learned[:0], t.norms[:0], nil, nil, nil
		clear(t.dict)
		clear(t.capTerm)
		clear(t.capNum)
		clear(t.userNum)
		t.capIDs = nil
		for _, l := range kept {
			terms := make([]string, len(l.terms))
			for j, x := range l.terms {
				terms[j] = names[x]
			}
			t.learn(l.user, l.id, l.at, terms)
		}
		t.stale = true
		t.refresh()
	}
	if len(t.learned) >= t.normN+t.normN/16+1 || len(t.capIDs) >= t.normC+t.normC/16+1 {
		t.stale = true
	}
}

// learn indexes a successful search of user at (unix nanoseconds) with distinct terms that
// led to capability id.
func (t *tenant) learn(user, id string, at int64, terms []string) {
	i := int32(len(t.learned))
	l := learned{user: user, id: id, at: at, terms: make([]int32, 0, len(terms))}
	c, ok := t.capNum[id]
	if !ok {
		c = int32(len(t.capIDs))
		t.capNum[id] = c
		t.capIDs = append(t.capIDs, id)
	}
	u, ok := t.userNum[user]
	if !ok {
		u = int32(len(t.userNum))
		t.userNum[user] = u
	}
	l.cap, l.usr = c, u
	for _, term := range terms {
		x, ok := t.dict[term]
		if !ok {
			x = int32(len(t.names))
			t.dict[term] = x
			t.names = append(t.names, term)
			t.post = append(t.post, nil)
			t.capDF = append(t.capDF, 0)
		}
		l.terms = append(l.terms, x)
		t.post[x] = append(t.post[x], i)
		k := termCap{x, id}
		if t.capTerm[k]++; t.capTerm[k] == 1 {
			t.capDF[x]++
		}
	}
	slices.Sort(l.terms)
	t.learned = append(t.learned, l)
	n := t.norm(l.terms)
	if len(t.norms) == 0 || n < t.minNorm {
		t.minNorm = n
	}
	t.norms = append(t.norms, n)
}

// norm returns Σ idf² of terms (numbers of dict) with the current index.
func (t *tenant) norm(terms []int32) float64 {
	s := 0.0
	for _, x := range terms {
		w := t.idf(t.capDF[x])
		s += w * w
	}
	return s
}

// load counts a stored record as the live path counted it.
func (t *tenant) load(rec *store.FeedbackRecord, opt Options) {
	r := snapshot(rec)
	if cur := t.sessions[r.Session]; cur == nil || r.At.After(cur.At) {
		t.sessions[r.Session] = &r
	}
	t.tot.Searches++
	if r.Clarify {
		t.tot.Clarified++
	}
	for _, id := range r.Shown {
		t.count(id).searched++
	}
	if len(r.Described) > 0 {
		t.tot.SearchesDescribed++
	}
	for _, id := range r.Described {
		t.tot.Described++
		t.count(id).described++
	}
	for _, id := range r.Ran {
		t.countRan(&r, id)
	}
	for _, id := range r.Succeeded {
		t.countSucceeded(&r, id, opt.MaxLearned)
	}
	t.evict(opt.MaxSessions)
}

// idf weighs a term by the capabilities it led to: log(1 + C/(df+1)) for a term that led to
// df of the C capabilities learned.
func (t *tenant) idf(df int32) float64 {
	return math.Log(1 + float64(len(t.capIDs))/float64(df+1))
}

// refresh recomputes the norms of every learned search with the current idf.
func (t *tenant) refresh() {
	if !t.stale {
		return
	}
	t.norms = t.norms[:0]
	for _, l := range t.learned {
		n := t.norm(l.terms)
		if len(t.norms) == 0 || n < t.minNorm {
			t.minNorm = n
		}
		t.norms = append(t.norms, n)
	}
	t.normN, t.normC, t.stale = len(t.learned), len(t.capIDs), false
}

// votes answers Recorder.Votes for distinct query terms at time now (unix nanoseconds).
func (t *tenant) votes(terms []string, opt Options, now int64) []index.Vote {
	acc := accPool.Get().(*accum)
	defer accPool.Put(acc)
	if !t.similar(terms, opt.MinSupport, acc) {
		return nil
	}
	// the passing searches' weights, by capability and user: every search at least
	// MinSupport like the query, and whether it is at least MinSimilarity like it (lead)
	pass := acc.pass[:0]
	for _, i := range acc.touched {
		sim := acc.dot[i] / math.Sqrt(acc.qn*t.norms[i])
		if sim < opt.MinSupport {
			continue
		}
		l := &t.learned[i]
		pass = append(pass, passed{cap: l.cap, usr: l.usr, lead: sim >= opt.MinSimilarity, sim: sim, at: i,
			w: sim * decay(time.Duration(now-l.at), opt.HalfLife)})
	}
	acc.pass = pass
	if len(pass) == 0 {
		return nil
	}
	agreed := t.consensus(pass, opt)
	slices.SortStableFunc(pass, func(a, b passed) int {
		if c := cmp.Compare(a.cap, b.cap); c != 0 {
			return c
		}
		return cmp.Compare(a.usr, b.usr)
	})
	// A capability's strength is 1 − Π over users (1 − min(cap, the user's weight)): the
	// chance that not every user's evidence is wrong. A capability no search leads
	// (at least MinSimilarity like the query) gets no vote: supporting searches only add
	// to a lead.
	var out []index.Vote
	for i := 0; i < len(pass); {
		c, miss, j, led := pass[i].cap, 1.0, i, false
		for j < len(pass) && pass[j].cap == c {
			u, w := pass[j].usr, 0.0
			for ; j < len(pass) && pass[j].cap == c && pass[j].usr == u; j++ {
				w += pass[j].w
				led = led || pass[j].lead
			}
			miss *= 1 - min(w, opt.UserCap)
		}
		switch {
		case led:
			out = append(out, index.Vote{ID: t.capIDs[c], Weight: 1 - miss, Sessions: j - i})
		case agreed.ok && agreed.cap == c:
			out = append(out, index.Vote{ID: t.capIDs[c], Weight: min(agreed.w, opt.UserCap), Sessions: agreed.sessions})
		}
		i = j
	}
	sortVotes(out)
	return out
}

// agreement is the capability the query's nearest past searches agree on (consensus).
type agreement struct {
	ok       bool
	cap      int32
	w        float64 // its best search's decayed similarity × its share
	sessions int
}

// consensus finds, among the opt.ConsensusK searches of pass most like the query (at least
// opt.ConsensusSim like it; ties by learned order), the capability whose searches hold at
// least opt.Consensus of their similarity.
func (t *tenant) consensus(pass []passed, opt Options) agreement {
	// the nearest, by selection into near (most like first): K is small, pass may be long
	var buf [8]*passed
	near := buf[:0]
	if opt.ConsensusK > len(buf) {
		near = make([]*passed, 0, opt.ConsensusK)
	}
	nearer := func(a, b *passed) bool { return a.sim > b.sim || a.sim == b.sim && a.at < b.at }
	for x := range pass {
		p := &pass[x]
		if p.sim < opt.ConsensusSim || len(near) == opt.ConsensusK && !nearer(p, near[len(near)-1]) {
			continue
		}
		if len(near) < opt.ConsensusK {
			near = append(near, nil)
		}
		k := len(near) - 1
		for ; k > 0 && nearer(p, near[k-1]); k-- {
			near[k] = near[k-1]
		}
		near[k] = p
	}
	total := 0.0
	for _, p := range near {
		total += p.sim
	}
	for _, p := range near {
		share, best, n := 0.0, 0.0, 0
		for _, o := range near {
			if o.cap == p.cap {
				share += o.sim
				best = max(best, o.w)
				n++
			}
		}
		if share /= total; share >= opt.Consensus {
			return agreement{ok: true, cap: p.cap, w: best * share, sessions: n}
		}
	}
	return agreement{}
}

// passed is a learned search at or above the least support: its capability, its user,
// its decayed similarity and whether it reaches the least similarity (leads a vote).
type passed struct {
	cap, usr int32
	at       int32   // the search's index in tenant.learned
	sim, w   float64 // its similarity, and that decayed with its age
	lead     bool
}

// similar accumulates into acc the dot products with the query's terms of every learned
// search that may reach cosine minSim, and the query's Σ idf² (acc.qn); it reports whether
// there is any.
//
// It walks the inverted index with MaxScore pruning: the query's terms go rarest (heaviest)
// first, and once the terms left weigh too little together for a search that holds none of
// the terms walked so far to reach minSim (Σ of their idf² < minSim·√(qn·minNorm), minNorm
// the least norm), they find no new search: each adds only to the searches already found,
// by the shorter of its posting list and a lookup per search found in their own sorted
// terms. A common term ("find", held by every search) then costs a lookup per candidate,
// not a step per learned search, and the searches it alone would have found are never
// scored. Each
// search's dot product sums the same addends in the same order either way, so the answer is
// the exhaustive walk's, bit for bit (TestVotesPruningExact).
func (t *tenant) similar(terms []string, minSim float64, acc *accum) bool {
	n := len(t.learned)
	if n == 0 || len(terms) == 0 {
		return false
	}
	acc.reset(n)
	qs := acc.qterms[:0]
	for _, term := range terms {
		x, ok := t.dict[term]
		if !ok {
			w := t.idf(0)
			acc.qn += w * w
			continue
		}
		w := t.idf(t.capDF[x])
		acc.qn += w * w
		qs = append(qs, qterm{term: x, w2: w * w, ps: t.post[x]})
	}
	acc.qterms = qs
	if len(qs) == 0 {
		return false
	}
	slices.SortFunc(qs, func(a, b qterm) int {
		if c := cmp.Compare(b.w2, a.w2); c != 0 {
			return c
		}
		return cmp.Compare(a.term, b.term)
	})
	left := 0.0 // Σ w² of qs[k:]
	for _, q := range qs {
		left += q.w2
	}
	floor := minSim * math.Sqrt(acc.qn*t.minNorm)
	k := 0
	for ; k < len(qs) && (left >= floor || math.IsNaN(floor)); k++ {
		for _, i := range qs[k].ps {
			acc.add(i, qs[k].w2)
		}
		left -= qs[k].w2
	}
	// The terms left add to the searches found, each the cheaper way: its posting list
	// walked, skipping the searches not found, or a lookup per search found.
	for _, q := range qs[k:] {
		if len(q.ps) <= lookupCost*len(acc.touched) {
			for _, i := range q.ps {
				if acc.dot[i] != 0 {
					acc.dot[i] += q.w2
				}
			}
			continue
		}
		for _, i := range acc.touched {
			if _, ok := slices.BinarySearch(t.learned[i].terms, q.term); ok {
				acc.dot[i] += q.w2
			}
		}
	}
	return len(acc.touched) > 0
}

// lookupCost is about what a binary search of a learned search's terms costs, in steps of
// a posting list walk.
const lookupCost = 8

// qterm is one of a query's terms that learned searches hold: its number, idf² and
// posting list.
type qterm struct {
	term int32
	w2   float64
	ps   []int32
}

// accum accumulates the dot products of one query with the learned searches: dot is
// dense, touched lists the indexes set, so that reset clears only those.
type accum struct {
	dot     []float64
	touched []int32
	qn      float64
	qterms  []qterm
	pass    []passed
}

var accPool = sync.Pool{New: func() any { return new(accum) }}

func (a *accum) reset(n int) {
	for _, i := range a.touched {
		a.dot[i] = 0
	}
	a.touched, a.qn = a.touched[:0], 0
	if len(a.dot) < n {
		a.dot = make([]float64, n)
	}
}

func (a *accum) add(i int32, v float64) {
	if a.dot[i] == 0 {
		a.touched = append(a.touched, i)
	}
	a.dot[i] += v
}

// Terms returns the distinct terms a search's text is compared by: its analysed terms
// (index/text) and the shared lexicon's concepts it names, as "~<concept id>".
func Terms(query string) []string {
	terms, ids := text.AppendTermsConceptIDs(nil, nil, query)
	for _, id := range ids {
		terms = append(terms, "~"+strconv.Itoa(int(id)))
	}
	return uniqueTerms(terms)
}

// Totals are a tenant's (or all tenants') funnel counts.
type Totals struct {
	// Searches recorded, those that asked the caller to clarify, and those followed by at
	// least one describe.
	Searches, Clarified, SearchesDescribed int
	// Described counts (search, capability) describes; DescribedRan those of them run after.
	Described, DescribedRan int
	// Ran counts (search, capability) runs to an outcome; Succeeded the successful ones.
	Ran, Succeeded int
}

func (a *Totals) add(b Totals) {
	a.Searches += b.Searches
	a.Clarified += b.Clarified
	a.SearchesDescribed += b.SearchesDescribed
	a.Described += b.Described
	a.DescribedRan += b.DescribedRan
	a.Ran += b.Ran
	a.Succeeded += b.Succeeded
}

// Rates returns search → describe, describe → run, run success and clarification rates
// (0 when their denominator is 0).
func (a Totals) Rates() (searchToDescribe, describeToRun, runSuccess, clarification float64) {
	return ratio(a.SearchesDescribed, a.Searches), ratio(a.DescribedRan, a.Described),
		ratio(a.Succeeded, a.Ran), ratio(a.Clarified, a.Searches)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
