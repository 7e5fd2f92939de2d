package text

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// widen maps a full-width form to its half-width counterpart without changing case:
// U+FF01..U+FF5E to ASCII, the ideographic space to a space and the full-width signs
// U+FFE0..U+FFE6 to their Latin-1 forms. Other runes are returned unchanged.
func widen(r rune) rune {
	switch {
	case r < 0x3000:
		return r
	case r == 0x3000:
		return ' '
	case r >= 0xFF01 && r <= 0xFF5E:
		return r - 0xFF01 + 0x21
	case r >= 0xFFE0 && r <= 0xFFE6:
		return fullwidthSigns[r-0xFFE0]
	}
	return r
}

// fullwidthSigns are the half-width forms of U+FFE0..U+FFE6 (￠￡￢￣￤￥￦).
var fullwidthSigns = [...]rune{'¢', '£', '¬', '¯', '¦', '¥', '₩'}

// foldRune is widen followed by lowercasing.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	if caseless(r) {
		return r
	}
	return unicode.ToLower(widen(r))
}

// caseless reports whether r lies in the kana and CJK ideograph blocks (U+3040..U+9FFF) or
// the Hangul syllables: runes that neither widen nor lowercase change, the bulk of Chinese
// text, answered without a search of the case tables.
func caseless(r rune) bool {
	return r >= 0x3040 && r <= 0x9FFF || r >= 0xAC00 && r <= 0xD7A3
}

// Fold lowercases s and maps full-width ASCII forms (letters, digits and punctuation such
// as "，" and "！"), the ideographic space and the full-width currency signs to their
// half-width forms. Invalid UTF-8 bytes become U+FFFD. A string that needs no change is
// returned as is, without allocating.
func Fold(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || foldRune(r) != r {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// IsCJK reports whether r is a Han, Hiragana, Katakana or Hangul character (including the
// prolonged sound mark ー and half-width Katakana). CJK punctuation is not.
func IsCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	if (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0xAC00 && r <= 0xD7A3) || r == 0x30FC {
		return true // CJK Unified Ideographs, Hangul syllables, prolonged sound mark
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}
