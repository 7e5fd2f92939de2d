package index

import (
	"math"

	"github.com/RoaringBitmap/roaring/v2"
)

var historyMatched = []string{"history"}

// retrieveHistory ranks, among the allowed documents, the caller's past uses
// (Options.History, id → decayed weight u) and the votes of the tenant's past successful
// sessions like the query (Options.Feedback, strength v in 0..1), strongest first. Scores
// are absolute strengths in 0..1, which fusion does not rescale: a use weight u counts as
// UseShare·(1 − 2^−u) (one use ⅒, many up to ⅕), and a document with both counts
// 1 − (1−use)(1−v). A vote's
// evidence names how many sessions are behind it, never their queries. It is a weak signal;
// without either source it finds nothing.
func (g *Generation) retrieveHistory(q *Query, allow *roaring.Bitmap, limit int) []Hit {
	var uses map[string]float64
	if g.history != nil && (q.User != "" || q.Project != "") {
		uses = g.history.Uses(q.User, q.Project)
	}
	var votes []Vote
	if g.fb != nil && q.Tenant != "" {
		votes = g.fb.Votes(q.Tenant, q.Text)
	}
	if len(uses) == 0 && len(votes) == 0 {
		return nil
	}
	if len(votes) == 0 {
		return g.topUses(uses, allow, limit)
	}
	// Votes (and the uses of the same documents) by document.
	type voted struct {
		w        float64
		sessions int
	}
	byDoc := make(map[uint32]voted, len(votes))
	for _, v := range votes {
		d, ok := g.snap.DocID(v.ID)
		if !ok || v.Weight <= 0 || (allow != nil && !allow.Contains(d)) {
			continue
		}
		x := byDoc[d]
		x.w = orStrength(x.w, min(v.Weight, 1))
		x.sessions += v.Sessions
		byDoc[d] = x
	}
	s := getScratch()
	defer putScratch(s)
	s.top.reset(limit)
	for id, w := range uses {
		d, ok := g.snap.DocID(id)
		if !ok || w <= 0 || (allow != nil && !allow.Contains(d)) {
			continue
		}
		if x, ok := byDoc[d]; ok {
			x.w = orStrength(x.w, useStrength(w))
			byDoc[d] = x
			continue
		}
		s.top.push(cand{doc: d, score: float32(useStrength(w)), mask: 1})
	}
	for d, x := range byDoc {
		s.top.push(cand{doc: d, score: float32(x.w), mask: 1})
	}
	best := s.top.best()
	if len(best) == 0 {
		return nil
	}
	hits := make([]Hit, len(best))
	for i, c := range best {
		hits[i] = Hit{Doc: c.doc, Score: float64(c.score), Matched: historyMatched}
		if x, ok := byDoc[c.doc]; ok {
			m := sessionsMatched(x.sessions)
			if _, used := uses[g.snap.Caps[c.doc].ID]; used {
				hits[i].Matched = []string{"history", m}
			} else {
				hits[i].Matched = []string{m}
			}
		}
	}
	return hits
}

// topUses ranks the caller's past uses alone.
func (g *Generation) topUses(uses map[string]float64, allow *roaring.Bitmap, limit int) []Hit {
	s := getScratch()
	defer putScratch(s)
	s.top.reset(limit)
	for id, w := range uses {
		d, ok := g.snap.DocID(id)
		if !ok || w <= 0 || (allow != nil && !allow.Contains(d)) {
			continue
		}
		s.top.push(cand{doc: d, score: float32(useStrength(w)), mask: 1})
	}
	return hitsOf(s.top.best(), func(uint32) []string { return historyMatched })
}

// UseShare is the most a caller's own past uses give a document of the history
// retriever's strength: their query-independent prior counts a fifth of what the tenant's
// sessions like the query can give, so that at the default history weight (2.0) it stays
// within the 0.4 it had as a retriever of its own.
const UseShare = 1.0 / 5

// useStrength maps a decayed use weight to a strength in 0..UseShare: UseShare·(1 − 2^−u).
func useStrength(u float64) float64 { return -UseShare * math.Expm1(-u*math.Ln2) }

// orStrength joins two independent strengths in 0..1: 1 − (1−a)(1−b).
func orStrength(a, b float64) float64 { return 1 - (1-a)*(1-b) }
