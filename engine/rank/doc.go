// Package rank turns the evidence of several retrievers into one ordered, explained list:
// weighted reciprocal rank fusion, a rerank that separates relevance from fitness, a
// diversification pass, the resolution of a search (confident, ambiguous, no confident match)
// and the calibration of its thresholds from labelled samples.
//
// # Basics
//
// A search hands rank a slice of Candidate values, one per document that any retriever
// returned, each carrying every piece of Evidence (retriever, 1-based rank, raw score and
// the floor of the retriever's list). The stages run in this order, each in place on the
// same slice:
//
//	Fuse(cands, DefaultWeights())            // Σ weight(source)·relevance, sorted
//	Rerank(cands, signals, DefaultRerankOptions())
//	res, reason, missing := Resolve(cands, signals, thresholds)
//	top := Diversify(cands, limit, DiversifyOptions{Ambiguous: res == registry.Ambiguous, ...})
//
// Fuse is score-aware reciprocal rank fusion: each retriever contributes weight/(K+1) for
// its best candidate and, for the others, either its reciprocal rank (plain RRF) or its raw
// score scaled between the list's floor and best (Weights.ScoreShare), so a candidate far
// behind in a retriever's own scores gets little from it however close its rank.
//
// Every addend of a candidate's score is kept in Candidate.Breakdown under a stable name
// ("score.lexical" — "rrf.lexical" under RRF —, "intent", "risk", ...), so an explanation can show exactly why a candidate
// ranks where it does. A caller that never shows it sets NoBreakdown in Weights,
// RerankOptions and DiversifyOptions: the scores are bit-identical, the list is left empty.
//
// # Caveats
//
// Fused scores are small (one retriever's best candidate with weight 1 gives 1/61 ≈ 0.016),
// so every rerank constant in DefaultRerankOptions is expressed on that scale; changing K,
// the weights or the rerank constants changes the meaning of the thresholds, which must then
// be calibrated again (DefaultThresholds are calibrated on the seed cases for the defaults).
//
// The functions run on every streamed update of a search. They allocate little: slices a
// candidate already holds are reused (Breakdown[:0], Matched*[:0]), missing capacity is
// carved from one arena per call, and no maps are built per call. Rank never reads the
// clock and never blocks; it is safe to call concurrently on different slices.
package rank
