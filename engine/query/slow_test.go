package query

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestAdversarialInputs: long repetitive inputs stay far from quadratic blow-ups (each well
// under a second even under -race; typically a few milliseconds).
func TestAdversarialInputs(t *testing.T) {
	lex := NewLexicon(fixtureSnapshot(t))
	for _, s := range []string{
		strings.Repeat("不要", 3000), strings.Repeat("a.", 3000), strings.Repeat("别更新或", 3000),
		strings.Repeat("list tools ", 500), strings.Repeat("有哪些能力", 1000), strings.Repeat("在里", 2000),
		strings.Repeat("don't update or ", 400), strings.Repeat("先", 4000), strings.Repeat("让", 4000),
		strings.Repeat("x ", 2000), strings.Repeat("maintenance.codex.diagnose ", 200),
	} {
		t.Run(s[:12], func(t *testing.T) {
			start := time.Now()
			if _, err := (Rules{}).Normalize(context.Background(), s, lex); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}
