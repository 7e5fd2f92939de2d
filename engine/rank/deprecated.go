package rank

// DeprecatedPenalty is what DemoteDeprecated subtracts from a deprecated capability's
// score: half the best contribution of the lexical retriever (1.2/61), so a deprecated
// capability falls below an active one of comparable fit but stays above clearly worse
// ones, and an exact hit on it (2.0/61) still comes first.
const DeprecatedPenalty = 0.010

// CompDeprecated names DeprecatedPenalty in an explanation's score breakdown.
const CompDeprecated = "deprecated"

// DemoteDeprecated subtracts penalty from the Fused and Score of every candidate whose
// document deprecated reports, and returns how many it demoted (seed 003 §5: status must be
// active; a deprecated capability is still found, behind the active ones). Call it between
// Fuse and Rerank: Rerank starts from Fused, so the demotion enters every bound, order and
// coverage it computes. When no Rerank follows and Fuse sorted, pass resort to sort cands by
// their new Score. The breakdown is left as Fuse made it; an explanation adds
// CompDeprecated itself.
func DemoteDeprecated(cands []Candidate, deprecated func(doc uint32) bool, penalty float64, resort bool) int {
	n := 0
	for i := range cands {
		if c := &cands[i]; deprecated(c.Doc) {
			c.Fused -= penalty
			c.Score -= penalty
			n++
		}
	}
	if n > 0 && resort {
		sortCands(cands, false)
	}
	return n
}
