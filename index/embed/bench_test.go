package embed

import (
	"strings"
	"testing"
)

func BenchmarkHashedEmbedSparse(b *testing.B) {
	texts := []struct{ name, text string }{
		{name: "query_en", text: "delete a schedule event and notify the attendees"},
		{name: "query_zh", text: "帮我删除明天下午的日程并通知参会人"},
		{name: "query_mixed", text: "Codex 更新后仍然启动旧版本"},
		{name: "doc", text: strings.Repeat("maintenance.codex.diagnose: Diagnose why Codex still starts the old version after an update; checks PATH, npm global packages and shell hashes. 诊断 Codex 更新后仍启动旧版本的问题。 ", 3)},
	}
	h := NewHashed()
	for _, tt := range texts {
		b.Run(tt.name, func(b *testing.B) {
			var v SparseVector
			b.SetBytes(int64(len(tt.text)))
			b.ReportAllocs()
			for b.Loop() {
				v = h.EmbedSparse(tt.text)
			}
			b.ReportMetric(float64(v.Len()), "features/op")
		})
	}
}
