package text

import (
	"testing"
)

func TestFold(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: ""},
		{name: "ascii upper", in: "Hello WORLD", want: "hello world"},
		{name: "full-width letters and digits", in: "ＡＢＣｘｙｚ０９", want: "abcxyz09"},
		{name: "full-width punctuation", in: "你好，世界！（测试）", want: "你好,世界!(测试)"},
		{name: "ideographic space", in: "删除\u3000日程", want: "删除 日程"},
		{name: "full-width signs", in: "￥１００", want: "¥100"},
		{name: "non-latin lower", in: "ÄÖÜ Σ", want: "äöü σ"},
		{name: "cjk unchanged", in: "更新后仍然启动旧版本", want: "更新后仍然启动旧版本"},
		{name: "invalid utf8", in: "a\xffB", want: "a\uFFFDb"},
		{name: "control chars kept", in: "A\x00\tB", want: "a\x00\tb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fold(tt.in); got != tt.want {
				t.Errorf("Fold(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFoldNoAllocWhenFolded(t *testing.T) {
	s := "already folded text 删除日程 123"
	if n := testing.AllocsPerRun(100, func() { _ = Fold(s) }); n != 0 {
		t.Errorf("Fold of a folded string allocated %v times", n)
	}
}

func TestIsCJK(t *testing.T) {
	tests := []struct {
		name string
		r    rune
		want bool
	}{
		{name: "han", r: '删', want: true},
		{name: "han ext A", r: '\u3400', want: true},
		{name: "hiragana", r: 'の', want: true},
		{name: "katakana", r: 'カ', want: true},
		{name: "prolonged mark", r: 'ー', want: true},
		{name: "half-width katakana", r: 'ｶ', want: true},
		{name: "hangul", r: '한', want: true},
		{name: "latin", r: 'a', want: false},
		{name: "cjk punctuation", r: '。', want: false},
		{name: "full-width comma", r: '，', want: false},
		{name: "cyrillic", r: 'ж', want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsCJK(tt.r); got != tt.want {
				t.Errorf("IsCJK(%q) = %v, want %v", tt.r, got, tt.want)
			}
		})
	}
}
