// Package index builds immutable index generations over one registry snapshot and answers
// one synchronous Retrieve per retriever kind.
//
// # Basics
//
// Build turns a registry.Snapshot into a Generation. A capability's docID is its position in
// Snapshot.Caps; every structure of the generation (the kelindar/column metadata view, the
// roaring filter bitmaps, BM25 postings, the exact-name map, metadata bitmaps, the pack tree
// and the vectors) uses the same docIDs. A Generation never changes after Build; a registry
// change builds a new one, and Current swaps it in atomically while searches in flight keep
// the generation they loaded.
//
// A search first asks Filter for the hard pre-filter: the docIDs a RuntimeContext may see
// (tenant visibility, status, disabled packs, os, within, the discover gate, resource types,
// side_effect_max). Every retriever takes that bitmap and never returns a doc outside it, so a
// hidden capability never becomes a candidate.
//
// The retrievers, one file each, are plain functions over a generation:
//
//   - Exact: ids, id prefixes, tool-name forms, leaf names, aliases and external ids.
//   - Lexical: BM25F over weighted fields, scored term at a time with MaxScore pruning, and
//     concept expansion between Chinese and English.
//   - Metadata: intents, entities, symptoms, domain, scenario, capability type and risk
//     signals through roaring bitmaps.
//   - Hierarchy: a pack, its descendants by depth and its sibling packs.
//   - History: the caller's past uses (a weak signal).
//   - Semantic: cosine similarity over embedder vectors (an inverted index for sparse
//     embedders such as the default embed.Hashed, brute force or HNSW for dense ones).
//
// The column view (github.com/kelindar/column) holds one row per capability, row index ==
// docID, with bitmap indexes for the hard pre-filters. Build reads each index once into a
// dense bitset, so Filter is a few word-wise ANDs and never opens a column transaction.
// (*Generation).ColumnSnapshot writes the view with kelindar's own Snapshot, prefixed with the
// registry generation and a fingerprint of every row; Options.ColumnSnapshot restores it.
//
// # Caveats
//
// A nil allow bitmap means "no restriction" and is meant for tests and benchmarks; a caller
// serving a RuntimeContext must pass the result of Filter. Scores are raw and only comparable
// within one retriever; fusion belongs to the engine. Hit.Matched slices are shared: never
// modify them.
//
// For a long query the sparse semantic retriever walks only the strongest of its rarer
// features (semRareTerms) and completes only their best candidates (semCommonCands) with
// its common ones, approximations measured to keep the fused recall@5 and nDCG@5 of the
// evaluation sets within 0.005 (they cost the retriever alone more); the dense
// HNSW path is approximate too (coder/hnsw v0.6.1 keeps about 0.8 of brute force's top 10 on
// the test vectors), and brute force stays the exact reference below HNSWThreshold.
package index
