package rank

import "fmt"

// Fusion methods (FusionMethod): how a retriever's contribution is computed.
const (
	// MethodRRF is weighted reciprocal rank fusion: weight/(K + rank) (ScoreShare 0).
	MethodRRF = "rrf"
	// MethodScore is score-aware fusion: the retriever's raw score, min-max normalised over
	// its list, times weight/(K + 1) (ScoreShare 1).
	MethodScore = "score"
)

// SeedWeights returns the weighted RRF of seed 000 §15: K 60, ScoreShare 0, and weights
// exact 2.0, metadata 1.4, lexical 1.2, semantic 1.0, hierarchy 0.8, history 0.4.
func SeedWeights() Weights {
	return Weights{Exact: 2.0, Metadata: 1.4, Lexical: 1.2, Semantic: 1.0, Hierarchy: 0.8, History: 0.4, K: 60}
}

// Method names the fusion method of w: MethodRRF when ScoreShare is 0, MethodScore when
// it is 1, and "mixed(α)" otherwise.
func (w Weights) Method() string {
	switch w.ScoreShare {
	case 0:
		return MethodRRF
	case 1:
		return MethodScore
	}
	return fmt.Sprintf("mixed(%g)", w.ScoreShare)
}

// MethodWeights returns the default weights of a fusion method: SeedWeights for MethodRRF,
// DefaultWeights for MethodScore. An unknown method is an error that names the known ones.
func MethodWeights(method string) (Weights, error) {
	switch method {
	case MethodRRF:
		return SeedWeights(), nil
	case MethodScore:
		return DefaultWeights(), nil
	}
	return Weights{}, fmt.Errorf("fusion method %q (want %q or %q)", method, MethodRRF, MethodScore)
}

// Set sets the weight of a retriever by name; it reports false for an unknown name.
func (w *Weights) Set(retriever string, v float64) bool {
	switch retriever {
	case Exact:
		w.Exact = v
	case Metadata:
		w.Metadata = v
	case Lexical:
		w.Lexical = v
	case Semantic:
		w.Semantic = v
	case Hierarchy:
		w.Hierarchy = v
	case History:
		w.History = v
	default:
		return false
	}
	return true
}
