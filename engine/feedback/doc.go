// Package feedback learns from use (seed 000 §11.6, "similar tasks' successful paths", and
// the business metrics of seed 000 §25). A Recorder follows each session's steps — a search,
// the capabilities described after it, the runs after that and their outcomes — keeps them
// per tenant in the store (registry/store FeedbackRecord), and answers two questions from
// memory:
//
//   - Votes: which capabilities did the tenant's past successful sessions run, when their
//     searches were like this query? Similarity is the cosine of IDF-weighted term sets
//     (index/text's analyser and the lexicon's concepts) over the tenant's successful
//     searches, a term weighing by how few of the capabilities learned it led to, found
//     through an inverted index of their terms with MaxScore pruning; a capability gets a
//     vote only when one of its past searches is at least Options.MinSimilarity like the
//     query, and its past searches at least Options.MinSupport like it add to the vote (or,
//     without such a lead, when the query's Options.ConsensusK nearest past searches agree
//     on it: a weaker consensus vote);
//     each weighs its similarity decayed with its age
//     (Options.HalfLife), and each user's weight for one capability is capped at
//     Options.UserCap, so that one user repeating a choice counts as one user. The history
//     retriever (package index) turns the votes into hits among the documents the caller
//     may discover, and fusion weighs them as history: a weak signal.
//   - Funnel: per capability, how often it was shown by a search, described after one, run
//     after that and run successfully; and the rates search → describe, describe → run, run
//     success and clarification.
//
// Tenants never meet: every table is per tenant, and a vote says how many sessions are
// behind it, never their queries.
//
// Recording is in memory under a short lock and visible at once; the store is written in
// the background, in batches (Flush and Close write what is pending).
package feedback
