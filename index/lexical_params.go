package index

import (
	"fmt"
	"math"
	"sync/atomic"
)

// LexicalParams are the tuned constants of the lexical retriever: BM25F's saturation and
// length normalisation, and how liftClauses serves a query of several clauses. They were
// chosen by a stated procedure on whole evaluation sets (bench.TestLexicalLOSO; the
// figures are in docs/lexical.md), never on single queries.
type LexicalParams struct {
	// K1 is BM25's term-frequency saturation.
	K1 float64
	// BName, BSummary and BOther are BM25F's length normalisation (0: none, 1: full) of
	// the name fields (title, aliases, id), of the summary, and of every other field.
	// A summary is one sentence whose length says little about its subject, so it is
	// normalised less than the long free-text fields.
	BName, BSummary, BOther float64
	// ClauseLift is how far the best match of one clause of a query of several is moved
	// towards the query's best score (0: not at all, 1: to a tie with it).
	ClauseLift float64
	// ClauseMass scales the lift of a clause by its share of the query's weight (the sum
	// of its terms' idf over the whole query's): a clause holding at least ClauseMass of
	// it is lifted fully, a lighter one ("Can you help me with that?") in proportion.
	// 0 lifts every clause fully.
	ClauseMass float64
	// VariantWeight is the weight, relative to a query term's, of the index terms that are
	// variants of a query term (the one is the other plus a short suffix that is no word of
	// its own: "scan" and "scanner", "rental" and "rent"; lexical_variants.go). 0 adds none
	// (the default: docs/lexical.md, stage 3).
	VariantWeight float64
	// VariantSuffix is the most letters a variant adds to or takes from a query term.
	VariantSuffix int
}

// DefaultLexicalParams returns the parameters new generations are built with.
func DefaultLexicalParams() LexicalParams {
	return LexicalParams{K1: 1.2, BName: 0.75, BSummary: 0.2, BOther: 0.3, ClauseLift: 0.6, ClauseMass: 0.15, VariantWeight: 0, VariantSuffix: 4}
}

// Validate reports parameters out of their ranges.
func (p LexicalParams) Validate() error {
	for _, v := range []struct {
		name   string
		v, max float64
	}{{"K1", p.K1, math.Inf(1)}, {"BName", p.BName, 1}, {"BSummary", p.BSummary, 1},
		{"BOther", p.BOther, 1}, {"ClauseLift", p.ClauseLift, 1}, {"ClauseMass", p.ClauseMass, 1},
		{"VariantWeight", p.VariantWeight, 1}, {"VariantSuffix", float64(p.VariantSuffix), maxVariantSuffix}} {
		if !(v.v >= 0 && v.v <= v.max) { // NaN fails too
			return fmt.Errorf("%w: lexical parameter %s = %g, want 0 ≤ %s ≤ %g", ErrLexicalParams, v.name, v.v, v.name, v.max)
		}
	}
	return nil
}

// maxVariantSuffix bounds LexicalParams.VariantSuffix.
const maxVariantSuffix = 8

var lexicalParams atomic.Pointer[LexicalParams]

// SetLexicalParams makes p the parameters of the generations built after it (a generation
// keeps the parameters it was built with) and returns the previous ones. It is for tuning
// procedures (bench.TestLexicalLOSO) and tests; an error leaves them unchanged.
func SetLexicalParams(p LexicalParams) (LexicalParams, error) {
	if err := p.Validate(); err != nil {
		return currentLexicalParams(), err
	}
	if old := lexicalParams.Swap(&p); old != nil {
		return *old, nil
	}
	return DefaultLexicalParams(), nil
}

// currentLexicalParams returns the parameters a generation is built with now.
func currentLexicalParams() LexicalParams {
	if p := lexicalParams.Load(); p != nil {
		return *p
	}
	return DefaultLexicalParams()
}
