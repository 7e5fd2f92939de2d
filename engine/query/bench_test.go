package query

import (
	"context"
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
