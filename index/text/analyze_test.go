package text

import (
	"slices"
	"strings"
	"testing"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "stem and stop", in: "Deleting the deleted Schedules", want: []string{"delet", "delet", "schedul"}},
		{name: "id split", in: "maintenance.codex.diagnose", want: []string{"mainten", "codex", "diagnos"}},
		{name: "camel keeps joined", in: "queryPassengerTrainOrder", want: []string{"queri", "passeng", "train", "order", "querypassengertrainord"}},
		{name: "brand joined", in: "YouTube GitHub", want: []string{"tube", "youtub", "git", "hub", "github"}},
		{name: "cjk unigrams and bigrams", in: "删除日程", want: []string{"删", "删除", "除", "除日", "日", "日程", "程"}},
		{name: "single cjk", in: "删", want: []string{"删"}},
		{name: "particle unigram dropped", in: "我的订单", want: []string{"我", "我的", "的订", "订", "订单", "单"}},
		{name: "mixed one pass", in: "Codex 更新后仍然启动旧版本", want: []string{
			"codex", "更", "更新", "新", "新后", "后", "后仍", "仍", "仍然", "然", "然启", "启", "启动", "动", "动旧", "旧", "旧版", "版", "版本", "本",
		}},
		{name: "digits kept", in: "top 10 in 2024", want: []string{"top", "10", "2024"}},
		{name: "non-ascii not stemmed", in: "cafés Привет", want: []string{"cafés", "привет"}},
		{name: "only stop words", in: "the and of a", want: nil},
		{name: "empty", in: "", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Analyze(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Analyze(%q) = %q, want %q", tt.in, got, tt.want)
			}
			pre := []string{"x"}
			if app := AppendTerms(pre, tt.in); !slices.Equal(app[1:], tt.want) || app[0] != "x" {
				t.Errorf("AppendTerms(%q) = %q, want prefix x then %q", tt.in, app, tt.want)
			}
		})
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "ing", in: "deleting", want: "delet"},
		{name: "plural", in: "schedules", want: "schedul"},
		{name: "short", in: "go", want: "go"},
		{name: "digits", in: "ipv6", want: "ipv6"},
		{name: "upper not folded", in: "Deleting", want: "Deleting"},
		{name: "non-ascii", in: "cafés", want: "cafés"},
		{name: "cjk", in: "删除", want: "删除"},
		{name: "long word unstemmed", in: strings.Repeat("ab", 40) + "ing", want: strings.Repeat("ab", 40) + "ing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Stem(tt.in); got != tt.want {
				t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := Stem(tt.in); got != tt.want { // memoised path
				t.Errorf("second Stem(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestIsStopWord(t *testing.T) {
	for _, w := range []string{"the", "a", "please", "how"} {
		if !IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = false", w)
		}
	}
	for _, w := range []string{"not", "delete", "id", "up", "off", "删除"} {
		if IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = true", w)
		}
	}
}

func TestAppendTermsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector; allocation counts are meaningless")
	}
	tests := []struct{ name, in string }{
		{name: "en", in: "Schedule a meeting with the HTTPServer team and send invites"},
		{name: "zh", in: "帮我删除明天下午的日程并通知参会人"},
		{name: "mixed", in: "Codex 更新后仍然启动旧版本 queryPassengerTrainOrder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := make([]string, 0, 256)
			_ = AppendTerms(dst, tt.in) // warm the stem cache
			if n := testing.AllocsPerRun(100, func() { dst = AppendTerms(dst[:0], tt.in) }); n != 0 {
				t.Errorf("AppendTerms allocated %v times per run, want 0", n)
			}
		})
	}
}

func TestAnalyzeLongInput(t *testing.T) {
	// 10 KB of mixed text: bounded output, no panic.
	s := strings.Repeat("Codex更新 deleteSchedule ", 400)
	s = s[:10*1024]
	got := Analyze(s)
	if len(got) == 0 || len(got) > 2*len(s) {
		t.Fatalf("Analyze of 10 KB gave %d terms", len(got))
	}
	one := strings.Repeat("a", 10*1024) // a single 10 KB word is kept whole
	if got := Analyze(one); len(got) != 1 || got[0] != one {
		t.Fatalf("Analyze of one long word gave %d terms", len(got))
	}
}
