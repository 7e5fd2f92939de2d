package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxSegment bounds one id segment made from a foreign name.
const maxSegment = 64

// IDSegment maps a foreign name to one valid id segment: camelCase becomes snake_case
// ("queryViolation" → "query_violation", "HTTPServer" → "http_server"), every character
// outside [a-z0-9_] becomes "_", repeats collapse and the ends are trimmed. A segment that
// would start with a digit gets an "x" prefix ("3dPrint" → "x3d_print"); a name with no
// ASCII letter or digit at all ("鸣潮") becomes "u" and 8 hex digits of its SHA-256, so it
// stays distinct and stable. Segments are cut at 64 bytes.
func IDSegment(name string) string {
	var b strings.Builder
	words := splitWords(name)
	for _, w := range words {
		var part strings.Builder
		for _, r := range strings.ToLower(w) {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
				part.WriteRune(r)
			} else if part.Len() > 0 {
				part.WriteByte('_')
			}
		}
		p := strings.Trim(part.String(), "_")
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		b.WriteString(p)
	}
	s := collapseUnderscores(b.String())
	if s == "" {
		sum := sha256.Sum256([]byte(name))
		return "u" + hex.EncodeToString(sum[:4])
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "x" + s
	}
	if len(s) > maxSegment {
		s = strings.TrimRight(s[:maxSegment], "_")
	}
	return s
}

func collapseUnderscores(s string) string {
	var b strings.Builder
	prev := false
	for i := 0; i < len(s); i++ {
		if s[i] == '_' {
			if prev {
				continue
			}
			prev = true
		} else {
			prev = false
		}
		b.WriteByte(s[i])
	}
	return strings.Trim(b.String(), "_")
}

// splitWords splits a name into words at separators (anything that is not a letter or
// digit) and camelCase boundaries: "getHTTPResponse2" → get HTTP Response2,
// "get-weread-rank" → get weread rank; a change between ASCII and other scripts is a
// boundary too ("八字MCP" → 八字 MCP).
func splitWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		} else if len(cur) > 0 && isASCII(r) != isASCII(cur[len(cur)-1]) {
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

func isASCII(r rune) bool { return r < utf8.RuneSelf }

// titleFromName turns a foreign name into a readable title: "queryPassengerTrainOrder" →
// "Query passenger train order", "get-weread-rank" → "Get weread rank"; acronyms keep
// their case ("getHTTPStatus" → "Get HTTP status").
func titleFromName(name string) string {
	words := splitWords(name)
	for i, w := range words {
		if !isAcronym(w) {
			w = strings.ToLower(w)
		}
		if i == 0 {
			r, size := utf8.DecodeRuneInString(w)
			w = string(unicode.ToUpper(r)) + w[size:]
		}
		words[i] = w
	}
	t := strings.Join(words, " ")
	if t == "" {
		return strings.TrimSpace(name)
	}
	return t
}

func isAcronym(w string) bool {
	letters := 0
	for _, r := range w {
		if unicode.IsLetter(r) {
			if !unicode.IsUpper(r) {
				return false
			}
			letters++
		}
	}
	return letters > 1
}

// firstSentence returns the first sentence of a description: up to the first ". ", "! ",
// "? ", line break or CJK full stop, keeping its punctuation. Abbreviations such as "e.g."
// do not end a sentence.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	for i, r := range s {
		switch r {
		case '\n', '\r':
			if t := strings.TrimSpace(s[:i]); t != "" {
				return t
			}
		case '。', '！', '？', '；':
			return strings.TrimSpace(s[:i+utf8.RuneLen(r)])
		case '.', '!', '?':
			next := i + 1
			if next < len(s) && s[next] != ' ' && s[next] != '\t' {
				continue
			}
			if r == '.' && isAbbreviation(s[:i]) {
				continue
			}
			return strings.TrimSpace(s[:next])
		}
	}
	return s
}

func isAbbreviation(before string) bool {
	w := before[strings.LastIndexAny(before, " \t(")+1:]
	switch strings.ToLower(w) {
	case "e.g", "i.e", "etc", "vs", "approx", "incl", "no", "mr", "mrs", "dr", "st":
		return true
	}
	return false
}
