package text

import (
	"testing"
	"unicode"
)

// TestCaselessRunes: the runes foldRune passes through unchanged without consulting the case
// tables are runes widen and unicode.ToLower leave as they are.
func TestCaselessRunes(t *testing.T) {
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !caseless(r) {
			continue
		}
		n++
		if w := widen(r); w != r || unicode.ToLower(w) != r {
			t.Fatalf("%U: widen %U, lower %U", r, w, unicode.ToLower(w))
		}
	}
	if n == 0 {
		t.Fatal("no caseless rune")
	}
}
