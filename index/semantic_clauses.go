package index

import (
	"slices"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/capdex/capdex/index/text"
)

// SemanticParams are the switches of the semantic retriever that change its ranking. A
// generation keeps the parameters it was built with.
type SemanticParams struct {
	// Clauses makes the sparse semantic retriever serve a query of several clauses
	// (text.Clauses) the way the lexical one does (LexicalParams.ClauseLift): each clause
	// is embedded and scored alone, and its best document scores at least its clause
	// similarity (see clauseBest). Dense embedders are not affected: a clause would cost
	// one more call of the embedder.
	Clauses bool
}

// DefaultSemanticParams returns the parameters new generations are built with.
func DefaultSemanticParams() SemanticParams { return SemanticParams{Clauses: true} }

var semanticParams atomic.Pointer[SemanticParams]

// SetSemanticParams makes p the parameters of the generations built after it and returns
// the previous ones. It is for ablations and tuning procedures (bench) and tests.
func SetSemanticParams(p SemanticParams) SemanticParams {
	if old := semanticParams.Swap(&p); old != nil {
		return *old
	}
	return DefaultSemanticParams()
}

// currentSemanticParams returns the parameters a generation is built with now.
func currentSemanticParams() SemanticParams {
	if p := semanticParams.Load(); p != nil {
		return *p
	}
	return DefaultSemanticParams()
}

// clauseCands is how many candidates the sparse retriever completes through the forward
// postings when clauseBest asks it for a clause's best document (semanticSparseCands; a
// search asking for one document is completed as usual, semanticSparse). The
// default max(semCandsPerHit×limit, semCommonCands) would complete 96 for every clause;
// 16 halve what the clauses cost on seal_tools (whose long requests take that path), and
// the fused rankings of the public sets stay within 0.001 nDCG@5 of 96 (bench/report/q17.md).
const clauseCands = 16

// clauseBest serves a query of several clauses, a request of several tasks ("Book a hotel
// in Paris. Then check the weather there."). The similarity of the whole text favours the
// documents of its wordiest task, as BM25 does (docs/lexical.md): the best answer of a
// shorter task is far down the list, or not in it. Each clause is therefore embedded and
// scored alone (limit 1), and its best document's score becomes the larger of its score
// over the whole text and its similarity to the clause; a best document missing from hits
// joins them with its clause similarity. hits are then sorted again (ties by docID) and cut to limit.
// A text of one clause, or of more than text.MaxClauses, is served as before (the
// clauses past the last are one clause).
//
// This is the semantic half of what the lexical clause lift does: fusion then sees each
// task's best answer strong in both retrievers, instead of the lexical one alone, and can
// order the tasks' answers above the near twins of the wordiest task.
func (g *Generation) clauseBest(q *Query, allow *roaring.Bitmap, hits []Hit, limit int) []Hit {
	clauses := text.Clauses(q.Text)
	if len(clauses) < 2 {
		return hits
	}
	// the longest clause is the one the whole text's similarity serves best already: its
	// own pass would mostly find the whole text's best again
	longest := 0
	for i, c := range clauses {
		if len(c) > len(clauses[longest]) {
			longest = i
		}
	}
	changed := false
	for i, c := range clauses {
		if i == longest {
			continue
		}
		best := g.semanticSparseCands(&Query{Text: c}, allow, 1, clauseCands)
		if len(best) == 0 {
			continue
		}
		b := best[0]
		at := slices.IndexFunc(hits, func(h Hit) bool { return h.Doc == b.Doc })
		switch {
		case at < 0:
			hits = append(hits, b)
			changed = true
		case b.Score > hits[at].Score:
			hits[at].Score = b.Score
			changed = true
		}
	}
	if !changed {
		return hits
	}
	sortHits(hits)
	return hits[:min(len(hits), limit)]
}
