package rank

import (
	"strings"
	"unsafe"

	"github.com/capdex/capdex/registry"
)

// Weights are the per-retriever weights of the fusion, its rank constant K and the share of
// each retriever's contribution that comes from its normalised score rather than its rank.
type Weights struct {
	// Exact, Metadata, Lexical, Semantic, Hierarchy and History weigh each retriever's
	// contribution; a weight of 0 ignores that retriever.
	Exact, Metadata, Lexical, Semantic, Hierarchy, History float64
	// K dampens the advantage of the first ranks; 0 means 60. It also sets the unit of the
	// fused score: a retriever's best candidate contributes weight/(K+1).
	K float64
	// ScoreShare (0..1) is the part of a retriever's contribution taken from its normalised
	// raw score (see Fuse) instead of its reciprocal rank. 0 is plain weighted RRF.
	ScoreShare float64
	// NoBreakdown makes Fuse leave Candidate.Breakdown empty instead of listing the fusion
	// addends (scores are the same). For callers that never show the breakdown; the zero
	// value keeps it.
	NoBreakdown bool
	// Unsorted makes Fuse leave cands in their order instead of sorting them by the fused
	// score. For callers that Rerank next: Rerank sorts them anyway, and its order does not
	// depend on the order it is given. The zero value sorts.
	Unsorted bool
}

// DefaultWeights returns the default fusion: K 60, score share 1 (min-max score fusion), and weights exact 2.0,
// metadata 0.6, lexical 1.2, semantic 0.4, hierarchy 0.8, history 2.0.
//
// History's scores are absolute strengths (see Fuse), so its weight is the most it can
// give: one user's vote is capped at half of it (feedback.UserCap), and only several users
// who searched alike can give more than the best lexical match (docs/feedback.md; the
// weight and the feedback's lead and support similarities were chosen by the procedure of
// bench/report/fb17.md over the whole grid, with its leave-one-set-out figures). A caller's
// own past uses give at most a fifth of it (index.UseShare), the 0.4 they had.
//
// The original design started from plain RRF with semantic 1.0 and metadata 1.4. Measured on the
// public sets of ../shared/eval and on the seed cases, rank-only fusion throws away the
// large score margins of a confident lexical match (rank 1 and rank 12 differ by 0.003), so
// the fusion is score-aware; and the offline semantic retriever (hashed n-grams) is much
// weaker than BM25 alone on every set (recall@5 0.59/0.72/0.57 against 0.90/0.86/0.66), so
// it weighs less than half of lexical. Metadata scores structured values the rerank also
// rewards (intents, entities, symptoms); at 1.4 it counted them twice.
func DefaultWeights() Weights {
	return Weights{Exact: 2.0, Metadata: 0.6, Lexical: 1.2, Semantic: 0.4, Hierarchy: 0.8, History: 2.0, K: 60, ScoreShare: 1}
}

// Of returns the weight of a retriever by name; an unknown retriever weighs 0.
func (w Weights) Of(retriever string) float64 {
	switch retriever {
	case Exact:
		return w.Exact
	case Metadata:
		return w.Metadata
	case Lexical:
		return w.Lexical
	case Semantic:
		return w.Semantic
	case Hierarchy:
		return w.Hierarchy
	case History:
		return w.History
	}
	return 0
}

// numRetrievers is the number of known retrievers; retrieverIndex maps a name to 0..5.
const numRetrievers = 6

// retrieverIndex returns the index of a known retriever (Exact 0, Lexical 1, Semantic 2,
// Metadata 3, Hierarchy 4, History 5), or -1. Fuse calls it for every evidence, so it tells
// the names apart by length and first letter and compares one string at most.
func retrieverIndex(name string) int {
	var want string
	var x int
	switch len(name) {
	case len(Exact):
		want, x = Exact, 0
	case len(Lexical): // and History
		if name[0] == 'l' {
			want, x = Lexical, 1
		} else {
			want, x = History, 5
		}
	case len(Semantic): // and Metadata
		if name[0] == 's' {
			want, x = Semantic, 2
		} else {
			want, x = Metadata, 3
		}
	case len(Hierarchy):
		want, x = Hierarchy, 4
	default:
		return -1
	}
	// The names mostly come from the constants themselves: equal pointers spare comparing.
	if unsafe.StringData(name) != unsafe.StringData(want) && name != want {
		return -1
	}
	return x
}

// historyIndex is History's retrieverIndex.
const historyIndex = 5

// byIndex returns the weights in retrieverIndex order.
func (w Weights) byIndex() [numRetrievers]float64 {
	return [numRetrievers]float64{w.Exact, w.Lexical, w.Semantic, w.Metadata, w.Hierarchy, w.History}
}

// fusionNames returns the component names of the fusion addends for the fusion method of a
// score share (see Weights.Method), in retrieverIndex order: "rrf.<retriever>" for weighted
// RRF, "score.<retriever>" for score fusion, "mixed.<retriever>" in between.
func fusionNames(scoreShare float64) *[numRetrievers]string {
	switch scoreShare {
	case 0:
		return &rrfNames
	case 1:
		return &scoreNames
	}
	return &mixedNames
}

var (
	rrfNames   = namesWith(MethodRRF + ".")
	scoreNames = namesWith(MethodScore + ".")
	mixedNames = namesWith(mixedPrefix)
)

// mixedPrefix starts the fusion components of a score share strictly between 0 and 1.
const mixedPrefix = "mixed."

func namesWith(prefix string) [numRetrievers]string {
	return [numRetrievers]string{prefix + Exact, prefix + Lexical, prefix + Semantic, prefix + Metadata, prefix + Hierarchy, prefix + History}
}

// isFusionComponent reports whether a breakdown component's name is one Fuse gives.
func isFusionComponent(name string) bool {
	return strings.HasPrefix(name, MethodRRF+".") || strings.HasPrefix(name, MethodScore+".") || strings.HasPrefix(name, mixedPrefix)
}

// listRange is what Fuse knows of one retriever's list: its best raw score and the raw
// score below which a document would not have been returned.
type listRange struct {
	top, floor float64
	seen       bool
}

// Fuse computes each candidate's fused relevance, a weighted sum over the retrievers that
// returned it:
//
//	fused(d) = Σ_s weight(s) · [ (1−α)/(K + rank_s(d)) + α·norm_s(d)/(K + 1) ]
//
// with α = w.ScoreShare and K = w.K (60 when 0). norm_s(d) is retriever s's raw score of d
// scaled to 0..1 between the list's floor (Source.Floor: 0 when the retriever returned every
// match, the last returned score when it cut its list) and its best score; a retriever whose
// scores do not separate its list (best ≤ floor) counts by rank alone. So a retriever's
// best candidate always contributes weight/(K+1), as in RRF, and α = 0 is plain weighted
// RRF; with α > 0 a candidate far behind the best in a retriever's own score gets little from
// it, however close its rank (BM25 at 75 and 21 are ranks 1 and 7, but not near equals).
// When a candidate carries several evidences from one retriever only the best rank counts.
// Evidence with a rank below 1 or from a retriever of weight 0 is ignored.
//
// Fuse sets Fused and Score to the fused value, replaces Breakdown with one component per
// contributing retriever, named by the fusion method ("rrf.<retriever>", "score.<retriever>"
// or "mixed.<retriever>", see fusionNames), clears the matched lists and sorts cands by
// score, best first (ties by id). With w.NoBreakdown the Breakdown is left empty; with
// w.Unsorted cands keep their order.
func Fuse(cands []Candidate, w Weights) {
	k := w.K
	if k <= 0 {
		k = 60
	}
	alpha := min(max(w.ScoreShare, 0), 1)
	var ranges [numRetrievers]listRange
	if alpha > 0 {
		for i := range cands {
			for j := range cands[i].Evidence {
				e := &cands[i].Evidence[j]
				x := retrieverIndex(e.Retriever)
				if x < 0 || e.Rank < 1 {
					continue
				}
				r := &ranges[x]
				if !r.seen || e.Raw > r.top {
					r.top = e.Raw
				}
				if !r.seen || e.Floor > r.floor {
					r.floor = e.Floor
				}
				r.seen = true
			}
		}
		// History scores are absolute strengths in 0..1 (index: the history retriever): its
		// list is scaled against 1, not against its best, so a weak vote stays weak.
		if h := &ranges[historyIndex]; h.seen {
			h.top, h.floor = max(h.top, 1), 0
		}
	}
	wts := w.byIndex()
	// What the addend of each retriever needs, computed once: the terms of the expression
	// below, each the same floating-point operation on the same operands, so every addend
	// keeps its bits. With α = 1 the reciprocal rank's share, (1−α)·v = ±0, leaves the
	// score's share unchanged and is skipped (for a finite weight: 0·∞ would be NaN).
	var scale [numRetrievers]struct {
		on              bool    // the list's scores separate it (and α > 0)
		floor, span, aw float64 // r.floor, r.top−r.floor, α·weight
		rankShare       bool    // the reciprocal rank counts: α < 1, or a weight not finite
	}
	k1, rest := k+1, 1-alpha
	for x := range scale {
		r, sx := &ranges[x], &scale[x]
		sx.on = alpha > 0 && r.top > r.floor
		sx.floor, sx.span, sx.aw = r.floor, r.top-r.floor, alpha*wts[x]
		sx.rankShare = !sx.on || alpha != 1 || wts[x]-wts[x] != 0
	}
	names := fusionNames(alpha)
	var arena []registry.ScoreComponent
	for i := range cands {
		c := &cands[i]
		if !w.NoBreakdown && cap(c.Breakdown) < len(c.Evidence) {
			if len(arena) < len(c.Evidence) {
				arena = make([]registry.ScoreComponent, fuseArenaSize(cands[i:]))
			}
			n := len(c.Evidence) + rerankComponents
			if n > len(arena) {
				n = len(arena)
			}
			c.Breakdown = arena[:0:n]
			arena = arena[n:]
		}
		c.Breakdown = c.Breakdown[:0]
		c.MatchedIntents = c.MatchedIntents[:0]
		c.MatchedEntities = c.MatchedEntities[:0]
		c.MatchedSymptoms = c.MatchedSymptoms[:0]
		c.Coverage = 0
		c.lazy, c.reranked = nil, false
		// Each retriever counts once, at its best rank (the first evidence with it): best[x]
		// is that evidence's position, +1. xs holds each evidence's retriever index.
		var best [numRetrievers]int32
		var xbuf [2 * numRetrievers]int8
		xs := xbuf[:0]
		if len(c.Evidence) > len(xbuf) {
			xs = make([]int8, 0, len(c.Evidence))
		}
		for j := range c.Evidence {
			e := &c.Evidence[j]
			x := retrieverIndex(e.Retriever)
			xs = append(xs, int8(x))
			if x >= 0 && e.Rank >= 1 && (best[x] == 0 || e.Rank < c.Evidence[best[x]-1].Rank) {
				best[x] = int32(j) + 1
			}
		}
		sum := 0.0
		for j := range c.Evidence {
			e := &c.Evidence[j]
			x := int(xs[j])
			if x < 0 || best[x] != int32(j)+1 || wts[x] == 0 {
				continue // unknown, shadowed, ranked below 1 or weighing nothing
			}
			// v = (1−α)·weight/(K+rank) + α·weight·norm/(K+1); scores that do not separate
			// the list leave the reciprocal rank alone.
			sx := &scale[x]
			var v float64
			if sx.rankShare {
				v = wts[x] / (k + float64(e.Rank)) // reciprocal rank
			}
			if sx.on {
				norm := min(max((e.Raw-sx.floor)/sx.span, 0), 1)
				if sx.rankShare {
					v = rest*v + sx.aw*norm/k1
				} else {
					v = sx.aw * norm / k1
				}
			}
			sum += v
			if w.NoBreakdown {
				continue
			}
			c.Breakdown = append(c.Breakdown, registry.ScoreComponent{Name: names[x], Value: v})
		}
		c.Fused, c.Score = sum, sum
	}
	if !w.Unsorted {
		sortCands(cands, false)
	}
}

// rerankComponents is the room Fuse leaves in a fresh Breakdown for Rerank's addends.
const rerankComponents = 10

// fuseArenaSize is the room needed for the breakdowns of the remaining candidates.
func fuseArenaSize(rest []Candidate) int {
	n := 0
	for i := range rest {
		if cap(rest[i].Breakdown) < len(rest[i].Evidence) {
			n += len(rest[i].Evidence) + rerankComponents
		}
	}
	return n
}
