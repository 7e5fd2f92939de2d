package index

import (
	"github.com/RoaringBitmap/roaring/v2"
)

var historyMatched = []string{"history"}

// retrieveHistory ranks the caller's past uses (Options.History, id → decayed weight) among
// the allowed documents, heaviest first. It is a weak signal; without a HistorySource it
// finds nothing.
func (g *Generation) retrieveHistory(q *Query, allow *roaring.Bitmap, limit int) []Hit {
	if g.history == nil || (q.User == "" && q.Project == "") {
		return nil
	}
	uses := g.history.Uses(q.User, q.Project)
	if len(uses) == 0 {
		return nil
	}
	s := getScratch()
	defer putScratch(s)
	s.top.reset(limit)
	for id, w := range uses {
		d, ok := g.snap.DocID(id)
		if !ok || w <= 0 || (allow != nil && !allow.Contains(d)) {
			continue
		}
		s.top.push(cand{doc: d, score: float32(w), mask: 1})
	}
	return hitsOf(s.top.best(), func(uint32) []string { return historyMatched })
}
