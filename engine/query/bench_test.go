package query

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

func BenchmarkNormalize(b *testing.B) {
	lex := builtinLexicon(b)
	for _, q := range []struct{ name, text string }{
		{"zh/read_first", "codex 更新后还是旧版本，先检查原因，不要直接更新"},
		{"en/negation", "don't update it yet, just check why codex runs the old version"},
		{"browse", "Codex 维护相关能力有哪些？"},
		{"id", "maintenance.codex.diagnose@3"},
		{"en/long", "I am planning a trip to Berlin next month and need to book a hotel near the central station for three nights. " +
			"Could you also find the cheapest flight from Shanghai on the 12th, convert the total price into euros, " +
			"and send the itinerary to my manager by email so the expense report can be filed afterwards?"},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (Rules{}).Normalize(context.Background(), q.text, lex); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkNewLexicon(b *testing.B) {
	caps, err := registry.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		NewLexicon(snap)
	}
	b.ReportMetric(float64(len(caps)), "caps")
}

// BenchmarkNewLexicon10k builds the lexicon of 10,000 synthetic capabilities in 500 packs.
func BenchmarkNewLexicon10k(b *testing.B) {
	snap := syntheticSnapshot(b, 10000)
	b.ReportAllocs()
	for b.Loop() {
		NewLexicon(snap)
	}
}

func syntheticSnapshot(tb testing.TB, n int) *registry.Snapshot {
	tb.Helper()
	words := []string{"codex", "docker", "npm", "schedule", "invoice", "flight", "report", "email", "python", "disk"}
	verbs := []string{"diagnose", "update", "delete", "create", "list", "repair", "send", "book"}
	var caps []*registry.Capability
	for p := 0; p < n/20; p++ {
		caps = append(caps, &registry.Capability{ID: fmt.Sprintf("dom%d.pack%d", p%10, p), ResourceType: registry.TypePack,
			Title: fmt.Sprintf("%s 工具 %d", words[p%len(words)], p)})
		if p < 10 {
			caps = append(caps, &registry.Capability{ID: fmt.Sprintf("dom%d", p), ResourceType: registry.TypePack, Title: "domain"})
		}
	}
	for i := 0; len(caps) < n; i++ {
		w, v := words[i%len(words)], verbs[i%len(verbs)]
		caps = append(caps, &registry.Capability{
			ID: fmt.Sprintf("dom%d.pack%d.%s_%s_%d", (i/20)%10, i/20%(n/20), v, w, i), ResourceType: registry.TypeAction,
			Title:    fmt.Sprintf("%s %s number %d", v, w, i),
			Aliases:  []string{fmt.Sprintf("%s %s 版本不一致 %d", w, v, i%50), fmt.Sprintf("%s the %s now", v, w)},
			Intents:  []string{v, verbs[(i+3)%len(verbs)]},
			Entities: []string{w, fmt.Sprintf("thing%d", i%300)},
			Symptoms: []string{fmt.Sprintf("%s_version_mismatch", w), fmt.Sprintf("error_%d", i%40)},
		})
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		tb.Fatal(err)
	}
	return snap
}

// BenchmarkNormalizeEval normalises the queries of each evaluation set (../shared/eval, or
// CAPDEX_EVAL_DIR) in turn, with the set's registry: ns/op is the mean cost of one query.
func BenchmarkNormalizeEval(b *testing.B) {
	for _, set := range evalSets(b) {
		b.Run("set="+set.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := (Rules{}).Normalize(context.Background(), set.queries[i], set.lex); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(set.queries) {
					i = 0
				}
			}
		})
	}
}

// jsonlQueries returns the "query" value of every line of a JSON-lines file.
func jsonlQueries(tb testing.TB, path string) []string {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, q.Query)
	}
	return out
}

// BenchmarkLexiconPersisted10k writes and loads the lexicon of the 10,000 capabilities of
// BenchmarkNewLexicon10k: what an open pays instead of NewLexicon (load), and what writing
// the index state adds (write). B/cap is the persisted size.
func BenchmarkLexiconPersisted10k(b *testing.B) {
	snap := syntheticSnapshot(b, 10000)
	lex := NewLexicon(snap)
	data := lex.AppendPersisted(nil)
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lex.AppendPersisted(nil)
		}
		b.ReportMetric(float64(len(data))/float64(len(snap.Caps)), "B/cap")
	})
	b.Run("load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := LoadLexicon(data, snap); err != nil {
				b.Fatal(err)
			}
		}
	})
}
