package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Selection of CC-CEDICT entries and glosses. A bridge word must be specific enough that
// its glosses translate it: words of 2 to 4 Han characters (one character is too ambiguous,
// and the embedder already has CJK unigrams and bigrams), common words only (no proper
// noun: a capitalised pinyin syllable), and glosses that are translations, not
// explanations (at most maxGlossWords content words once "to", "sb", "sth" and articles are
// dropped).
const (
	minRunes      = 2
	maxRunes      = 4
	maxGlossWords = 2
	// maxGlosses is how many of an entry's short glosses are kept, in dictionary order
	// (CC-CEDICT lists the main sense first).
	maxGlosses = 3
	// maxWords bounds the English words of one bridge word.
	maxWords = 4
)

// glossFiller are words of a gloss that say nothing of its meaning.
var glossFiller = map[string]bool{
	"to": true, "a": true, "an": true, "the": true, "sb": true, "sth": true, "one": true, "one's": true,
	"oneself": true, "of": true, "or": true, "and": true, "etc": true, "be": true, "is": true,
	"someone": true, "something": true, "with": true, "for": true, "in": true, "on": true, "at": true,
}

// skipGloss marks glosses that are references, not translations.
var skipGloss = []string{"variant of", "see ", "cl:", "surname ", "abbr.", "used in ", "also written",
	"also pr.", "old variant", "japanese variant", "erhua variant", "radical", "classifier", "(bound form)"}

// ErrFormat is returned for a line that is not a CC-CEDICT entry.
var ErrFormat = errors.New("not a CC-CEDICT entry")

// Generate reads CC-CEDICT from r and writes the bridge to w: a header with the licence,
// then one line per selected simplified word, in dictionary order of first appearance, with
// the English words of all its entries' selected glosses.
func Generate(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var order []string
	words := map[string][]string{}
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if s == "" || s[0] == '#' {
			continue
		}
		simp, pinyin, glosses, err := parseEntry(s)
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if !selectWord(simp, pinyin) {
			continue
		}
		en := glossWords(glosses)
		if len(en) == 0 {
			continue
		}
		prev, seen := words[simp]
		if !seen {
			order = append(order, simp)
		}
		for _, e := range en {
			if len(prev) < maxWords && !slices.Contains(prev, e) {
				prev = append(prev, e)
			}
		}
		words[simp] = prev
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if _, err := io.WriteString(w, header); err != nil {
		return err
	}
	for _, z := range order {
		if _, err := fmt.Fprintf(w, "%s %s\n", z, strings.Join(words[z], " ")); err != nil {
			return err
		}
	}
	return nil
}

const header = `# capdex cross-language bridge: Chinese words and the English words of their glosses.
# Derived from CC-CEDICT (https://cc-cedict.org/, published by MDBG; CEDICT Copyright (C)
# 1997, 1998 Paul Andrew Denisowski) by cmd/genbridge. Licensed CC BY-SA 4.0
# (https://creativecommons.org/licenses/by-sa/4.0/), like its source. Regenerate; do not edit.
`

// parseEntry splits "TRAD SIMP [pin1 yin1] /gloss/gloss/".
func parseEntry(s string) (simp, pinyin string, glosses []string, err error) {
	_, rest, ok := strings.Cut(s, " ")
	if !ok {
		return "", "", nil, ErrFormat
	}
	simp, rest, ok = strings.Cut(rest, " ")
	if !ok || !strings.HasPrefix(rest, "[") {
		return "", "", nil, ErrFormat
	}
	pinyin, rest, ok = strings.Cut(rest[1:], "]")
	if !ok {
		return "", "", nil, ErrFormat
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "/") || !strings.HasSuffix(rest, "/") || len(rest) < 2 {
		return "", "", nil, ErrFormat
	}
	return simp, pinyin, strings.Split(rest[1:len(rest)-1], "/"), nil
}

// selectWord reports whether a simplified headword of that pinyin is a bridge word: 2 to 4
// Han characters, and not a proper noun (CC-CEDICT capitalises their pinyin).
func selectWord(simp, pinyin string) bool {
	n := utf8.RuneCountInString(simp)
	if n < minRunes || n > maxRunes {
		return false
	}
	for _, r := range simp {
		if !unicode.Is(unicode.Han, r) {
			return false
		}
	}
	for _, syl := range strings.Fields(pinyin) {
		if r, _ := utf8.DecodeRuneInString(syl); unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// glossWords returns the English content words of the first maxGlosses short glosses.
func glossWords(glosses []string) []string {
	var out []string
	kept := 0
	for _, g := range glosses {
		if kept == maxGlosses {
			break
		}
		g = strings.ToLower(strings.TrimSpace(g))
		if g == "" || slices.ContainsFunc(skipGloss, func(p string) bool { return strings.Contains(g, p) }) {
			continue
		}
		g = dropParens(g)
		var ws []string
		ok := true
		for _, f := range strings.FieldsFunc(g, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }) {
			if glossFiller[f] {
				continue
			}
			if !isWord(f) {
				ok = false
				break
			}
			ws = append(ws, f)
		}
		if !ok || len(ws) == 0 || len(ws) > maxGlossWords {
			continue
		}
		kept++
		for _, w := range ws {
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// dropParens removes parenthesised asides ("(coll.)", "(of a file)").
func dropParens(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isWord reports whether f is a plain English word of 2 or more lowercase letters (a
// hyphen inside allowed).
func isWord(f string) bool {
	if len(f) < 2 {
		return false
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if !(c >= 'a' && c <= 'z' || c == '-' && i > 0 && i < len(f)-1) {
			return false
		}
	}
	return true
}
