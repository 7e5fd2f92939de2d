package rank

import "github.com/capdex/capdex/registry"

// Weights are the per-retriever weights of the fusion and its rank constant K.
type Weights struct {
	// Exact, Metadata, Lexical, Semantic, Hierarchy and History weigh each retriever's
	// reciprocal rank; a weight of 0 ignores that retriever.
	Exact, Metadata, Lexical, Semantic, Hierarchy, History float64
	// K dampens the advantage of the first ranks; 0 means 60.
	K float64
}

// DefaultWeights returns the weights of DESIGN.md §4: exact 2.0, metadata 1.4, lexical 1.2,
// semantic 1.0, hierarchy 0.8, history 0.4 (history stays weak), K 60.
func DefaultWeights() Weights {
	return Weights{Exact: 2.0, Metadata: 1.4, Lexical: 1.2, Semantic: 1.0, Hierarchy: 0.8, History: 0.4, K: 60}
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

// component names of the fusion addends, one per retriever.
func rrfName(retriever string) string {
	switch retriever {
	case Exact:
		return "rrf.exact"
	case Metadata:
		return "rrf.metadata"
	case Lexical:
		return "rrf.lexical"
	case Semantic:
		return "rrf.semantic"
	case Hierarchy:
		return "rrf.hierarchy"
	case History:
		return "rrf.history"
	}
	return "rrf." + retriever
}

// Fuse computes each candidate's weighted reciprocal rank fusion score
//
//	fused(d) = Σ_{s ∈ sources(d)} weight(s) / (K + rank_s(d))
//
// where rank_s(d) is the 1-based rank of d in retriever s's list (a retriever that did not
// return d contributes nothing) and K = w.K (60 when 0). When a candidate carries several
// evidences from one retriever only the best rank counts. Evidence with a rank below 1 or
// from a retriever of weight 0 is ignored.
//
// Fuse sets Fused and Score to the fused value, replaces Breakdown with one component per
// contributing retriever ("rrf.<retriever>", value weight/(K+rank)), clears the matched
// lists and sorts cands by score, best first (ties by id). The raw retriever scores are
// deliberately ignored: they are not comparable across retrievers.
func Fuse(cands []Candidate, w Weights) {
	k := w.K
	if k <= 0 {
		k = 60
	}
	var arena []registry.ScoreComponent
	for i := range cands {
		c := &cands[i]
		if cap(c.Breakdown) < len(c.Evidence) {
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
		sum := 0.0
		for j := range c.Evidence {
			e := &c.Evidence[j]
			wt := w.Of(e.Retriever)
			if e.Rank < 1 || wt == 0 || shadowed(c.Evidence, j) {
				continue
			}
			v := wt / (k + float64(e.Rank))
			sum += v
			c.Breakdown = append(c.Breakdown, registry.ScoreComponent{Name: rrfName(e.Retriever), Value: v})
		}
		c.Fused, c.Score = sum, sum
	}
	sortCands(cands)
}

// shadowed reports whether another evidence of ev[j]'s retriever has a better rank (or the
// same rank earlier), so each retriever counts once, at its best rank.
func shadowed(ev []Source, j int) bool {
	e := &ev[j]
	for i := range ev {
		o := &ev[i]
		if i != j && o.Rank >= 1 && o.Retriever == e.Retriever && (o.Rank < e.Rank || o.Rank == e.Rank && i < j) {
			return true
		}
	}
	return false
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
