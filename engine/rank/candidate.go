package rank

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/registry"
)

// Retriever names used in Source.Retriever and Weights.Of: index.Kind.String() of each kind.
const (
	Exact     = index.ExactName
	Lexical   = index.LexicalName
	Semantic  = index.SemanticName
	Metadata  = index.MetadataName
	Hierarchy = index.HierarchyName
	History   = index.HistoryName
)

// Source is what one retriever said about one candidate.
type Source struct {
	// Retriever is the retriever's name (Exact, Lexical, ...).
	Retriever string
	// Rank is the 1-based position of the candidate in that retriever's list.
	Rank int
	// Raw is the retriever's own score (BM25, cosine, ...). Fusion compares it only with
	// the other raw scores of the same retriever in the same search (see Fuse).
	Raw float64
	// Floor is the raw score a document the retriever did not return would at most have:
	// 0 when the retriever returned every match, the last returned score when it cut its
	// list at its limit. Fuse scales Raw between Floor and the list's best score.
	Floor float64
	// Matched names the fields or terms that matched.
	Matched []string
}

// Candidate is one document under consideration, with all the evidence gathered for it and
// the scores the stages of this package compute.
type Candidate struct {
	// Doc is the dense document id in the index generation.
	Doc uint32
	// Cap is the capability; it must not be nil.
	Cap *registry.Capability
	// Evidence holds one Source per retriever that returned the document.
	Evidence []Source
	// Availability is the post-gather policy verdict; empty means available.
	Availability registry.Availability
	// Fused is the weighted RRF score set by Fuse.
	Fused float64
	// Score is the final score: Fused after Fuse, the reranked score after Rerank.
	Score float64
	// Breakdown lists every named addend of Score.
	Breakdown []registry.ScoreComponent
	// Coverage (0..1) is the idf-weighted share of the query's terms found in the
	// capability's descriptive text (id words, title, aliases, summary, when_to_use,
	// intents, entities, symptoms, tags), set by Rerank; 1 when Rerank has no TermCache
	// for the capability (unknown). A text holding a symptom concept of the query covers
	// the query's words that spell it too ("连不上" for "cannot connect"). It measures how much of the request the capability
	// speaks to in absolute terms, which the fused score (relative to the other candidates
	// of the same search) cannot; Resolve's MinCoverage floor uses it, on the best usable
	// candidate. Rerank computes it only for the candidates it ranks up to that one (the
	// first usable one), and sets it to 0 for the others: it scans the capability's whole
	// text, and no stage reads it there.
	Coverage float64
	// MatchedIntents, MatchedEntities and MatchedSymptoms are the capability's values that
	// the query matched, set by Rerank.
	MatchedIntents, MatchedEntities, MatchedSymptoms []string
	// lazy is the ranking Rerank left pending (RerankOptions.Prune), nil once complete;
	// reranked says whether Rerank ranked this candidate of it.
	lazy     *pending
	reranked bool
}

// best returns the candidate's best (lowest) rank from retriever name, or 0 when absent.
func (c *Candidate) best(name string) int {
	r := 0
	for i := range c.Evidence {
		e := &c.Evidence[i]
		if e.Retriever == name && e.Rank > 0 && (r == 0 || e.Rank < r) {
			r = e.Rank
		}
	}
	return r
}

// ExactHit reports whether the exact retriever ranked the candidate first.
func (c *Candidate) ExactHit() bool { return c.best(Exact) == 1 }

// Usable reports whether a capability of availability a is one the caller can use: now,
// after confirming, or once it supplies the credentials the capability names (the match is
// right; the availability tells the caller what is still missing).
func Usable(a registry.Availability) bool {
	return a == "" || a == registry.Available || a == registry.NeedsConfirmation || a == registry.MissingCredentials
}

// readOnlyAction reports whether c is an action that only reads.
func readOnlyAction(c *registry.Capability) bool {
	return c.ResourceType == registry.TypeAction && c.SideEffect == registry.SideEffectRead
}

// HighRisk reports whether a capability is high risk: risk level high or critical, or side
// effect I (high impact or irreversible).
func HighRisk(c *registry.Capability) bool {
	return c.RiskLevel.Level() >= registry.RiskHigh.Level() || c.SideEffect == registry.SideEffectImpact
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// less orders two candidates by Score, then Fused, then id (deterministic).
func less(a, b *Candidate) int {
	return lessBy(a, b, false)
}

// lessBy is less, comparing docIDs instead of ids when byDoc is set: the caller knows that
// docIDs order the ids (TermCache.byID), and the ids are in capabilities mostly out of cache.
func lessBy(a, b *Candidate, byDoc bool) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	case a.Fused > b.Fused:
		return -1
	case a.Fused < b.Fused:
		return 1
	case byDoc:
		return cmp.Compare(a.Doc, b.Doc)
	}
	switch {
	case a.Cap.ID < b.Cap.ID:
		return -1
	case a.Cap.ID > b.Cap.ID:
		return 1
	}
	return 0
}

// sortCands sorts cands best first (see lessBy). It sorts small keys, each a candidate's
// score and position in one integer, settles with lessBy the order of the candidates whose
// keys do not tell it, and then moves each candidate once, following the permutation's
// cycles: a Candidate is large and holds pointers, so moving it is far dearer than
// comparing.
func sortCands(cands []Candidate, byDoc bool) {
	n := len(cands)
	if n < 2 {
		return
	}
	sorted := true
	for i := 1; i < n && sorted; i++ {
		sorted = lessBy(&cands[i-1], &cands[i], byDoc) <= 0
	}
	if sorted {
		return
	}
	var buf [128]uint64
	var keys []uint64
	if n <= len(buf) {
		keys = buf[:n]
	} else {
		keys = make([]uint64, n)
	}
	// A key holds the score, best first, in its high bits and the candidate's position in
	// the low ones: sorted as integers, the keys order the candidates by score except among
	// scores that differ in the low bits only (ties among them), which an insertion sort by
	// lessBy then puts right at little cost, as the order is nearly right.
	low := uint64(1)<<bits.Len(uint(n-1)) - 1
	for i := range cands {
		keys[i] = descending(cands[i].Score)&^low | uint64(i)
	}
	slices.Sort(keys)
	for i := range keys {
		keys[i] &= low
	}
	for i := 1; i < n; i++ {
		for j := i; j > 0 && lessBy(&cands[keys[j-1]], &cands[keys[j]], byDoc) > 0; j-- {
			keys[j-1], keys[j] = keys[j], keys[j-1]
		}
	}
	permute(cands, keys)
}

// permute moves cands[keys[j]] to position j, for every j: keys is a permutation of the
// positions (high bit clear), which permute spoils.
func permute(cands []Candidate, keys []uint64) {
	// new[j] = old[keys[j]], in place; done marks the keys whose candidate is in place.
	const done = 1 << 63
	for i := range keys {
		if keys[i]&done != 0 {
			continue
		}
		if int(keys[i]) == i {
			keys[i] |= done
			continue
		}
		tmp := cands[i]
		j := i
		for {
			k := int(keys[j])
			keys[j] |= done
			if k == i {
				cands[j] = tmp
				break
			}
			cands[j] = cands[k]
			j = k
		}
	}
}

// descending returns an integer that orders as the score, in reverse: the larger the score,
// the smaller the integer.
func descending(score float64) uint64 {
	b := math.Float64bits(score)
	if b>>63 != 0 {
		return b // negative: the larger the magnitude, the larger the bits
	}
	return ^(b | 1<<63)
}
