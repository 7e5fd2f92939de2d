package query

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzNormalize checks that the rules never panic, answer ErrEmptyQuery or a well-formed
// parse, that the planner accepts every parse, and that the phrase key and signal terms
// the rules derive from their scan are those of the parse's fields (checkDerived). Seeds:
// testdata/fuzz/FuzzNormalize.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"先检查原因，不要直接更新", "don't update it yet", "maintenance.codex.diagnose@3", "Codex 维护相关能力有哪些？", ""} {
		f.Add(s)
	}
	lex := NewLexicon(fixtureSnapshot(f))
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Rules{}.Normalize(context.Background(), s, lex)
		if err != nil {
			if !errors.Is(err, ErrEmptyQuery) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if p.Text == "" || !utf8.ValidString(p.Text) || !utf8.ValidString(p.Raw) || len(p.Raw) > 3*MaxQueryBytes {
			t.Fatalf("bad text %q / raw %d bytes", p.Text, len(p.Raw))
		}
		for _, r := range p.Text {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("control character %U in %q", r, p.Text)
			}
		}
		if p.Lang != "zh" && p.Lang != "en" && p.Lang != "mixed" {
			t.Fatalf("lang %q", p.Lang)
		}
		for _, in := range p.Intents {
			for _, fb := range p.Forbidden {
				if in == fb {
					t.Fatalf("intent %q is also forbidden", in)
				}
			}
		}
		if len(Plan(p, nil, lex)) == 0 {
			t.Fatal("empty plan")
		}
		checkDerived(t, lex, s)
	})
}

// FuzzSanitizeFastPath: text cleanASCII accepts is exactly what the general cleaning
// returns for it.
func FuzzSanitizeFastPath(f *testing.F) {
	for _, s := range []string{"codex --version", "a  b", " a", "a ", "a\tb", "x\x1b[31my", "查看 日志", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		if cleanASCII(s) && cleanText(s) != s {
			t.Fatalf("cleanASCII(%q) but cleanText gives %q", s, cleanText(s))
		}
		if !cleanASCII(s) && s != "" && cleanText(s) == s && isASCII(s) {
			t.Fatalf("clean ASCII text %q refused by the fast path", s)
		}
	})
}

// FuzzLoadLexicon checks that LoadLexicon never panics on any bytes, refuses with an
// error wrapping ErrLexiconPersisted, and that a lexicon it loads writes the bytes it was
// loaded from. Seeds: the fixture's lexicon and a truncation of it.
func FuzzLoadLexicon(f *testing.F) {
	snap := fixtureSnapshot(f)
	b := NewLexicon(snap).AppendPersisted(nil)
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := LoadLexicon(b, snap)
		if err != nil {
			if !errors.Is(err, ErrLexiconPersisted) || l != nil {
				t.Fatalf("error %v with lexicon %v", err, l != nil)
			}
			return
		}
		if again := l.AppendPersisted(nil); !bytes.Equal(again, b) {
			t.Fatal("a loaded lexicon writes other bytes")
		}
	})
}
