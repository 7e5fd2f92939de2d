package query

import (
	"testing"

	"github.com/capdex/capdex/registry"
)

func builtinLexicon(tb testing.TB) *Lexicon {
	tb.Helper()
	caps, err := registry.Builtin()
	if err != nil {
		tb.Fatalf("Builtin: %v", err)
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		tb.Fatal(err)
	}
	return NewLexicon(snap)
}

// TestBuiltin normalises the design's example queries against the built-in registry.
func TestBuiltin(t *testing.T) {
	lex := builtinLexicon(t)
	tests := []struct {
		name  string
		query string
		check func(tb testing.TB, p *Parsed)
	}{
		{"read first", "codex 更新后还是旧版本，先检查原因，不要直接更新", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"diagnose"}, []string{"update", "install"})
			want(tb, "forbidden", p.Forbidden, []string{"update"}, nil)
			want(tb, "symptoms", p.Symptoms, []string{"active_version_mismatch"}, nil)
			want(tb, "entities", p.Entities, []string{"codex"}, nil)
			want(tb, "constraints", p.Constraints, []string{"read_first"}, nil)
		}},
		{"browse codex", "Codex 维护相关能力有哪些？", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "maintenance.codex")
		}},
		{"browse docker", "what can you do with docker", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "maintenance.docker")
		}},
		{"browse schedules", "list the tools for schedules", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "myapp.schedule")
		}},
		{"explicit delete", "帮我删除这个日程", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "explicit write", p.ExplicitWrite, true)
			want(tb, "intents", p.Intents, []string{"delete"}, nil)
			want(tb, "entities", p.Entities, []string{"schedule"}, nil)
		}},
		{"one word, one entity", "看看 docker 为什么连不上", func(tb testing.TB, p *Parsed) {
			want(tb, "entities", p.Entities, []string{"docker"}, []string{"container"})
		}},
		{"a concept member names its entity", "容器一直在重启", func(tb testing.TB, p *Parsed) {
			want(tb, "entities", p.Entities, []string{"container"}, nil)
		}},
		{"explicit id", "maintenance.codex.diagnose", func(tb testing.TB, p *Parsed) {
			want(tb, "ids", p.IDs, []string{"maintenance.codex.diagnose"}, nil)
		}},
		{"reinstall forbidden", "不要直接重装 codex", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"reinstall", "update", "install"}, nil)
		}},
		{"browse names the root pack, not a child titled with its word", "list the reimbursement capabilities", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "reimbursement")
		}},
		{"browse with words between the cue and the noun", "show me all the npm maintenance tools", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "browse", p.Browse, true)
			wantStr(tb, "scope", p.Scope, "maintenance.npm")
		}},
		{"a suspected problem asks for a diagnosis", "codex 的 path 好像冲突了", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"diagnose"}, []string{"repair"})
			wantBool(tb, "explicit write", p.ExplicitWrite, false)
		}},
		{"a failure asks for a diagnosis", "权限不够，全局包装不上", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"diagnose"}, []string{"install"})
		}},
		{"how-to asks for a guide", "how do I fix npm EACCES errors without using sudo? walk me through it", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "how to", p.HowTo, true)
			want(tb, "intents", p.Intents, []string{"explain"}, nil)
		}},
		{"steps ask for a guide", "codex 路径冲突到底怎么回事？给我排查步骤，我自己动手", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "how to", p.HowTo, true)
		}},
		{"a task is not a how-to", "帮我把 codex 升级到最新版", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "how to", p.HowTo, false)
		}},
		{"待 makes a verb a state", "capdex 仓库现在有哪些待合并的 PR", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, nil, []string{"merge"})
		}},
		{"a yes/no question asks about, not for", "退款 re_1AbCdEf89 到账了吗", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, nil, []string{"refund"})
			want(tb, "entities", p.Entities, []string{"refund"}, nil)
			wantBool(tb, "explicit write", p.ExplicitWrite, false)
		}},
		{"a request with 吗 still asks for it", "能帮我退款吗", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"refund"}, nil)
		}},
		{"nouns are not intents", "email the customer the refund confirmation", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, nil, []string{"refund", "confirm"})
			want(tb, "entities", p.Entities, []string{"email", "customer", "refund"}, nil)
		}},
		{"a verb's own word is not an object", "review this PR: capdex/capdex#17", func(tb testing.TB, p *Parsed) {
			want(tb, "intents", p.Intents, []string{"review"}, nil)
			want(tb, "entities", p.Entities, nil, []string{"review"})
		}},
		{"vague: a verb and a pronoun", "I want to cancel it", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "vague", p.Vague, true)
		}},
		{"vague: a verb and something next week", "book something for next week", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "vague", p.Vague, true)
		}},
		{"vague: 查一下状态", "查一下状态", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "vague", p.Vague, true)
		}},
		{"not vague: an object named", "delete my 3pm meeting tomorrow", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "vague", p.Vague, false)
		}},
		{"not vague: an object the registry does not know", "merge PR #42 in capdex/capdex with squash", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "vague", p.Vague, false)
		}},
		{"not vague: no verb", "给供应商打款 5 万元", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "vague", p.Vague, false)
		}},
		{"vague", "帮我处理一下开发环境", func(tb testing.TB, p *Parsed) {
			wantBool(tb, "explicit write", p.ExplicitWrite, false)
			if len(p.Forbidden) != 0 || len(p.IDs) != 0 || p.Browse {
				tb.Errorf("%+v", *p)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := normalize(t, lex, tt.query)
			tt.check(t, p)
			if t.Failed() {
				t.Logf("parsed: %+v", *p)
			}
		})
	}
}
