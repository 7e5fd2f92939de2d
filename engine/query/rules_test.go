package query

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/capdex/capdex/registry"
)

func normalize(tb testing.TB, lex *Lexicon, q string) *Parsed {
	tb.Helper()
	p, err := Rules{}.Normalize(context.Background(), q, lex)
	if err != nil {
		tb.Fatalf("Normalize(%q): %v", q, err)
	}
	return p
}

// hasAll reports whether list holds every value of want.
func hasAll(list, want []string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}

func hasNone(list, bad []string) bool {
	for _, b := range bad {
		if slices.Contains(list, b) {
			return false
		}
	}
	return true
}

func TestRulesNormalize(t *testing.T) {
	lex := NewLexicon(fixtureSnapshot(t))
	tests := []struct {
		name  string
		query string
		check func(tb testing.TB, p *Parsed)
	}{
		{"read first, update forbidden", "先检查原因，不要直接更新", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"diagnose", "inspect"}, []string{"update", "upgrade"})
			want(tb, "constraints", p.Constraints, []string{"read_first", "no_update"}, nil)
			want(tb, "forbidden", p.Forbidden, []string{"update", "upgrade"}, []string{"diagnose"})
			wantBool(tb, "explicit write", p.ExplicitWrite, false)
			wantStr(tb, "lang", p.Lang, "zh")
		}},
		{"reinstall forbids its relatives", "不要直接重装", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"reinstall", "update", "install"}, nil)
			want(tb, "intents", p.Intents, nil, []string{"reinstall", "update", "install"})
		}},
		{"don't update it yet", "don't update it yet", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"update", "upgrade"}, []string{"reinstall"})
			wantStr(tb, "lang", p.Lang, "en")
		}},
		{"do not upgrade", "do not upgrade", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"update", "upgrade"}, nil)
		}},
		{"without reinstalling", "fix codex without reinstalling", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"reinstall", "update", "install"}, nil)
			want(tb, "intents", p.Intents, []string{"repair"}, []string{"reinstall"})
			want(tb, "entities", p.Entities, []string{"codex"}, nil)
		}},
		{"别更新", "别更新", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"update"}, nil)
		}},
		{"先别升级", "先别升级", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"update", "upgrade"}, nil)
		}},
		{"不要删除", "不要删除", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"delete"}, nil)
			want(tb, "constraints", p.Constraints, []string{"no_delete"}, nil)
		}},
		{"coordinated verbs", "不要更新或重装 codex", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"update", "reinstall"}, nil)
		}},
		{"negation ends at the clause", "don't reinstall, just update codex", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"reinstall"}, nil)
		}},
		{"别 inside a word is not a negation", "识别图片里的文字", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, nil, []string{"identify"})
			want(tb, "intents", p.Intents, []string{"identify"}, nil)
		}},
		{"不 inside a word is not a negation", "codex 版本不一致", func(tb testing.TB, p *Parsed) {
			if len(p.Forbidden) != 0 {
				tb.Errorf("forbidden %v", p.Forbidden)
			}
			want(tb, "symptoms", p.Symptoms, []string{"active_version_mismatch"}, nil)
		}},
		{"inability is a symptom, not a prohibition", "docker 不能启动", func(tb testing.TB, p *Parsed) {
			if len(p.Forbidden) != 0 || slices.Contains(p.Intents, "start") {
				tb.Errorf("forbidden %v intents %v", p.Forbidden, p.Intents)
			}
		}},
		{"dry run", "dry run the codex update", func(tb testing.TB, p *Parsed) {
			want(tb, "constraints", p.Constraints, []string{"dry_run"}, nil)
			want(tb, "intents", p.Intents, []string{"update"}, []string{"run"})
			wantBool(tb, "explicit write", p.ExplicitWrite, false)
		}},
		{"试运行", "试运行一下更新", func(tb testing.TB, p *Parsed) {
			want(tb, "constraints", p.Constraints, []string{"dry_run"}, nil)
		}},
		{"只看不改", "只看不改", func(tb testing.TB, p *Parsed) {
			want(tb, "constraints", p.Constraints, []string{"dry_run", "read_only"}, nil)
			want(tb, "intents", p.Intents, nil, []string{"edit"})
		}},
		{"check first", "check first, then maybe update", func(tb testing.TB, p *Parsed) {
			want(tb, "constraints", p.Constraints, []string{"read_first"}, nil)
			want(tb, "intents", p.Intents, []string{"diagnose"}, nil)
		}},
		{"why asks for a diagnosis", "why does codex still run the old version", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"diagnose"}, []string{"run"})
		}},
		{"browse zh with pack scope", "Codex 维护相关能力有哪些？", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "maintenance.codex")
		}},
		{"browse en docker", "what can you do with docker", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "devops.docker")
		}},
		{"browse en list tools", "list the tools for schedules", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "productivity.calendar")
		}},
		{"browse zh 有哪些...能力", "有哪些日程相关的能力", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "productivity.calendar")
		}},
		{"browse without a pack", "what tools do you have", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "")
		}},
		{"listing data is not browsing", "我的日程有哪些", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, false)
		}},
		{"which tool (one) is not browsing", "which tool deletes a schedule", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, false)
		}},
		{"advice is not browsing", "what can I do to speed up docker", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, false)
		}},
		{"features of a thing are not browsing", "what are the key features of the new flight search", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, false)
		}},
		{"不再 is no longer, not a prohibition", "不再关注那个账号了", func(tb testing.TB, p *Parsed) {
			if len(p.Forbidden) != 0 {
				tb.Errorf("forbidden %v", p.Forbidden)
			}
		}},
		{"不需要…了 is no longer needed", "我不需要它自动更新了", func(tb testing.TB, p *Parsed) {
			if len(p.Forbidden) != 0 {
				tb.Errorf("forbidden %v", p.Forbidden)
			}
		}},
		{"不要再 is still an order", "不要再更新 codex 了", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"update"}, nil)
		}},
		{"不想再 is a wish to undo", "不想再收藏那个动态了，帮我取消一下", func(tb testing.TB, p *Parsed) {
			if len(p.Forbidden) != 0 {
				tb.Errorf("forbidden %v", p.Forbidden)
			}
		}},
		{"never in a statement", "I can never find the update button", func(tb testing.TB, p *Parsed) {
			if len(p.Forbidden) != 0 {
				tb.Errorf("forbidden %v", p.Forbidden)
			}
		}},
		{"never as an order", "never delete the schedule", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"delete"}, nil)
		}},
		{"no as an order", "update codex, no restart", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"restart"}, []string{"update"})
			want(tb, "constraints", p.Constraints, []string{"no_restart"}, nil)
		}},
		{"explicit write zh", "帮我删除这个日程", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "explicit write", p.ExplicitWrite, true)
			want(tb, "intents", p.Intents, []string{"delete"}, nil)
			want(tb, "entities", p.Entities, []string{"schedule"}, nil)
		}},
		{"explicit write imperative en", "book the flight", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "explicit write", p.ExplicitWrite, true)
			want(tb, "intents", p.Intents, []string{"book"}, nil)
			want(tb, "entities", p.Entities, []string{"flight"}, nil)
		}},
		{"a question is not an explicit write", "how do I delete a schedule", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "explicit write", p.ExplicitWrite, false)
			want(tb, "intents", p.Intents, []string{"delete"}, nil)
		}},
		{"reading is not a write", "帮我看看日程", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "explicit write", p.ExplicitWrite, false)
		}},
		{"running a tool is not a write", "run codex_diagnose please", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "explicit write", p.ExplicitWrite, false)
			want(tb, "ids", p.IDs, []string{"maintenance.codex.diagnose"}, nil)
		}},
		{"past event is not an intent", "codex 更新后还是旧版本", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, nil, []string{"update"})
			want(tb, "symptoms", p.Symptoms, []string{"active_version_mismatch"}, nil)
			want(tb, "entities", p.Entities, []string{"codex"}, nil)
		}},
		{"past tense is not an intent", "I updated codex but it still shows the old version", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, nil, []string{"update"})
		}},
		{"symptom as words", "codex active version mismatch", func(tb testing.TB, p *Parsed) {
			want(tb, "symptoms", p.Symptoms, []string{"active_version_mismatch"}, nil)
			if len(p.Intents) != 0 {
				tb.Errorf("intents %v from a symptom phrase", p.Intents)
			}
		}},
		{"explicit id", "maintenance.codex.diagnose", func(tb testing.TB, p *Parsed) {
			want(tb, "ids", p.IDs, []string{"maintenance.codex.diagnose"}, nil)
		}},
		{"id in capitals", "Run Maintenance.Codex.Diagnose now", func(tb testing.TB, p *Parsed) {
			want(tb, "ids", p.IDs, []string{"maintenance.codex.diagnose"}, nil)
		}},
		{"id in full-width letters", "运行 ｍａｉｎｔｅｎａｎｃｅ．ｃｏｄｅｘ．ｄｉａｇｎｏｓｅ", func(tb testing.TB, p *Parsed) {
			want(tb, "ids", p.IDs, []string{"maintenance.codex.diagnose"}, nil)
		}},
		{"pinned id", "describe maintenance.codex.diagnose@3", func(tb testing.TB, p *Parsed) {
			want(tb, "ids", p.IDs, []string{"maintenance.codex.diagnose@3"}, nil)
		}},
		{"tool name forms", "call maintenance__codex_update or schedule_create", func(tb testing.TB, p *Parsed) {
			want(tb, "ids", p.IDs, []string{"maintenance.codex.update", "productivity.calendar.schedule_create"}, nil)
		}},
		{"external id", "use Flights::book-flight", func(tb testing.TB, p *Parsed) {
			want(tb, "ids", p.IDs, []string{"travel.flight.book"}, nil)
		}},
		{"unknown dotted words are not ids", "see e.g. v1.2 or file.txt", func(tb testing.TB, p *Parsed) {
			if len(p.IDs) != 0 {
				tb.Errorf("ids %v", p.IDs)
			}
		}},
		{"within an id", "within maintenance.codex find the update", func(tb testing.TB, p *Parsed) {
			wantStr(tb, "scope", p.Scope, "maintenance.codex")
			if len(p.IDs) != 0 {
				tb.Errorf("scope id kept as explicit id: %v", p.IDs)
			}
		}},
		{"在 X 里", "在 codex 维护里找诊断工具", func(tb testing.TB, p *Parsed) {
			wantStr(tb, "scope", p.Scope, "maintenance.codex")
			want(tb, "intents", p.Intents, []string{"diagnose"}, nil)
		}},
		{"现在 is not a scope", "现在帮我列出日程", func(tb testing.TB, p *Parsed) {
			wantStr(tb, "scope", p.Scope, "")
		}},
		{"outcome", "update codex so that it uses the new version", func(tb testing.TB, p *Parsed) {
			wantStr(tb, "outcome", p.Outcome, "it uses the new version")
			want(tb, "intents", p.Intents, []string{"update"}, []string{"create"})
			wantBool(tb, "explicit write", p.ExplicitWrite, true)
		}},
		{"entity via its concept", "删除明天的日历事项", func(tb testing.TB, p *Parsed) {
			want(tb, "entities", p.Entities, []string{"schedule"}, nil)
		}},
		{"mixed language", "codex path 冲突", func(tb testing.TB, p *Parsed) {
			wantStr(tb, "lang", p.Lang, "mixed")
			want(tb, "entities", p.Entities, []string{"codex", "path"}, nil)
		}},
		{"full-width and case", "ＣＯＤＥＸ　不要重装", func(tb testing.TB, p *Parsed) {
			want(tb, "entities", p.Entities, []string{"codex"}, nil)
			want(tb, "forbidden", p.Forbidden, []string{"reinstall"}, nil)
		}},
		{"which things there are asks for a list", "服务器上有哪些镜像", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"list"}, nil)
		}},
		{"what X do I have asks for a list", "which invoices do we have this month", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"list"}, nil)
		}},
		{"do I have to is no list", "do I have to restart docker", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"restart"}, []string{"list"})
		}},
		{"a verb of its own wins over the list question", "有哪些镜像可以删掉", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"delete"}, []string{"list"})
		}},
		{"a light verb and a measure word set the object up", "下午开个会", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"create"}, nil)
			want(tb, "concepts", p.Concepts, []string{"meeting"}, nil)
		}},
		{"the object of a set-up verb is not a verb", "设个提醒", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"create"}, []string{"remind"})
		}},
		{"a blocker names no concept", "没问题就退款", func(tb testing.TB, p *Parsed) {
			want(tb, "concepts", p.Concepts, []string{"refund"}, []string{"issue"})
			want(tb, "entities", p.Entities, nil, []string{"issue"})
		}},
		{"发 with a measure word sends", "发一条消息给他", func(tb testing.TB, p *Parsed) {
			want(tb, "concepts", p.Concepts, []string{"send", "message"}, nil)
		}},
		{"PR names a pull request", "merge PR 42", func(tb testing.TB, p *Parsed) {
			want(tb, "concepts", p.Concepts, []string{"pull_request"}, nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := normalize(t, lex, tt.query)
			if p.Text == "" || p.Normalizer != "rules" || len(p.Terms) == 0 {
				t.Fatalf("bad parse %+v", p)
			}
			tt.check(t, p)
			if t.Failed() {
				t.Logf("parsed: %+v", *p)
			}
		})
	}
}

func want(tb testing.TB, field string, got, must, mustNot []string) {
	tb.Helper()
	if !hasAll(got, must) || !hasNone(got, mustNot) {
		tb.Errorf("%s = %v, want %v and none of %v", field, got, must, mustNot)
	}
}

func wantBool(tb testing.TB, field string, got, w bool) {
	tb.Helper()
	if got != w {
		tb.Errorf("%s = %v, want %v", field, got, w)
	}
}

func wantStr(tb testing.TB, field, got, w string) {
	tb.Helper()
	if got != w {
		tb.Errorf("%s = %q, want %q", field, got, w)
	}
}

func TestRulesBadInput(t *testing.T) {
	lex := NewLexicon(fixtureSnapshot(t))
	for _, q := range []string{"", "   ", "\t\n\r", "\x00\x01\x7f", "\u200b\u2028\ufeff"} {
		t.Run("empty "+strings.ToValidUTF8(q, "?"), func(t *testing.T) {
			if _, err := (Rules{}).Normalize(context.Background(), q, lex); !errors.Is(err, ErrEmptyQuery) {
				t.Fatalf("err = %v, want ErrEmptyQuery", err)
			}
		})
	}
	t.Run("truncated", func(t *testing.T) {
		long := strings.Repeat("更新 codex ", 1000) // > 4 KiB, multi-byte
		p := normalize(t, lex, long)
		if len(p.Raw) > MaxQueryBytes || !utf8.ValidString(p.Raw) {
			t.Fatalf("raw %d bytes, valid %v", len(p.Raw), utf8.ValidString(p.Raw))
		}
		if len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "truncated") {
			t.Fatalf("notes %v", p.Notes)
		}
	})
	t.Run("invalid utf-8 and controls", func(t *testing.T) {
		p := normalize(t, lex, "co\xffdex\x00 不要\x1b[31m重装\u202e")
		if !utf8.ValidString(p.Raw) || !utf8.ValidString(p.Text) {
			t.Fatalf("invalid utf-8 kept: %q / %q", p.Raw, p.Text)
		}
		for _, r := range p.Text {
			if r < 0x20 || r == 0x7f || r == 0x202e {
				t.Fatalf("control %U kept in %q", r, p.Text)
			}
		}
		want(t, "forbidden", p.Forbidden, []string{"reinstall"}, nil)
	})
	t.Run("nil lexicon", func(t *testing.T) {
		p := normalize(t, nil, "先检查原因，不要直接更新 maintenance.codex.diagnose")
		want(t, "forbidden", p.Forbidden, []string{"update"}, nil)
		want(t, "ids", p.IDs, []string{"maintenance.codex.diagnose"}, nil)
	})
}

func TestLexicon(t *testing.T) {
	snap := fixtureSnapshot(t)
	lex := NewLexicon(snap)
	if lex.Generation() != 7 {
		t.Fatalf("generation %d", lex.Generation())
	}
	tests := []struct {
		name, surface string
		ids           []string
	}{
		{"id", "maintenance.codex.diagnose", []string{"maintenance.codex.diagnose"}},
		{"tool name", "maintenance__codex_diagnose", []string{"maintenance.codex.diagnose"}},
		{"underscored id", "maintenance_codex_diagnose", []string{"maintenance.codex.diagnose"}},
		{"last two segments", "codex_diagnose", []string{"maintenance.codex.diagnose"}},
		{"compound leaf", "schedule_list", []string{"productivity.calendar.schedule_list"}},
		{"external", "flights::book-flight", []string{"travel.flight.book"}},
		{"external tail", "book-flight", []string{"travel.flight.book"}},
		{"plain word never", "diagnose", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lex.ids[tt.surface]; !slices.Equal(got, tt.ids) {
				t.Fatalf("ids[%q] = %v, want %v", tt.surface, got, tt.ids)
			}
		})
	}
	t.Run("intent values by concept", func(t *testing.T) {
		if got := lex.intentVals["update"]; !hasAll(got, []string{"update", "upgrade"}) {
			t.Fatalf("intentVals[update] = %v", got)
		}
		if got := lex.intentVals["diagnose"]; !hasAll(got, []string{"diagnose", "inspect"}) {
			t.Fatalf("intentVals[diagnose] = %v", got)
		}
	})
	t.Run("alias symptoms", func(t *testing.T) {
		got := aliasSymptoms("版本不一致", []string{"active_version_mismatch", "multiple_executables"}, newSymptomInfo)
		if !slices.Equal(got, []string{"active_version_mismatch"}) {
			t.Fatalf("got %v", got)
		}
		if got := aliasSymptoms("codex path 冲突", []string{"active_version_mismatch"}, newSymptomInfo); got != nil {
			t.Fatalf("unrelated alias named %v", got)
		}
	})
	t.Run("read intents", func(t *testing.T) {
		for _, r := range []string{"diagnose", "list", "get_weather", "inspect"} {
			if !lex.IsRead(r) {
				t.Errorf("%s not read", r)
			}
		}
		for _, w := range []string{"delete", "update", "book", "pay"} {
			if lex.IsRead(w) {
				t.Errorf("%s read", w)
			}
		}
	})
}

func TestSignalTerms(t *testing.T) {
	p := &Parsed{Terms: []string{"codex", "更新", "codex"}, Concepts: []string{"update"}}
	got := p.SignalTerms()
	if !slices.Equal(got, []string{"codex", "~update", "更新"}) {
		t.Fatalf("got %v", got)
	}
	ft := FieldTerms("删除日程")
	if !slices.Contains(ft, "删除") || !slices.Contains(ft, "~delete") || !slices.Contains(ft, "~schedule") {
		t.Fatalf("field terms %v", ft)
	}
}

// TestSetUpObjectNamesMemberEntity: the object of a set-up verb (设个提醒) or of a
// which-question (有哪些出差行程) is a thing; naming no entity itself, it names the registry
// entities that are members of its concept (reminder of remind, trip of travel); the same
// word as a verb (提醒我…) names none.
func TestSetUpObjectNamesMemberEntity(t *testing.T) {
	checkEntities(t, []*registry.Capability{
		{ID: "app.schedule", ResourceType: registry.TypePack, Title: "Schedules"},
		{ID: "app.schedule.create", ResourceType: registry.TypeAction, Title: "Create a schedule",
			Intents: []string{"create"}, Entities: []string{"schedule", "reminder"}, SideEffect: registry.SideEffectWriteShared},
		{ID: "app.trips.list", ResourceType: registry.TypeAction, Title: "List trips",
			Intents: []string{"list"}, Entities: []string{"trip"}},
	}, []entityCase{
		{"设个提醒，下午五点交周报", []string{"reminder"}, nil},
		{"帮我设一个提醒，周五交房租", []string{"reminder"}, nil},
		{"下午五点提醒我交周报", nil, []string{"reminder"}},
		{"明天有什么提醒", []string{"reminder"}, nil},
		{"我下周有哪些出差行程", []string{"trip"}, nil},
		{"有哪些日程", []string{"schedule"}, []string{"trip"}}, // 日程 names its entity itself
	})
}

// TestFieldLabelNamesNoEntity: after a colon, a word followed by a number labels a value the
// user supplies ("code 044031900111"), not what the request is about; without the colon
// ("PR 17") the word still names its entity.
func TestFieldLabelNamesNoEntity(t *testing.T) {
	checkEntities(t, []*registry.Capability{
		{ID: "dev.code.search", ResourceType: registry.TypeAction, Title: "Search code", Intents: []string{"search"}, Entities: []string{"code"}},
		{ID: "fin.invoice.verify", ResourceType: registry.TypeAction, Title: "Verify an invoice", Intents: []string{"verify"}, Entities: []string{"invoice"}},
	}, []entityCase{
		{"verify this invoice: code 044031900111, number 12345678", []string{"invoice"}, []string{"code"}},
		{"search the code 404 handler", []string{"code"}, nil},
		{"verify the invoice code 044031900111", []string{"invoice", "code"}, nil},
		// a colon elsewhere does not make a label (the review of q18 found these)
		{"Note: this is urgent. Verify invoice 2024 please", []string{"invoice"}, nil},
		{"urgent: verify invoice 2024", []string{"invoice"}, nil},
		// a later field of the list after the colon is a label too
		{"verify this: number 12345678, code 044031900111", nil, []string{"code"}},
	})
}

// entityCase is a request with the entities its parse must and must not name.
type entityCase struct {
	query    string
	entities []string
	not      []string
}

// checkEntities parses each case's request against the lexicon of caps and checks the
// entities it names.
func checkEntities(t *testing.T, caps []*registry.Capability, cases []entityCase) {
	t.Helper()
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	lex := NewLexicon(snap)
	for _, tt := range cases {
		p, err := Rules{}.Normalize(context.Background(), tt.query, lex)
		if err != nil {
			t.Fatal(err)
		}
		want(t, tt.query+": entities", p.Entities, tt.entities, tt.not)
	}
}
