package query

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// Step is one retriever of a plan, why it runs, and how much its evidence counts.
type Step struct {
	Kind   index.Kind
	Reason string
	// Weight multiplies the retriever's fusion weight for this query; 0 means 1.
	Weight float64
}

// CrossLangSemanticWeight multiplies the semantic retriever's fusion weight for a
// cross-language query: one written in Chinese against a catalogue described in English,
// or the other way round. Words do not meet across languages, so the lexical retriever
// finds only what the shared concept list bridges, while the semantic one meets the other
// language through its CC-CEDICT bridge (index/embed); at the default weight the fused
// ranking was below the semantic retriever alone on both cross-language sets of
// testdata/eval/xlang. Chosen from {1.5, 2, 3, 4} as the value whose worse set is best
// (bench/report/i17e.md, with the leave-one-set-out figures).
const CrossLangSemanticWeight = 3

// A catalogue is Chinese when at least zhCatalogue of its capabilities are described in
// Chinese, English when at most enCatalogue are; anything between is bilingual, and no
// query is cross-language against it.
const (
	zhCatalogue = 0.9
	enCatalogue = 0.1
)

// CrossLanguage reports whether a query of this parse is written in the other language
// than the catalogue lex was built from (see CrossLangSemanticWeight). lex may be nil
// (never cross-language).
func CrossLanguage(p *Parsed, lex *Lexicon) bool {
	if lex == nil || lex.ncaps == 0 {
		return false
	}
	switch p.Lang {
	case "zh":
		return lex.zhShare <= enCatalogue
	case "en":
		return lex.zhShare >= zhCatalogue
	}
	return false
}

// zhDescribedShare returns the share of caps, packs left out, described in Chinese: a
// summary (or, without one, a title) holding a Han character.
func zhDescribedShare(caps []*registry.Capability) float64 {
	n, zh := 0, 0
	for _, c := range caps {
		if c.ResourceType == registry.TypePack {
			continue
		}
		n++
		d := c.Summary
		if d == "" {
			d = c.Title
		}
		if strings.ContainsFunc(d, func(r rune) bool { return unicode.Is(unicode.Han, r) }) {
			zh++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(zh) / float64(n)
}

// Plan returns the retriever kinds a parsed query needs, in index.Kind order (see
// PlanSteps). req and lex may be nil.
func Plan(p *Parsed, req *registry.SearchRequest, lex *Lexicon) []index.Kind {
	steps := PlanSteps(p, req, lex)
	out := make([]index.Kind, len(steps))
	for i, s := range steps {
		out[i] = s.Kind
	}
	return out
}

// PlanSteps returns the retrievers a parsed query needs, in index.Kind order, each with
// the reason it runs (seed 000 §10):
//
//   - explicit ids: exact + metadata, plus lexical when the text says more than the ids
//     (no semantic: a name is not a meaning);
//   - browse of a pack (p.Scope or a written id): hierarchy + metadata, plus exact when ids
//     were written (no lexical);
//   - browse with no pack found: exact + lexical + semantic + metadata + hierarchy (the words
//     are all there is to go on);
//   - otherwise: exact (cheap, and an exact name must never be missed), lexical, semantic,
//     metadata and history (skipping semantic for requests whose parse pins them cost the
//     seed cases a top-1 and resolution accuracy, and skipping history loses what the
//     caller's recorded sessions say: see bench/report/i18.md; per kind of query, the
//     semantic retriever added nDCG@5 on every kind measured, bench/report/i17e.md);
//   - a scope (req.Within or p.Scope) adds hierarchy.
//
// A cross-language query (CrossLanguage: the text in one language, the catalogue lex was
// built from in the other) weighs the semantic retriever CrossLangSemanticWeight times its
// fusion weight, and its reason says so. req and lex may be nil.
func PlanSteps(p *Parsed, req *registry.SearchRequest, lex *Lexicon) []Step {
	var why [index.NumKinds]string
	set := func(reason string, kinds ...index.Kind) {
		for _, k := range kinds {
			if why[k] == "" {
				why[k] = reason
			}
		}
	}
	switch {
	case p.Browse && (p.Scope != "" || len(p.IDs) > 0):
		set("browse of a pack", index.Hierarchy, index.Metadata)
		if len(p.IDs) > 0 {
			set("ids written", index.Exact)
		}
	case p.Browse:
		// A browse with no pack to list ("what tools do you have to analyse logs"): the
		// words are all there is, so search them and add the tree.
		set("browse with no pack named", index.Exact, index.Lexical, index.Semantic, index.Metadata, index.Hierarchy)
	case len(p.IDs) > 0:
		set("ids written", index.Exact, index.Metadata)
		if hasResidual(p.Text) {
			set("words besides the ids", index.Lexical)
		}
	default:
		set("an exact name must never be missed", index.Exact)
		set("the request's words", index.Lexical)
		set("intents, entities and symptoms", index.Metadata)
		set("natural language: meaning over words", index.Semantic)
		set("the caller's past sessions", index.History)
	}
	if p.Scope != "" || req != nil && req.Within != "" {
		set("a scope", index.Hierarchy)
	}
	var weight [index.NumKinds]float64
	if why[index.Semantic] != "" && CrossLanguage(p, lex) {
		why[index.Semantic] = crossLangReason
		weight[index.Semantic] = CrossLangSemanticWeight
	}
	out := make([]Step, 0, index.NumKinds)
	for k, w := range why {
		if w != "" {
			out = append(out, Step{Kind: index.Kind(k), Reason: w, Weight: weight[k]})
		}
	}
	return out
}

// crossLangReason is the semantic step's reason for a cross-language query.
var crossLangReason = "the request and the catalogue are in different languages: meaning across languages, weight ×" + strconv.Itoa(CrossLangSemanticWeight)

// planFiller are words that say what to do with a named capability, not what it is.
var planFiller = []string{
	"run", "use", "call", "invok", "execut", "describ", "show", "open", "tool", "capabl", "action",
	"version", "pleas", "with", "argument", "arg", "detail", "info", "about", "contract", "schema",
	"调", "用", "运", "行", "执", "描", "述", "查", "看", "一", "下", "帮", "我", "这", "个", "工", "具",
	"能", "力", "请", "详", "情", "的", "给", "使", "版", "本",
}

// hasResidual reports whether a text holds meaningful words besides id-like runs
// (holding ".", "_", ":", "@" or "-") and filler such as "run", "describe", "调用".
func hasResidual(s string) bool {
	toks := tokenize(nil, s)
	for _, t := range toks {
		if !t.cjk && inIDRun(s, int(t.start), int(t.end)) {
			continue
		}
		if !t.cjk && (text.IsStopWord(t.word) || len(t.word) < 2) {
			continue
		}
		if slices.Contains(planFiller, t.key) {
			continue
		}
		if t.cjk && strings.ContainsAny(t.word, "，。？！") {
			continue
		}
		return true
	}
	return false
}

// inIDRun reports whether s[start:end] lies in a run of id characters that holds a
// separator.
func inIDRun(s string, start, end int) bool {
	isID := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '@' || c == '-'
	}
	i, j := start, end
	for i > 0 && isID(s[i-1]) {
		i--
	}
	for j < len(s) && isID(s[j]) {
		j++
	}
	return strings.ContainsAny(strings.Trim(s[i:j], ".:-@"), "._:@-")
}
