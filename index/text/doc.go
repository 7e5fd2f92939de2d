// Package text turns English and Chinese text into search terms and concepts.
//
// # Basics
//
// Analyze (and its allocation-free form AppendTerms) is the one analysis used for indexing
// and for queries:
//
//   - Fold lowercases and maps full-width ASCII (Ａ-Ｚ, ０-９, ，！…) and the ideographic
//     space to their half-width forms.
//   - Words split on anything that is not a letter, digit or combining mark, and also inside
//     identifiers: camelCase, PascalCase with acronyms ("HTTPServer" → http server),
//     snake_case, kebab-case, dotted ids and "::" ("maintenance.codex.diagnose" →
//     maintenance codex diagnose). Letters and digits stay together ("ipv6", "base64").
//   - Latin words are stemmed with the English snowball stemmer (non-ASCII words are kept
//     as folded) and a small English stop list is removed.
//   - Runs of CJK characters (Han, Hiragana, Katakana, Hangul) become unigrams plus
//     bigrams, so "删除日程" → 删 删除 除 除日 日 日程 程; a few Chinese particles (的 了 吗 …)
//     are dropped as unigrams only.
//   - A word split by case alone ("YouTube", "GitHub", "queryPassengerTrainOrder") also
//     yields its joined form ("youtub", "github", …), so a query typed in lower case still
//     meets it.
//
// Scanner is the single-pass tokenizer under all of these; it is exported for callers that
// need the folded words themselves without allocating (the hashed embedder).
//
// The bilingual concept lexicon (concepts.txt, embedded) maps common task verbs and objects
// between English and Chinese: Concepts("删除") and Concepts("deleting") both give
// ["delete"]. ConceptsIn scans a whole text: English words (and short phrases such as
// "sign in") after stemming, CJK runs by longest match.
//
// # Caveats
//
// Terms returned by AppendTerms may be substrings of the input (CJK terms always are), so
// they keep the input string alive. Stems are memoised in a bounded process-wide cache.
// There is no dictionary segmenter for Chinese: bigrams stand in for words.
package text
