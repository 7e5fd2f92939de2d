package text

import (
	"unicode"
	"unicode/utf8"
)

// MaxClauses bounds the clauses Clauses returns: the rest of a longer text is the last.
const MaxClauses = 8

// Clauses splits s into its sentences, the units a request of several tasks is written in
// ("Book a hotel in Paris. Then check the weather there."): a break after '.', '!', '?' or
// ';' followed by white space or the end, after a line break, and after the CJK 。！？；
// (full stops and semicolons need no space after them). A decimal ("8.7") or an initialism
// in a word ("e.g.,") does not break. Empty clauses are dropped; each clause is a substring
// of s with its surrounding white space trimmed. A text of one sentence gives one clause.
func Clauses(s string) []string {
	var out []string
	start := 0
	emit := func(end int) {
		if c := trimSpace(s[start:end]); c != "" {
			out = append(out, c)
		}
	}
	for i := 0; i < len(s) && len(out) < MaxClauses-1; {
		r, n := utf8.DecodeRuneInString(s[i:])
		j := i + n
		brk := false
		switch r {
		case '.', '!', '?', ';':
			if j == len(s) {
				break
			}
			next, _ := utf8.DecodeRuneInString(s[j:])
			brk = unicode.IsSpace(next)
		case '\n', '。', '！', '？', '；':
			brk = true
		}
		if brk {
			emit(j)
			start = j
		}
		i = j
	}
	emit(len(s))
	return out
}

func trimSpace(s string) string {
	for s != "" {
		r, n := utf8.DecodeRuneInString(s)
		if !unicode.IsSpace(r) {
			break
		}
		s = s[n:]
	}
	for s != "" {
		r, n := utf8.DecodeLastRuneInString(s)
		if !unicode.IsSpace(r) {
			break
		}
		s = s[:len(s)-n]
	}
	return s
}
