package text

import (
	"slices"
	"strings"
	"testing"
)

// TestNoEntryTokens: marking the words HasWord does not have NoEntry, and the CJK runes
// HasCJK does not have in NoStart, leaves the concepts
// AppendTokenConceptIDs finds unchanged, with the default lexicon and with one of phrases,
// blockers and overlapping members; marking a word the lexicon has drops its concepts (the
// mark is read).
func TestNoEntryTokens(t *testing.T) {
	custom := phraseLexicon(t)
	texts := append(tokenTexts(t), "YouTube sign-in LogIn",
		"我想删除日程表然后包含包裹包", strings.Repeat("的删除日程", 30), strings.Repeat("x删", 40)+"删除日程表")
	for _, l := range []*Lexicon{defaultLex(t), custom} {
		for _, s := range texts {
			var plain, marked []Token
			var sc Scanner
			sc.Reset(s)
			for sc.Next() {
				key, _ := sc.Key()
				plain = append(plain, Token{Key: key, Kind: sc.Kind()})
				tok := Token{Key: key, Kind: sc.Kind(), NoEntry: sc.Kind() == KindWord && !l.HasWord(key)}
				if sc.Kind() == KindCJK {
					k := 0
					for _, r := range key {
						if k < 64 && !l.HasCJK(string(r)) {
							tok.NoStart |= 1 << k
						}
						k++
					}
				}
				marked = append(marked, tok)
			}
			want := l.AppendTokenConceptIDs(nil, plain)
			if got := l.AppendTokenConceptIDs(nil, marked); !slices.Equal(got, want) {
				t.Fatalf("%.80q: concepts %v, want %v", s, l.namesOf(got), l.namesOf(want))
			}
		}
	}
	l := defaultLex(t)
	toks := []Token{{Key: Stem("delete"), Kind: KindWord}}
	if !l.HasWord(toks[0].Key) || len(l.AppendTokenConceptIDs(nil, toks)) == 0 {
		t.Fatal("delete: no concept")
	}
	toks[0].NoEntry = true
	if got := l.AppendTokenConceptIDs(nil, toks); len(got) != 0 {
		t.Fatalf("delete marked NoEntry: concepts %v", l.namesOf(got))
	}
	toks = []Token{{Key: "删除", Kind: KindCJK}}
	if len(l.AppendTokenConceptIDs(nil, toks)) == 0 {
		t.Fatal("删除: no concept")
	}
	toks[0].NoStart = 1
	if got := l.AppendTokenConceptIDs(nil, toks); len(got) != 0 {
		t.Fatalf("删除 marked NoStart: concepts %v", l.namesOf(got))
	}
}

// TestHasWord: the lexicon has the first word of every English key (members, phrases and
// blockers), and no word that starts none.
func TestHasWord(t *testing.T) {
	l := defaultLex(t)
	firsts := map[string]bool{}
	for key := range l.byKey {
		if r := []rune(key)[0]; IsCJK(r) {
			continue
		}
		first, _, _ := strings.Cut(key, " ")
		firsts[first] = true
		if !l.HasWord(first) {
			t.Fatalf("%q: first word %q not had", key, first)
		}
	}
	for _, w := range Analyze(strings.Join(equivTexts(t), " ")) {
		if l.HasWord(w) != firsts[w] {
			t.Fatalf("%q: HasWord %v, starts a key %v", w, l.HasWord(w), firsts[w])
		}
	}
}
