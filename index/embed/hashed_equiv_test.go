package embed

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// equivTexts is a mixed corpus of English, Chinese and odd inputs, plus the ../shared/eval
// queries and tool descriptions when they are checked out.
func equivTexts(tb testing.TB) []string {
	tb.Helper()
	texts := []string{
		"", "x", "the of and", "!!! ... ???", "\xff\x00删\x1b[0m",
		"Delete a schedule event", "删除日程", "Codex 更新后仍然启动旧版本",
		"delete a schedule event and notify the attendees", "帮我删除明天下午的日程并通知参会人",
		"HTTPServer getUserID YouTube schedule_create maintenance.codex.diagnose",
		strings.Repeat("schedule_create 删除日程 HTTPServer ", 300),
		strings.Repeat("z", 10000), strings.Repeat("ab ", 2000),
		"deleting deleted delete deletes deletion undelete", "ＦＵＬＬ　ＷＩＤＴＨ　ｔｅｘｔ",
	}
	words := []string{"delete", "schedule", "event", "删除", "日程", "更新", "codex", "version",
		"HTTPServer", "login", "sign in", "登录", "weather", "天气", "the", "a", "查询", "user_id",
		"café", "naïve", "ü", "e", "ion", "nation", "national", "nationality", "🙂", "x86_64"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		var b strings.Builder
		for range 1 + r.IntN(60) {
			b.WriteString(words[r.IntN(len(words))])
			if r.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		texts = append(texts, b.String())
	}
	max := 1 << 30
	if testing.Short() {
		max = 300
	}
	return append(texts, evalTexts(tb, false, max)...)
}

func TestEmbedSparseMatchesReference(t *testing.T) {
	texts := equivTexts(t)
	// every text at the default dimension; every 8th at dimensions that take the other
	// paths: one radix pass (512), a modulus (1000, 3), three passes (2^20)
	for _, dim := range []int{DefaultHashedDim, 512, 1000, 1 << 20, 3} {
		h := NewHashedDim(dim)
		step := 1
		if dim != DefaultHashedDim {
			step = 8
		}
		t.Run(h.ID(), func(t *testing.T) {
			n := 0
			for i := 0; i < len(texts); i += step {
				s := texts[i]
				n++
				got, want := h.EmbedSparse(s), h.refEmbedSparse(s)
				if len(got.Idx) != len(want.Idx) || len(got.Val) != len(want.Val) {
					t.Fatalf("%.80q: %d features, want %d", s, len(got.Idx), len(want.Idx))
				}
				for i := range want.Idx {
					if got.Idx[i] != want.Idx[i] || math.Float32bits(got.Val[i]) != math.Float32bits(want.Val[i]) {
						t.Fatalf("%.80q: feature %d is (%d, %v), want (%d, %v)", s, i, got.Idx[i], got.Val[i], want.Idx[i], want.Val[i])
					}
				}
			}
			t.Logf("%d texts identical", n)
		})
	}
}
