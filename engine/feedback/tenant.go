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
	// post maps a term to the indexes of the learned searches holding it.
	post map[string][]int32
	// norms holds per learned search Σ idf² of its terms, with the idf of when it was
	// computed: all of them by refresh when learned held normN searches, each later one
	// when it was learned. stale says learned has grown by a sixteenth since normN (or was
	// cut), so that refresh must recompute them.
	norms []float64
	normN int
	stale bool
	caps  map[string]*counts
	tot   Totals
}

// learned is a successful search: who searched, the capability it led to, when, and the
// search's distinct terms.
type learned struct {
	user, id string
	at       int64
	terms    []string
}

type counts struct{ searched, described, ran, succeeded int }

func newTenant() *tenant {
	return &tenant{sessions: map[string]*store.FeedbackRecord{}, caps: map[string]*counts{}, post: map[string][]int32{}}
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
	l := learned{user: rec.User, id: id, at: rec.At.UnixNano(), terms: Terms(rec.Query)}
	i := int32(len(t.learned))
	t.learned = append(t.learned, l)
	for _, term := range l.terms {
		t.post[term] = append(t.post[term], i)
	}
	t.norms = append(t.norms, t.norm(l.terms))
	if len(t.learned) > maxLearned {
		// forget the oldest quarter, and index the rest again
		slices.SortStableFunc(t.learned, func(a, b learned) int { return cmp.Compare(a.at, b.at) })
		t.learned = slices.Delete(t.learned, 0, len(t.learned)-maxLearned*3/4)
		t.post = map[string][]int32{}
		for i, l := range t.learned {
			for _, term := range l.terms {
				t.post[term] = append(t.post[term], int32(i))
			}
		}
		t.stale = true
		t.refresh()
	}
	if len(t.learned) >= t.normN+t.normN/16+1 {
		t.stale = true
	}
}

// norm returns Σ idf² of terms with the current postings.
func (t *tenant) norm(terms []string) float64 {
	n, s := len(t.learned), 0.0
	for _, term := range terms {
		w := idf(n, len(t.post[term]))
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

// idf weighs a term held by df of n learned searches.
func idf(n, df int) float64 { return math.Log(1 + float64(n)/float64(df+1)) }

// refresh recomputes the norms of every learned search with the current idf.
func (t *tenant) refresh() {
	if !t.stale {
		return
	}
	t.norms = t.norms[:0]
	for _, l := range t.learned {
		t.norms = append(t.norms, t.norm(l.terms))
	}
	t.normN, t.stale = len(t.learned), false
}

// votes answers Recorder.Votes for distinct query terms at time now (unix nanoseconds).
func (t *tenant) votes(terms []string, opt Options, now int64) []index.Vote {
	n := len(t.learned)
	if n == 0 || len(terms) == 0 {
		return nil
	}
	qn := 0.0
	acc := accPool.Get().(*accum)
	defer accPool.Put(acc)
	acc.reset(n)
	for _, term := range terms {
		ps := t.post[term]
		w := idf(n, len(ps))
		qn += w * w
		for _, i := range ps {
			acc.add(i, w*w)
		}
	}
	type userCap struct{ user, id string }
	per := map[userCap]float64{}
	sessions := map[string]int{}
	for _, i := range acc.touched {
		sim := acc.dot[i] / math.Sqrt(qn*t.norms[i])
		if sim < opt.MinSimilarity {
			continue
		}
		l := &t.learned[i]
		per[userCap{l.user, l.id}] += sim * decay(time.Duration(now-l.at), opt.HalfLife)
		sessions[l.id]++
	}
	if len(per) == 0 {
		return nil
	}
	// miss[id] = Π over users (1 − min(cap, the user's weight)): the strength of id is
	// 1 − miss, the chance that not every user's evidence is wrong.
	miss := map[string]float64{}
	for k, w := range per {
		m, ok := miss[k.id]
		if !ok {
			m = 1
		}
		miss[k.id] = m * (1 - min(w, opt.UserCap))
	}
	out := make([]index.Vote, 0, len(miss))
	for id, m := range miss {
		out = append(out, index.Vote{ID: id, Weight: 1 - m, Sessions: sessions[id]})
	}
	sortVotes(out)
	return out
}

// accum accumulates the dot products of one query with the learned searches: dot is
// dense, touched lists the indexes set, so that reset clears only those.
type accum struct {
	dot     []float64
	touched []int32
}

var accPool = sync.Pool{New: func() any { return new(accum) }}

func (a *accum) reset(n int) {
	for _, i := range a.touched {
		a.dot[i] = 0
	}
	a.touched = a.touched[:0]
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
