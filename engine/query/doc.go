// Package query turns a search text into a parsed query and a retrieval plan: the
// normaliser reads intents, entities, symptoms, constraints, forbidden intents, explicit
// ids, browse requests, scope and desired outcome from Chinese and English text, and the
// planner picks the retrievers that the parsed query needs.
//
// # Basics
//
// A Lexicon is built once per registry snapshot (NewLexicon). It maps surface forms to
// normalised values: the registry's entities, intents and symptoms (a symptom value
// "active_version_mismatch" is also matched as the words "active version mismatch", and an
// alias such as "版本不一致" names the symptoms of its capability that it shares words or
// concepts with), the shared bilingual concept lexicon of index/text, explicit ids and tool
// names, and the packs' ids and titles for browse scopes. Matching is one pass over the
// query's tokens (Latin words by stem, CJK by character) with a map keyed by the first
// token: its cost depends on the query, not on the size of the registry.
//
//	lex := query.NewLexicon(snap)
//	p, err := query.Rules{}.Normalize(ctx, "先检查原因，不要直接更新", lex)
//	// p.Intents = [diagnose ...], p.Constraints = [read_first no_update],
//	// p.Forbidden = [update upgrade ...]
//	kinds := query.Plan(p, req) // []index.Kind: [exact lexical semantic metadata history]
//
// Rules is the default normaliser. LLM asks an OpenAI-compatible chat endpoint for the
// same fields as JSON and falls back to Rules on any error, timeout or invalid answer.
//
// # Caveats
//
// Rules are heuristics. Negation covers the verb right after a negation cue ("不要直接重装",
// "don't update it yet", "without reinstalling"), skipping filler ("直接", "it", "yet"), and
// verbs coordinated with it by "or", "或", "、"; it does not parse sentences. A wish about
// the past ("不再关注", "不想再收藏", "我不需要它自动购买了") is not a prohibition, nor is an
// inability ("不能启动", "can't start": a symptom); "never" and "no" forbid only at the start
// of a clause. A verb used as a past event ("更新后", "after updating", "updated"), inside a
// symptom phrase, a constraint ("dry run") or the stated outcome is not an intent. A
// forbidden verb is forbidden for every target: "restart the container but don't restart
// docker" forbids restart. Texts longer than MaxQueryBytes are truncated at a character
// boundary.
//
// Building a lexicon costs about 20 ms per 1,000 capabilities (once per registry
// generation); normalising a query costs tens of microseconds.
package query
