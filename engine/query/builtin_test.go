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
		{"explicit id", "maintenance.codex.diagnose", func(tb testing.TB, p *Parsed) {
			want(tb, "ids", p.IDs, []string{"maintenance.codex.diagnose"}, nil)
		}},
		{"reinstall forbidden", "不要直接重装 codex", func(tb testing.TB, p *Parsed) {
			want(tb, "forbidden", p.Forbidden, []string{"reinstall", "update", "install"}, nil)
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
