package query

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/capdex/capdex/index/text"
)

// checkConceptIDs fails unless the concept ids the rules take from their scan of s are
// what the lexical retriever finds in the parse's text (text.AppendConceptIDs, repeats
// removed), with Terms its analysis, and unless a parse whose Text or Terms are replaced
// holds none.
func checkConceptIDs(tb testing.TB, lex *Lexicon, s string) {
	tb.Helper()
	p, err := Rules{}.Normalize(context.Background(), s, lex)
	if err != nil {
		return
	}
	got, ok := p.ConceptIDs()
	if !ok || got == nil {
		tb.Fatalf("%q: no concept ids (%v, %v)", s, got, ok)
	}
	var want []int32
	for _, c := range text.AppendConceptIDs(nil, p.Text) {
		if !slices.Contains(want, c) {
			want = append(want, c)
		}
	}
	if !slices.Equal(got, want) {
		tb.Fatalf("%q: concept ids %v, text.AppendConceptIDs %v", s, got, want)
	}
	if terms := text.Analyze(p.Text); !slices.Equal(p.Terms, terms) || (p.Terms == nil) != (terms == nil) {
		tb.Fatalf("%q: terms %q, text.Analyze %q", s, p.Terms, terms)
	}
	q := *p
	q.Text += " delete"
	if _, ok := q.ConceptIDs(); ok {
		tb.Fatalf("%q: concept ids kept for another text", s)
	}
	q = *p
	q.Terms = append(slices.Clone(p.Terms), "zzz")
	if _, ok := q.ConceptIDs(); ok {
		tb.Fatalf("%q: concept ids kept for other terms", s)
	}
	if _, ok := (&Parsed{Text: p.Text, Terms: p.Terms}).ConceptIDs(); ok {
		tb.Fatalf("%q: concept ids of a parse the rules did not build", s)
	}
}

// TestConceptIDs: the concept ids of a parse are those the lexical retriever would find in
// its text, for the lexprep texts, the seed cases, random mixes, every CJK character and
// every query of the evaluation sets, with the registries' lexicons and with none.
// (TestWordTableFull compares whole parses, these ids included, of a lexicon whose word
// table is full with those of a fresh one.)
func TestConceptIDs(t *testing.T) {
	texts := []string{
		"codex 更新后仍然启动旧版本", "delete the meeting and remove the meeting again",
		"sign in then log in", "sign, in", "YouTube video upload", "HTTPServer sign-in e-mail",
		"删除日程 删除 日程", "do it", "的了吗", "zzqx unknownword", "包含删除",
		"restart the service, not reinstall", "帮我取消明天的会议", "ＤＥＬＥＴＥ　ｔｈｅ　ｍｅｅｔｉｎｇ",
		"maintenance.codex.diagnose", "how do I fix the PATH conflict", strings.Repeat("x", 300) + " delete",
	}
	forQueryCorpus(t, texts, 11, 3, checkConceptIDs)
}

// TestCleanTextFastRunes: the runes cleanText keeps without consulting the Unicode tables
// (printable ASCII, kana and CJK ideographs) are none of those it drops or turns into a
// space.
func TestCleanTextFastRunes(t *testing.T) {
	for r := rune(0); r <= 0x9FFF; r++ {
		if !(r > ' ' && r < 0x7f || r >= 0x3040 && r <= 0x9FFF) {
			continue
		}
		if unicode.IsSpace(r) || r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) ||
			unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r) || r == 0xFFFE || r == 0xFFFF {
			t.Fatalf("%U is dropped or a space", r)
		}
		if s := "a" + string(r) + "b"; cleanText(s) != s {
			t.Fatalf("%U: cleanText(%q) = %q", r, s, cleanText(s))
		}
	}
}
