package query

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQueryBytes bounds the text a normaliser reads: longer input is truncated at the last
// character boundary before it (and a note says so). A search goal is a sentence or two;
// 4 KiB leaves room for a pasted error message.
const MaxQueryBytes = 4096

// sanitize truncates s to MaxQueryBytes, repairs invalid UTF-8 (each bad sequence becomes
// U+FFFD in raw) and returns the cleaned text: ANSI escape sequences, control and format
// characters dropped,
// white space (and U+FFFD) turned into single spaces, trimmed.
func sanitize(s string) (raw, clean string, truncated bool) {
	if len(s) > MaxQueryBytes {
		i := MaxQueryBytes
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, truncated = s[:i], true
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if cleanASCII(s) {
		return s, s, truncated
	}
	return s, cleanText(s), truncated
}

// cleanText drops ANSI escape sequences, control and format characters from s, turns
// white space (and U+FFFD) into single spaces and trims it.
func cleanText(s string) string {
	var sb strings.Builder
	sb.Grow(len(s))
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == 0x1b && i < len(s) && s[i] == '[' {
			// An ANSI escape sequence (pasted terminal output): ESC [ params final-byte.
			i++
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
			i++
			continue
		}
		switch {
		case r > ' ' && r < 0x7f || r >= 0x3040 && r <= 0x9FFF: // printable ASCII, kana and CJK ideographs
		case unicode.IsSpace(r) || r == utf8.RuneError:
			space = sb.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r) || r == 0xFFFE || r == 0xFFFF:
			continue
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// cleanASCII reports whether s is printable ASCII already as sanitize leaves it: no control
// characters, single spaces between words, none at either end.
func cleanASCII(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i]-0x20 > 0x7e-0x20 { // below 0x20 (wrapping round) or above 0x7e
			return false
		}
	}
	return !strings.Contains(s, "  ")
}
