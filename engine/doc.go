// Package engine is capdex's public face: it opens a capability registry and answers the
// four meta-tools — Search (capability_search), List (capability_list), Describe
// (capability_describe) and Run (capability_run) — wiring the registry store, the index
// generations, the retriever actors, policy, ranking and the governed run pipeline.
//
// # Basics
//
// Open an engine once and share it: every method is safe for many concurrent callers.
//
//	e, err := engine.Open(ctx, engine.Options{Dir: dataDir}) // zero Options: in memory, built-in registry
//	defer e.Close()
//	resp, err := e.Search(ctx, registry.SearchRequest{Query: "Codex 更新后还是旧版本"}, rc)
//
// The caller's identity and environment travel in a registry.RuntimeContext that the
// embedding program fills from its own authentication, never from a model's request.
// A search answers 1-10 summaries (default 5) with a resolution — confident, ambiguous or
// no_confident_match — and never a schema; Describe discloses one contract; Run executes an
// action through version check, argument validation, the execute gate, risk and
// confirmation, timeout and network policy, and appends hash-chained audit records.
//
// A search fans out to the retrievers its plan names (exact, lexical, semantic, metadata,
// hierarchy, history), each an actor with its own deadline (Options.Deadlines). The answer
// is built from whatever arrived in time: a retriever that times out, errors or panics
// leaves the response partial (SearchMeta.Partial, TimedOutRetrievers, FailedRetrievers),
// never failed. SearchStream delivers the ranking after each retriever's answer, then the
// final one.
//
// Registry changes (Import, Put, SetStatus, Delete) are stored and audited all or nothing,
// then a new index generation is built and swapped in atomically; searches in flight keep
// the generation they started with.
//
// # Caveats
//
// A search hit never grants a permission: Run checks the gates again with the real
// arguments. Run refusals are RunResults with a reason code (not_found, not_runnable,
// version_mismatch, invalid_arguments, forbidden, confirmation_required,
// invalid_confirmation, timed_out, handler_failed, invalid_output), not errors. For a
// capability the caller may not see (offline and disabled ones included) Run answers the
// code and message Describe answers.
//
// A data directory is held by one process at a time; a second Open fails at once with
// store.ErrLocked. Resolution thresholds come from `capdex calibrate` when stored, else from
// rank.DefaultThresholds; they are tied to the fusion weights and rerank constants they were
// calibrated with.
package engine
