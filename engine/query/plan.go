package query

import (
	"slices"
	"strings"

	"github.com/capdex/capdex/index"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// Plan returns the retriever kinds a parsed query needs, in index.Kind order:
//
//   - explicit ids: exact + metadata, plus lexical when the text says more than the ids
//     (no semantic: a name is not a meaning);
//   - browse of a pack (p.Scope or a written id): hierarchy + metadata, plus exact when ids
//     were written (no lexical);
//   - browse with no pack found: exact + lexical + semantic + metadata + hierarchy (the words
//     are all there is to go on);
//   - otherwise (fuzzy): exact + lexical + semantic + metadata + history (exact is cheap
//     and an exact name must never be missed);
//   - a scope (req.Within or p.Scope) adds hierarchy.
//
// req may be nil.
func Plan(p *Parsed, req *registry.SearchRequest) []index.Kind {
	var use [index.NumKinds]bool
	set := func(kinds ...index.Kind) {
		for _, k := range kinds {
			use[k] = true
		}
	}
	switch {
	case p.Browse && (p.Scope != "" || len(p.IDs) > 0):
		set(index.Hierarchy, index.Metadata)
		if len(p.IDs) > 0 {
			set(index.Exact)
		}
	case p.Browse:
		// A browse with no pack to list ("what tools do you have to analyse logs"): the
		// words are all there is, so search them and add the tree.
		set(index.Exact, index.Lexical, index.Semantic, index.Metadata, index.Hierarchy)
	case len(p.IDs) > 0:
		set(index.Exact, index.Metadata)
		if hasResidual(p.Text) {
			set(index.Lexical)
		}
	default:
		set(index.Exact, index.Lexical, index.Semantic, index.Metadata, index.History)
	}
	if p.Scope != "" || req != nil && req.Within != "" {
		set(index.Hierarchy)
	}
	out := make([]index.Kind, 0, index.NumKinds)
	for k, u := range use {
		if u {
			out = append(out, index.Kind(k))
		}
	}
	return out
}

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
