package rank

import (
	"math"
	"testing"

	"github.com/capdex/capdex/registry"
)

func TestPhraseKey(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"stop words and stems", "Review this PR: capdex/capdex#17", " review pr capdex capdex 17 "},
		{"cjk characters one by one, particles dropped", "在 PR 上留言了", " 在 pr 上 留 言 "},
		{"empty", "", " "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PhraseKey(tt.in); got != tt.want {
				t.Fatalf("PhraseKey(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if w := phraseWords(PhraseKey("退款")); w != 1 {
		t.Errorf("退款 counts %v words, want 1", w)
	}
	if w := phraseWords(PhraseKey("review this pr")); w != 2 {
		t.Errorf("review this pr counts %v words, want 2", w)
	}
}

func TestTermCache(t *testing.T) {
	caps := []*registry.Capability{
		{ID: "p.schedule_create", Title: "Create a schedule", Summary: "Create a calendar schedule entry.",
			Aliases: []string{"create schedule", "new meeting", "会"}, WhenToUse: []string{"Create a calendar schedule entry.", "the user wants a new meeting"}},
		{ID: "p.weather", Title: "Weather", Summary: "Weather forecast for a city."},
		{ID: "p.flight", Title: "Flight search", Summary: "Search flights to a city."},
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	tc := NewTermCache(snap.Caps, simpleAnalyze)
	cand := func(id string) *Candidate {
		d, _ := snap.DocID(id)
		c, _ := snap.Get(id)
		return &Candidate{Doc: d, Cap: c}
	}
	sched := cand("p.schedule_create")
	t.Run("when_to_use that repeats the summary is dropped", func(t *testing.T) {
		if n := len(decodeEntries(tc.termsOf(tc.doc(sched)).use)); n != 1 {
			t.Fatalf("%d when_to_use entries kept, want 1", n)
		}
	})
	t.Run("aliases of two words or more", func(t *testing.T) {
		if n := len(aliasKeys(tc, sched)); n != 2 {
			t.Fatalf("%d alias phrases, want 2 (%q)", n, aliasKeys(tc, sched))
		}
		has := func(q string) bool {
			k := PhraseKey(q)
			p := tc.wordPairs(nil, k)
			return tc.aliasPhrase(tc.doc(sched), &p)
		}
		if !has("please create schedule for bob") {
			t.Fatal("alias phrase not found")
		}
		if has("schedule then create") {
			t.Fatal("words out of order matched as a phrase")
		}
		// the word-pair filter never hides an alias the phrase holds
		for d := range snap.Caps {
			c := &Candidate{Doc: uint32(d), Cap: snap.Caps[d]}
			for _, a := range aliasKeys(tc, c) {
				for _, q := range []string{a, " x" + a, a + "y ", " 删 除" + a + "了 "} {
					if p := tc.wordPairs(nil, q); !tc.aliasPhrase(tc.doc(c), &p) {
						t.Errorf("%s: alias %q not found in %q", c.Cap.ID, a, q)
					}
				}
			}
		}
	})
	t.Run("coverage", func(t *testing.T) {
		terms := []string{"create", "schedule", "zebra"} // zebra: no capability uses it
		q := tc.query(terms)
		defer q.release()
		got := tc.textCoverage(tc.doc(sched), q)
		want := float64(tc.idf[number(tc, "create")]+tc.idf[number(tc, "schedule")]) / q.weight
		if math.Abs(got-want) > 1e-9 || got <= 0 || got >= 1 {
			t.Fatalf("coverage %v, want %v", got, want)
		}
		if c := tc.textCoverage(tc.doc(cand("p.weather")), q); c != 0 {
			t.Fatalf("weather covers %v", c)
		}
		weight := func(terms []string) float64 {
			q := tc.query(terms)
			defer q.release()
			return q.weight
		}
		// Digits and unknown CJK bigrams weigh nothing: an id or a cross-word bigram is no need.
		if w := weight([]string{"3pm2", "披萨"}); w != 0 {
			t.Fatalf("weight %v", w)
		}
		if weight([]string{"披"}) != float64(tc.maxIDF) {
			t.Fatal("an unknown CJK character weighs the most")
		}
	})
	t.Run("no cache: coverage unknown", func(t *testing.T) {
		var none *TermCache
		if c := none.textCoverage(none.doc(sched), &queryTerms{weight: 1}); c != 1 {
			t.Fatalf("coverage %v", c)
		}
	})
}

func TestRerankTypeBiases(t *testing.T) {
	caps := codexCaps(t)
	guide := &registry.Capability{ID: "maintenance.codex.guide", ResourceType: registry.TypeRecipe, SideEffect: registry.SideEffectRead}
	caps[guide.ID] = guide
	mk := func() []Candidate {
		return []Candidate{
			{Cap: caps["maintenance.codex"], Evidence: ev(t, "lexical:1")},
			{Cap: caps["maintenance.codex.diagnose"], Evidence: ev(t, "lexical:2")},
			{Cap: guide, Evidence: ev(t, "lexical:3")},
		}
	}
	tests := []struct {
		name string
		sig  Signals
		want []string
	}{
		{"a task: the action first, the pack last", Signals{}, []string{"maintenance.codex.diagnose", "maintenance.codex.guide", "maintenance.codex"}},
		{"a browse: the pack first", Signals{Browse: true}, []string{"maintenance.codex", "maintenance.codex.diagnose", "maintenance.codex.guide"}},
		{"a how-to: the recipe before the action", Signals{HowTo: true}, []string{"maintenance.codex.guide", "maintenance.codex.diagnose", "maintenance.codex"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := mk()
			Fuse(cs, DefaultWeights())
			Rerank(cs, tt.sig, DefaultRerankOptions())
			if got := ids(cs); !equalStrings(got, tt.want) {
				t.Fatalf("order %v, want %v", got, tt.want)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
