package text

import (
	"slices"
	"testing"
	"unicode/utf8"
)

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"", "queryPassengerTrainOrder", "Codex 更新后仍然启动旧版本", "HTTPServer IDs",
		"a\xffb\x00c", "ＡＢＣ，删除\u3000日程", "don't'''s", "cafe\u0301", "::..__--",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms := Analyze(s)
		if !slices.Equal(terms, AppendTerms(nil, s)) {
			t.Fatal("Analyze and AppendTerms differ")
		}
		runes := utf8.RuneCountInString(s)
		if len(terms) > 3*runes+1 {
			t.Fatalf("%d terms from %d runes", len(terms), runes)
		}
		for _, term := range terms {
			if term == "" || !utf8.ValidString(term) {
				t.Fatalf("bad term %q from %q", term, s)
			}
		}
		for _, w := range Words(s) {
			if w == "" || !utf8.ValidString(w) || Fold(w) != w {
				t.Fatalf("bad word %q from %q", w, s)
			}
		}
		for _, c := range ConceptsIn(s) {
			if ConceptMembers(c) == nil {
				t.Fatalf("unknown concept %q", c)
			}
		}
		if f := Fold(s); Fold(f) != f {
			t.Fatalf("Fold is not idempotent on %q", s)
		}
	})
}
