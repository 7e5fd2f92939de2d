package query

import (
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
)

// token is one unit of matching: a Latin word (matched by its stem) or one CJK character.
type token struct {
	key        string // stem of a word, or the CJK character
	word       string // folded word, or the CJK character
	start, end int    // byte offsets in the tokenised text
	cjk        bool
}

// tokenize appends the tokens of s to dst. Joined forms of case-split words are skipped:
// phrases are matched on their parts.
func tokenize(dst []token, s string) []token {
	var sc text.Scanner
	sc.Reset(s)
	for sc.Next() {
		switch sc.Kind() {
		case text.KindWord:
			w := sc.Folded()
			start := sc.Offset()
			dst = append(dst, token{key: text.Stem(w), word: w, start: start, end: start + len(sc.Text())})
		case text.KindCJK:
			run, off := sc.Text(), sc.Offset()
			for i := 0; i < len(run); {
				_, n := utf8.DecodeRuneInString(run[i:])
				ch := run[i : i+n]
				dst = append(dst, token{key: ch, word: ch, start: off + i, end: off + i + n, cjk: true})
				i += n
			}
		}
	}
	return dst
}

// keys returns the match keys of a phrase ("sign_in" → [sign in], "删除日程" → 删 除 日 程).
func keys(s string) []string {
	toks := tokenize(nil, s)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.key
	}
	return out
}

// joinable reports whether tokens a and b (a before b) are adjacent parts of one phrase:
// CJK characters of one run, or words separated only by spaces, "_", "-", "." or "/".
func joinable(s string, a, b *token) bool {
	if a.end > b.start {
		return false
	}
	gap := s[a.end:b.start]
	if a.cjk && b.cjk {
		return gap == ""
	}
	if len(gap) > 3 {
		return false
	}
	for i := 0; i < len(gap); i++ {
		switch gap[i] {
		case ' ', '_', '-', '.', '/':
		default:
			return false
		}
	}
	return true
}
