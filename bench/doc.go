// Package bench measures capdex: search-quality evaluation (labelled queries over a foreign
// catalogue, and cases over a registry), the metrics that score it, and the `go test -bench`
// suites for speed and memory.
//
// # Metrics
//
// Relevance is binary. recall@k is the mean of |relevant ∩ top k| / |relevant|; MRR is the
// mean reciprocal rank of the first relevant result within the top 10; nDCG@k uses the gain
// 1/log2(rank+1) and an ideal ranking of min(|relevant|, k) relevant results. A rate whose
// cases are absent from a run is reported as null, never as 0.
package bench
