package rank

import "math"

// idfSum is a sum of idf weights in fixed point (units of 1/idfScale). Coverage sums the
// idf of the query's terms a text holds in the order of their term numbers; an integer sum
// is the same in any order, so a term cache whose terms are numbered otherwise (one
// patched by Next, terms_patch.go) gives every coverage bit for bit as one built from
// scratch. The plain reference is the float64 sum (TestIDFSumOrderFree compares them).
type idfSum int64

// idfScale is 2^40: an idf below 2^4 (16, a catalogue of under a million capabilities)
// summed over a thousand terms stays below 2^54, and every float32 idf above 2^-17 is
// exact in it.
const idfScale = 1 << 40

// add adds w, rounded to the fixed point.
func (s *idfSum) add(w float32) { *s += idfSum(math.Round(float64(w) * idfScale)) }

// value returns the sum as a float64.
func (s idfSum) value() float64 { return float64(s) / idfScale }
