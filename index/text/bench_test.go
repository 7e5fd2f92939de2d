package text

import "testing"

var benchTexts = []struct{ name, text string }{
	{name: "en", text: "Schedule a meeting with the infrastructure team, then send calendar invites and " +
		"check whether the HTTPServer deployment passed its health checks (queryPassengerTrainOrder)."},
	{name: "zh", text: "帮我删除明天下午三点的日程，然后通知所有参会人会议取消了，并查询一下去上海的高铁票"},
	{name: "mixed", text: "Codex 更新后仍然启动旧版本，maintenance.codex.diagnose 诊断一下 PATH 和 npm 全局包"},
}

func BenchmarkAnalyze(b *testing.B) {
	for _, bt := range benchTexts {
		b.Run(bt.name, func(b *testing.B) {
			dst := make([]string, 0, 256)
			dst = AppendTerms(dst, bt.text)
			b.SetBytes(int64(len(bt.text)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				dst = AppendTerms(dst[:0], bt.text)
			}
			b.ReportMetric(float64(len(dst)), "terms/op")
		})
	}
}

func BenchmarkConceptsIn(b *testing.B) {
	for _, bt := range benchTexts {
		b.Run(bt.name, func(b *testing.B) {
			dst := AppendConcepts(make([]string, 0, 64), bt.text)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				dst = AppendConcepts(dst[:0], bt.text)
			}
			b.ReportMetric(float64(len(dst)), "concepts/op")
		})
	}
}
