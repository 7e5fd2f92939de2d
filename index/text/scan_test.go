package text

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "camelCase", in: "queryPassengerTrainOrder", want: []string{"query", "passenger", "train", "order"}},
		{name: "dotted id", in: "maintenance.codex.diagnose", want: []string{"maintenance", "codex", "diagnose"}},
		{name: "acronym", in: "HTTPServer", want: []string{"http", "server"}},
		{name: "acronym then word", in: "parseJSONResponse", want: []string{"parse", "json", "response"}},
		{name: "plural acronym", in: "listURLs getIDs", want: []string{"list", "urls", "get", "ids"}},
		{name: "snake and kebab", in: "schedule_create kebab-case-name", want: []string{"schedule", "create", "kebab", "case", "name"}},
		{name: "double colon", in: "Trends Hub::get-weread-rank", want: []string{"trends", "hub", "get", "weread", "rank"}},
		{name: "double underscore", in: "maintenance__codex_diagnose", want: []string{"maintenance", "codex", "diagnose"}},
		{name: "digits stay", in: "ipv6 base64 2024 v2", want: []string{"ipv6", "base64", "2024", "v2"}},
		{name: "digits then case", in: "getV2Orders HTTP2Server 2FA", want: []string{"get", "v2", "orders", "http2", "server", "2fa"}},
		{name: "apostrophe joins", in: "don't user's", want: []string{"dont", "users"}},
		{name: "lone apostrophe splits", in: "'quoted' rock'n", want: []string{"quoted", "rockn"}},
		{name: "mixed cjk", in: "Codex 更新后仍然启动旧版本", want: []string{"codex", "更新后仍然启动旧版本"}},
		{name: "cjk glued to latin", in: "用Codex更新", want: []string{"用", "codex", "更新"}},
		{name: "cjk punctuation splits", in: "删除日程，然后通知。", want: []string{"删除日程", "然后通知"}},
		{name: "full-width latin", in: "ＣｏｄｅｘＤｉａｇｎｏｓｅ", want: []string{"codex", "diagnose"}},
		{name: "japanese and korean", in: "ファイルを削除 파일 삭제", want: []string{"ファイルを削除", "파일", "삭제"}},
		{name: "other scripts", in: "Привет мир café", want: []string{"привет", "мир", "café"}},
		{name: "combining mark", in: "cafe\u0301s", want: []string{"cafe\u0301s"}},
		{name: "control and invalid", in: "ab\x00cd\xffef\x1b[0m", want: []string{"ab", "cd", "ef", "0m"}},
		{name: "regexp metachars", in: `.*+?()[]{}|^$\ a.b`, want: []string{"a", "b"}},
		{name: "empty", in: "", want: nil},
		{name: "whitespace", in: " \t\n\u3000", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Words(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestScannerKinds(t *testing.T) {
	type tok struct {
		kind Kind
		text string // folded
		orig string
	}
	tests := []struct {
		name string
		in   string
		want []tok
	}{
		{name: "joined after case split", in: "YouTube x", want: []tok{
			{KindWord, "you", "You"}, {KindWord, "tube", "Tube"}, {KindJoined, "youtube", "YouTube"}, {KindWord, "x", "x"},
		}},
		{name: "no joined across separators", in: "a_b", want: []tok{{KindWord, "a", "a"}, {KindWord, "b", "b"}}},
		{name: "joined drops apostrophe", in: "isn'tIt", want: []tok{
			{KindWord, "isnt", "isn't"}, {KindWord, "it", "It"}, {KindJoined, "isntit", "isn'tIt"},
		}},
		{name: "cjk run", in: "ab删除cd", want: []tok{{KindWord, "ab", "ab"}, {KindCJK, "删除", "删除"}, {KindWord, "cd", "cd"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sc Scanner
			sc.Reset(tt.in)
			var got []tok
			for sc.Next() {
				got = append(got, tok{sc.Kind(), string(sc.Bytes()), sc.Text()})
				if sc.Folded() != string(sc.Bytes()) {
					t.Errorf("Folded() = %q, Bytes() = %q", sc.Folded(), sc.Bytes())
				}
				if sc.Offset() < 0 || sc.Offset() > len(tt.in) {
					t.Errorf("Offset() = %d out of range", sc.Offset())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("tokens of %q = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	for _, k := range []Kind{KindWord, KindCJK, KindJoined, 0} {
		if k.String() == "" {
			t.Errorf("Kind(%d).String() is empty", k)
		}
	}
}
