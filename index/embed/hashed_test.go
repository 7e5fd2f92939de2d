package embed

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
)

func cosine(h *Hashed, a, b string) float32 {
	return h.EmbedSparse(a).Dot(h.EmbedSparse(b))
}

func checkSparse(tb testing.TB, v SparseVector) {
	tb.Helper()
	if len(v.Idx) != len(v.Val) {
		tb.Fatalf("Idx has %d entries, Val %d", len(v.Idx), len(v.Val))
	}
	var ss float64
	for i := range v.Idx {
		if i > 0 && v.Idx[i] <= v.Idx[i-1] {
			tb.Fatalf("Idx not strictly increasing at %d: %d after %d", i, v.Idx[i], v.Idx[i-1])
		}
		if v.Val[i] <= 0 || math.IsNaN(float64(v.Val[i])) {
			tb.Fatalf("Val[%d] = %v", i, v.Val[i])
		}
		ss += float64(v.Val[i]) * float64(v.Val[i])
	}
	if len(v.Idx) > 0 && math.Abs(ss-1) > 1e-4 {
		tb.Fatalf("norm² = %v, want 1", ss)
	}
}

func TestHashedBasics(t *testing.T) {
	h := NewHashed()
	if h.ID() != "hashed-v2-262144" || h.Dim() != 1<<18 {
		t.Fatalf("ID %q Dim %d", h.ID(), h.Dim())
	}
	if NewHashedDim(0).Dim() != DefaultHashedDim || NewHashedDim(512).ID() != "hashed-v2-512" {
		t.Fatal("NewHashedDim does not default or name its dimension")
	}
	var _ SparseEmbedder = h
	tests := []struct {
		name  string
		in    string
		empty bool
	}{
		{name: "english", in: "Delete a schedule event"},
		{name: "chinese", in: "删除日程"},
		{name: "mixed", in: "Codex 更新后仍然启动旧版本"},
		{name: "single letter", in: "x"},
		{name: "only stop words", in: "the of and", empty: true},
		{name: "empty", in: "", empty: true},
		{name: "punctuation", in: "!!! ... ???", empty: true},
		{name: "invalid utf8 and controls", in: "\xff\x00删\x1b[0m"},
		{name: "10 KB", in: strings.Repeat("schedule_create 删除日程 HTTPServer ", 300)},
		{name: "one long word", in: strings.Repeat("z", 10000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := h.EmbedSparse(tt.in)
			checkSparse(t, v)
			if (v.Len() == 0) != tt.empty {
				t.Fatalf("EmbedSparse(%q) has %d entries, want empty=%v", tt.in, v.Len(), tt.empty)
			}
			if !tt.empty {
				if d := v.Dot(h.EmbedSparse(tt.in)); math.Abs(float64(d)-1) > 1e-5 {
					t.Fatalf("self cosine %v, want 1 (deterministic)", d)
				}
			}
		})
	}
}

func TestHashedDenseMatchesSparse(t *testing.T) {
	h := NewHashedDim(512)
	texts := []string{"upgrade codex", "更新 codex 版本", ""}
	dense, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		if len(dense[i]) != 512 {
			t.Fatalf("dense vector of %d entries", len(dense[i]))
		}
		sp := h.EmbedSparse(s)
		for k, idx := range sp.Idx {
			if dense[i][idx] != sp.Val[k] {
				t.Fatalf("text %q: dense[%d] = %v, sparse %v", s, idx, dense[i][idx], sp.Val[k])
			}
		}
	}
	if got, want := Dot(dense[0], dense[1]), h.EmbedSparse(texts[0]).Dot(h.EmbedSparse(texts[1])); math.Abs(float64(got-want)) > 1e-6 {
		t.Fatalf("dense cosine %v, sparse %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Embed(ctx, texts); !errors.Is(err, context.Canceled) {
		t.Fatalf("Embed with a cancelled context: %v", err)
	}
}

// TestHashedQuality asserts orderings, never absolute values.
func TestHashedQuality(t *testing.T) {
	h := NewHashed()
	tests := []struct {
		name            string
		query, better   string
		worse           string
		minBetterCosine float32
	}{
		{name: "zh delete schedule vs en", query: "删除日程", better: "delete a schedule event", worse: "create a flight booking", minBetterCosine: 0.3},
		{name: "upgrade codex across languages", query: "upgrade codex", better: "更新 codex 版本", worse: "删除日程", minBetterCosine: 0.3},
		{name: "upgrade beats install", query: "upgrade codex", better: "更新 codex 版本", worse: "install codex"},
		{name: "zh train ticket vs en", query: "查询火车票", better: "search train tickets", worse: "search hotel rooms"},
		{name: "refund", query: "申请退款", better: "request a refund for an order", worse: "pay an invoice"},
		{name: "weather", query: "明天北京天气怎么样", better: "get the weather forecast for a city", worse: "book a flight to Beijing"},
		{name: "morphology", query: "deleting schedules", better: "delete schedule", worse: "create schedule"},
		{name: "synonym", query: "remove a calendar entry", better: "delete a schedule event", worse: "create a schedule event"},
		{name: "camel id", query: "query passenger train order", better: "queryPassengerTrainOrder", worse: "queryHotelOrder"},
		{name: "diagnose", query: "codex 启动失败 排查", better: "diagnose codex startup errors", worse: "uninstall codex"},
		{name: "translate", query: "把这段话翻译成英文", better: "translate text into another language", worse: "summarize a document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, w := cosine(h, tt.query, tt.better), cosine(h, tt.query, tt.worse)
			if b <= w {
				t.Errorf("cos(%q, %q) = %.3f, not above cos(…, %q) = %.3f", tt.query, tt.better, b, tt.worse, w)
			}
			if b < tt.minBetterCosine {
				t.Errorf("cos(%q, %q) = %.3f, want at least %.2f", tt.query, tt.better, b, tt.minBetterCosine)
			}
		})
	}
}

func TestHashedConcurrent(t *testing.T) {
	h := NewHashed()
	texts := []string{"删除日程", "delete a schedule event", "Codex 更新后仍然启动旧版本", "queryPassengerTrainOrder"}
	want := make([]SparseVector, len(texts))
	for i, s := range texts {
		want[i] = h.EmbedSparse(s)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for r := 0; r < 200; r++ {
				i := (g + r) % len(texts)
				if d := h.EmbedSparse(texts[i]).Dot(want[i]); math.Abs(float64(d)-1) > 1e-5 {
					t.Errorf("concurrent vector of %q differs (cos %v)", texts[i], d)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestSparseAndDenseHelpers(t *testing.T) {
	a := SparseVector{Idx: []uint32{1, 3, 5}, Val: []float32{1, 2, 3}}
	b := SparseVector{Idx: []uint32{0, 3, 5, 9}, Val: []float32{7, 1, 1, 7}}
	if got := a.Dot(b); got != 5 {
		t.Fatalf("Dot = %v, want 5", got)
	}
	if got := a.Dense(4); len(got) != 4 || got[1] != 1 || got[3] != 2 {
		t.Fatalf("Dense(4) = %v", got)
	}
	v := []float32{3, 4}
	Normalize(v)
	if v[0] != 0.6 || v[1] != 0.8 {
		t.Fatalf("Normalize = %v", v)
	}
	z := []float32{0, 0}
	Normalize(z)
	if z[0] != 0 || z[1] != 0 {
		t.Fatalf("Normalize of zero = %v", z)
	}
	if Dot([]float32{1, 2, 3}, []float32{1, 1}) != 3 {
		t.Fatal("Dot of unequal lengths")
	}
}

// TestHashedBridge checks the CC-CEDICT bridge: pairs that share no surface feature and no
// concept of the hand-made lexicon, across languages and between two Chinese words of one
// gloss.
func TestHashedBridge(t *testing.T) {
	h := NewHashed()
	tests := []struct{ query, better, worse string }{
		{"论文的参考文献", "format a thesis", "format a spreadsheet"},
		{"search picture books for children", "搜索儿童绘本", "搜索儿童玩具"},
		{"保费是多少", "insurance premium rate", "insurance claim status"},
		{"记录一次违章", "traffic violation record", "traffic jam record"},
		{"热门景区", "popular scenic area", "popular restaurant"},
	}
	for _, tt := range tests {
		b, w := cosine(h, tt.query, tt.better), cosine(h, tt.query, tt.worse)
		if b <= w {
			t.Errorf("cos(%q, %q) = %.3f, not above cos(…, %q) = %.3f", tt.query, tt.better, b, tt.worse, w)
		}
	}
	if got, _ := defaultBridge().wordKeys("删除"); len(got) == 0 || got[0] != "delet" && got[0] != "delete" {
		t.Errorf("bridge of 删除 = %q, want the key of delete first", got)
	}
}
