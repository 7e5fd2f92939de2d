package query

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/capdex/capdex/index/text"
)

// TestCueBits: every cue name has a bit of its own.
func TestCueBits(t *testing.T) {
	var all cueSet
	for name := range cueTable {
		b := cueBits[name]
		if b == 0 || b&(b-1) != 0 || all&b != 0 {
			t.Errorf("cue %q: bit %#x (taken: %#x)", name, b, all)
		}
		all |= b
	}
	for name, b := range cueBits {
		if b == 0 || b&(b-1) != 0 {
			t.Errorf("cue %q: bit %#x", name, b)
		}
	}
}

// TestNormalizeConcurrent: goroutines sharing a lexicon (and so its word cache, filled as
// they go) get exactly the parses one goroutine gets on a fresh lexicon (run it with
// -race).
func TestNormalizeConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	texts := randomQueries(r, wordPool(nil), 400)
	want := make([]*Parsed, len(texts))
	seq := NewLexicon(fixtureSnapshot(t))
	for i, s := range texts {
		want[i], _ = Rules{}.Normalize(context.Background(), s, seq)
	}
	lex := NewLexicon(fixtureSnapshot(t))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range texts {
				i := (k + g*len(texts)/4) % len(texts)
				got, _ := Rules{}.Normalize(context.Background(), texts[i], lex)
				if !reflect.DeepEqual(got, want[i]) {
					t.Errorf("%q:\n got %+v\nwant %+v", texts[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// randomQueries returns n texts mixing words and phrases of the pool (cue phrases,
// concept members) with punctuation, digits, odd spacing and runes of other scripts, in
// Chinese and English.
func randomQueries(r *rand.Rand, pool []string, n int) []string {
	seps := []string{" ", " ", " ", "", "", ",", "，", "。", ". ", ".", "、", "/", "_", "-", "::", "@", "?", "？", "!", "\n", "\t", "  ",
		":", "：", "(", ")", "（", "）", "\"", "“", "”", ";", "；", "'", "’", "\x1b[31m", "\u200b", "\ufeff", "\x00", "\xff"}
	odd := []string{"Ａｂｃ", "１２３", "ñandú", "Straße", "İstanbul", "ﬁle", "한국어", "カタカナ", "ｶﾀｶﾅ", "ー", "😀", "e\u0301",
		"v2", "3.14", "@3", "@v2", "HTTPServer", "YouTube", "queryPassengerTrainOrder", "don't", "DON'T", "IDs", "URLs",
		"a.b.c", "x::y", "tools.get_weather", "maintenance.codex.diagnose@3", "Flights::book-flight", "codex_diagnose",
		"不", "别", "了", "吗", "没有", "再", "在", "里", "先", "后", "的"}
	out := make([]string, 0, n)
	var sb strings.Builder
	for range n {
		sb.Reset()
		words := 1 + r.IntN(40)
		if r.IntN(8) == 0 {
			words += r.IntN(300) // long, sometimes past MaxQueryBytes
		}
		for range words {
			var w string
			switch x := r.IntN(10); {
			case x < 6:
				w = pool[r.IntN(len(pool))]
			case x < 8:
				w = odd[r.IntN(len(odd))]
			default:
				w = seps[r.IntN(len(seps))]
			}
			if r.IntN(6) == 0 {
				w = strings.ToUpper(w)
			}
			sb.WriteString(w)
			sb.WriteString(seps[r.IntN(len(seps))])
		}
		out = append(out, sb.String())
	}
	return out
}

// wordPool returns the material randomQueries mixes: the given texts, the cue phrases and
// the concept members.
func wordPool(texts []string) []string {
	pool := append([]string(nil), texts...)
	for _, phrases := range cueTable {
		pool = append(pool, phrases...)
	}
	lx := text.DefaultLexicon()
	for _, name := range lx.Names() {
		pool = append(pool, lx.Members(name)...)
	}
	return pool
}
