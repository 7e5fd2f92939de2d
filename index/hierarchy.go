package index

import (
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/registry"
)

// treeIndex is the pack tree in docID terms.
type treeIndex struct {
	depth    []uint8  // number of dots in the id
	childOff []uint32 // children of doc d are child[childOff[d]:childOff[d+1]]
	child    []uint32
	roots    []uint32 // docs without a parent capability
}

// Scores of the hierarchy retriever: the scope pack, then descendants by depth (1/(1+depth)
// times at most 1.1 for query-term overlap, so depths never interleave up to depth 10), then
// sibling packs.
const (
	hierScope   = 1.0
	hierSibling = 0.05
)

func (g *Generation) buildTree() {
	t := &g.tree
	caps := g.snap.Caps
	t.depth = make([]uint8, g.n)
	parent := make([]int32, g.n)
	count := make([]uint32, g.n+1)
	for d, c := range caps {
		t.depth[d] = uint8(min(strings.Count(c.ID, "."), 255))
		parent[d] = -1
		if p, ok := g.snap.DocID(registry.Parent(c.ID)); ok {
			parent[d] = int32(p)
			count[p]++
		} else {
			t.roots = append(t.roots, uint32(d))
		}
	}
	t.childOff = make([]uint32, g.n+1)
	for d := range g.n {
		t.childOff[d+1] = t.childOff[d] + count[d]
	}
	t.child = make([]uint32, t.childOff[g.n])
	fill := make([]uint32, g.n)
	copy(fill, t.childOff[:g.n])
	for d := range g.n { // ascending, so each child list is sorted
		if p := parent[d]; p >= 0 {
			t.child[fill[p]] = uint32(d)
			fill[p]++
		}
	}
}

func (t *treeIndex) children(d uint32) []uint32 { return t.child[t.childOff[d]:t.childOff[d+1]] }

// isPack reports whether doc d is a pack.
func (g *Generation) isPack(d uint32) bool { return g.pack[d] }

// scope finds the pack a hierarchy query is about: q.Within (an action's parent when it
// names an action), else a pack id in q.IDs, else when browsing the allowed pack whose words
// best match the terms. ok is false when there is none.
func (g *Generation) scope(q *Query, terms []string, allow *roaring.Bitmap) (d uint32, ok bool) {
	lookup := func(id string) (uint32, bool) {
		id = strings.TrimSuffix(stripVersion(normName(id)), ".")
		d, ok := g.snap.DocID(id)
		for ok && !g.isPack(d) {
			d, ok = g.snap.DocID(registry.Parent(g.snap.Caps[d].ID))
		}
		return d, ok
	}
	if q.Within != "" {
		return lookup(q.Within)
	}
	for _, id := range q.IDs {
		if d, ok := g.snap.DocID(stripVersion(normName(id))); ok && g.isPack(d) {
			return d, true
		}
	}
	if !q.Browse || len(terms) == 0 {
		return 0, false
	}
	return g.votePack(q, allow)
}

// votePack picks the pack the lexical hits of q point at: each of the best lexical hits
// votes its score for itself (when a pack) and half as much again for each level up, so the
// pack that holds the best matches wins over both a lone title match elsewhere and its own
// ancestors. Ties go to the deeper pack.
func (g *Generation) votePack(q *Query, allow *roaring.Bitmap) (uint32, bool) {
	hits := g.retrieveLexical(q, allow, 16)
	var votes map[uint32]float64
	for _, h := range hits {
		w := h.Score
		var id string
		for d, ok := h.Doc, true; ok; d, ok = g.snap.DocID(registry.Parent(id)) {
			id = g.snap.Caps[d].ID
			if g.isPack(d) && (allow == nil || allow.Contains(d)) {
				if votes == nil {
					votes = map[uint32]float64{}
				}
				votes[d] += w
			}
			w /= 2
		}
	}
	var best uint32
	bestScore := 0.0
	for p, sc := range votes {
		if sc > bestScore || sc == bestScore && (g.tree.depth[p] > g.tree.depth[best] || g.tree.depth[p] == g.tree.depth[best] && p < best) {
			best, bestScore = p, sc
		}
	}
	return best, bestScore > 0
}

// retrieveHierarchy lists a scope: the pack first, then its descendants by depth (closer
// first, ties broken by query-term overlap), then its sibling packs. Browsing with no scope
// lists the roots and their children.
func (g *Generation) retrieveHierarchy(q *Query, allow *roaring.Bitmap, limit int) []Hit {
	terms := queryTerms(q)
	root, ok := g.scope(q, terms, allow)
	if !ok && !q.Browse {
		return nil
	}
	s := getScratch()
	defer putScratch(s)
	acc, _ := s.dense(g.n)
	s.top.reset(limit)
	visible := func(d uint32) bool { return allow == nil || allow.Contains(d) }

	// query-term overlap inside the listed range
	lo, hi := 0, g.n
	if ok {
		_, lo, hi = g.subtree(g.snap.Caps[root].ID)
	}
	nterms := 0
	s.ids = s.ids[:0]
	for _, w := range terms {
		if nterms >= maxQueryTerms {
			break
		}
		id, found := g.lex.termID(w)
		if !found || containsU32(s.ids, id) {
			continue
		}
		s.ids = append(s.ids, id)
		nterms++
		docs, _ := g.lex.list(id)
		for i := seek(docs, 0, uint32(lo)); i < len(docs) && docs[i] < uint32(hi); i++ {
			if acc[docs[i]] == 0 {
				s.docs = append(s.docs, docs[i])
			}
			acc[docs[i]]++
		}
	}
	boost := func(d uint32) float32 {
		if nterms == 0 {
			return 1
		}
		return 1 + 0.1*acc[d]/float32(nterms)
	}

	var level []uint32 // read-only: may alias the tree
	if ok {
		if visible(root) {
			s.top.push(cand{doc: root, score: hierScope, mask: 1 << hmScope})
		}
		level = g.tree.children(root)
	} else {
		level = g.tree.roots
	}
	var bufs [2][]uint32
	for rel, i := 1, 0; len(level) > 0 && rel < 64; rel, i = rel+1, i^1 {
		levelScore := 1 / float32(1+rel)
		// a full list whose floor beats the best score of this level cannot change
		if s.top.full() && s.top.floor() >= levelScore*1.1 {
			break
		}
		m := uint32(1 << hmDescendant)
		if rel == 1 {
			m = 1 << hmChild
		}
		next := bufs[i][:0]
		for _, d := range level {
			if visible(d) {
				s.top.push(cand{doc: d, score: levelScore * boost(d), mask: m})
			}
			next = append(next, g.tree.children(d)...)
		}
		bufs[i] = next
		level = next
	}
	if ok {
		p, hasParent := g.snap.DocID(registry.Parent(g.snap.Caps[root].ID))
		siblings := g.tree.roots
		if hasParent {
			siblings = g.tree.children(p)
		}
		for _, d := range siblings {
			if d != root && g.isPack(d) && visible(d) {
				s.top.push(cand{doc: d, score: hierSibling * boost(d), mask: 1 << hmSibling})
			}
		}
	}
	for _, d := range s.docs {
		acc[d] = 0
	}
	s.docs = s.docs[:0]
	return hitsOf(s.top.best(), hierNames)
}

func containsU32(s []uint32, x uint32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Hierarchy match bits.
const (
	hmScope = iota
	hmChild
	hmDescendant
	hmSibling
)

var hierNames = newNameTable(func(b int) string {
	switch b {
	case hmScope:
		return "scope"
	case hmChild:
		return "child"
	case hmDescendant:
		return "descendant"
	case hmSibling:
		return "sibling"
	}
	return ""
}).of
