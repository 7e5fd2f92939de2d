package query

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/index/text"
	"github.com/capdex/capdex/registry"
)

// evalSet is an evaluation set's registry (as a lexicon) and queries.
type evalSet struct {
	name    string
	lex     *Lexicon
	queries []string
}

// evalSets returns the evaluation sets under ../shared/eval (or CAPDEX_EVAL_DIR) that have
// both tools and queries; none when the folder is absent.
func evalSets(tb testing.TB) []evalSet {
	tb.Helper()
	dir := cmp.Or(os.Getenv("CAPDEX_EVAL_DIR"), "../../../shared/eval")
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "queries.jsonl"))
	var out []evalSet
	for _, qpath := range paths {
		set := filepath.Dir(qpath)
		tools, err := os.Open(filepath.Join(set, "tools.jsonl"))
		if err != nil {
			continue
		}
		caps, err := registry.ImportWith(tools, registry.ImportOptions{Format: "jsonl", Pack: "tools", Provider: "eval",
			ACL: registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}}})
		tools.Close()
		if err != nil {
			tb.Fatalf("%s: %v", set, err)
		}
		snap, err := registry.NewSnapshot(1, caps)
		if err != nil {
			tb.Fatalf("%s: %v", set, err)
		}
		out = append(out, evalSet{filepath.Base(set), NewLexicon(snap), jsonlQueries(tb, qpath)})
	}
	return out
}

// checkDerived fails unless what the rules derived for the ranking while parsing s equals
// what is computed from the parse's fields: rank's phrase key of Text and the signal
// terms of Terms and Concepts. A parse whose fields are replaced must not keep them.
func checkDerived(tb testing.TB, lex *Lexicon, s string) {
	tb.Helper()
	p, err := Rules{}.Normalize(context.Background(), s, lex)
	if err != nil {
		return
	}
	if got, ok := p.PhraseKey(); !ok || got != rank.PhraseKey(p.Text) {
		tb.Fatalf("%q: phrase key %q (%v), rank.PhraseKey %q", s, got, ok, rank.PhraseKey(p.Text))
	}
	fields := &Parsed{Terms: p.Terms, Concepts: p.Concepts} // computes them
	if got, want := p.SignalTerms(), fields.SignalTerms(); !slices.Equal(got, want) {
		tb.Fatalf("%q: signal terms\n got %q\nwant %q", s, got, want)
	}
	q := *p
	q.Text += " x"
	if _, ok := q.PhraseKey(); ok {
		tb.Fatalf("%q: phrase key kept for another text", s)
	}
	q.Terms = append(slices.Clone(p.Terms), "zzz")
	if got := q.SignalTerms(); !slices.Contains(got, "zzz") {
		tb.Fatalf("%q: signal terms kept for other terms: %q", s, got)
	}
}

// TestDerivedSignals: the phrase key and signal terms the rules take from their scan are
// rank.PhraseKey(Text) and the signal terms of Terms and Concepts, for every query of the
// evaluation sets (with their registries and with none), the seed cases, random mixes, and
// every CJK character on its own (the particles rank leaves out of phrase keys are those
// text.IsParticle names).
func TestDerivedSignals(t *testing.T) {
	forQueryCorpus(t, nil, 5, 1, checkDerived)
}

// forQueryCorpus calls check with the default lexicon and the fixture's on extra, the seed
// cases and 500 random mixes of their words (drawn with seed); with the default lexicon on
// every CJK character followed by " 了" after every particleEvery-th (in texts of about 1000
// bytes); and with each evaluation set's lexicon and the default one on its queries.
func forQueryCorpus(t *testing.T, extra []string, seed uint64, particleEvery rune, check func(testing.TB, *Lexicon, string)) {
	seeds := jsonlQueries(t, "../../testdata/eval/seed_cases.jsonl")
	pool := wordPool(seeds)
	slices.Sort(pool) // wordPool ranges over maps
	random := randomQueries(rand.New(rand.NewPCG(seed, seed+1)), pool, 500)
	def, fixture := NewLexicon(nil), NewLexicon(fixtureSnapshot(t))
	for _, s := range slices.Concat(extra, seeds, random) {
		check(t, def, s)
		check(t, fixture, s)
	}
	var sb strings.Builder
	for r := rune(0x1100); r <= 0xFFFF; r++ {
		if text.IsCJK(r) {
			sb.WriteRune(r)
			if r%particleEvery == 0 {
				sb.WriteString(" 了")
			}
		}
		if sb.Len() > 1000 || r == 0xFFFF {
			check(t, def, sb.String())
			sb.Reset()
		}
	}
	for _, set := range evalSets(t) {
		t.Run(set.name, func(t *testing.T) {
			for _, s := range set.queries {
				check(t, set.lex, s)
				check(t, def, s)
			}
		})
	}
}

// TestWordSlotSize: a word's slot is one cache line.
func TestWordSlotSize(t *testing.T) {
	if n := unsafe.Sizeof(wordSlot{}); n != 64 {
		t.Fatalf("a wordSlot takes %d bytes", n)
	}
}

// TestWordTableFull: once a lexicon's word table is full, words are analysed each time,
// with the same parses.
func TestWordTableFull(t *testing.T) {
	full, fresh := NewLexicon(fixtureSnapshot(t)), NewLexicon(fixtureSnapshot(t))
	var sb strings.Builder
	for i := range wordTableMax / 2 {
		fmt.Fprintf(&sb, "w%d ", i)
		if sb.Len() > MaxQueryBytes-16 || i == wordTableMax/2-1 {
			normalize(t, full, sb.String())
			sb.Reset()
		}
	}
	if full.words.n != wordTableMax/2 || len(full.words.tab.Load().slots) != wordTableMax {
		t.Fatalf("table holds %d words in %d slots", full.words.n, len(full.words.tab.Load().slots))
	}
	pool := wordPool(nil)
	slices.Sort(pool)
	for _, s := range randomQueries(rand.New(rand.NewPCG(7, 8)), pool, 200) {
		got, err := Rules{}.Normalize(context.Background(), s, full)
		want, werr := Rules{}.Normalize(context.Background(), s, fresh)
		if err != werr || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", s, got, want)
		}
	}
}
