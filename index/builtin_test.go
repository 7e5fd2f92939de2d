package index

import (
	"slices"
	"testing"

	"github.com/capdex/capdex/registry"
)

func buildBuiltin(tb testing.TB, opts Options) *Generation {
	tb.Helper()
	caps, err := registry.Builtin()
	if err != nil {
		tb.Fatal(err)
	}
	return buildCaps(tb, 1, caps, opts)
}

func TestExactNeverMissesBuiltin(t *testing.T) {
	checkExactNeverMisses(t, buildBuiltin(t, Options{}))
}

// TestBuiltinRetrievers checks each retriever's ranking on the built-in registry. Chinese
// queries must find English-titled capabilities and the other way round.
func TestBuiltinRetrievers(t *testing.T) {
	g := buildBuiltin(t, Options{})
	tests := []struct {
		name string
		kind Kind
		q    Query
		want string // must be within the first top hits
		top  int
	}{
		{name: "exact id", kind: Exact, q: Query{Text: "maintenance.codex.diagnose"}, want: "maintenance.codex.diagnose", top: 1},
		{name: "exact tool name", kind: Exact, q: Query{Text: "run maintenance__codex_diagnose"}, want: "maintenance.codex.diagnose", top: 1},
		{name: "exact leaf pair", kind: Exact, q: Query{Text: "schedule_create"}, want: "myapp.schedule.create", top: 1},
		{name: "exact chinese alias", kind: Exact, q: Query{Text: "codex 更新后还是旧版本"}, want: "maintenance.codex.diagnose", top: 1},
		{name: "lexical english", kind: Lexical, q: Query{Text: "codex path conflict"}, want: "maintenance.codex.path_repair", top: 2},
		{name: "lexical english diagnose", kind: Lexical, q: Query{Text: "codex path conflict"}, want: "maintenance.codex.diagnose", top: 5},
		{name: "lexical old version", kind: Lexical, q: Query{Text: "codex still runs old version"}, want: "maintenance.codex.diagnose", top: 1},
		{name: "lexical chinese finds english title", kind: Lexical, q: Query{Text: "删除日程"}, want: "myapp.schedule.delete", top: 1},
		{name: "lexical concept expansion only", kind: Lexical, q: Query{Text: "移除日历事件"}, want: "myapp.schedule.delete", top: 1},
		{name: "lexical chinese finds chinese title", kind: Lexical, q: Query{Text: "查询退款状态"}, want: "payments.get_refund_status", top: 1},
		{name: "lexical english finds chinese title", kind: Lexical, q: Query{Text: "refund status"}, want: "payments.get_refund_status", top: 1},
		{name: "lexical check first", kind: Lexical, q: Query{Text: "先检查原因，不要直接更新"}, want: "maintenance.codex.diagnose", top: 1},
		{name: "semantic chinese", kind: Semantic, q: Query{Text: "删除日程"}, want: "myapp.schedule.delete", top: 2},
		{name: "semantic cross language", kind: Semantic, q: Query{Text: "移除日历事件"}, want: "myapp.schedule.delete", top: 2},
		{name: "semantic english", kind: Semantic, q: Query{Text: "npm permission denied"}, want: "maintenance.npm.prefix_check", top: 3},
		{name: "metadata intents and entities", kind: Metadata, q: Query{Intents: []string{"diagnose"}, Entities: []string{"codex"}}, want: "maintenance.codex.diagnose", top: 1},
		{name: "hierarchy within", kind: Hierarchy, q: Query{Within: "maintenance.codex"}, want: "maintenance.codex", top: 1},
		{name: "hierarchy browse", kind: Hierarchy, q: Query{Browse: true, Text: "what travel tools are there"}, want: "travel", top: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(g, retrieve(t, g, tt.kind, &tt.q, 10))
			if i := slices.Index(got, tt.want); i < 0 || i >= tt.top {
				t.Fatalf("%v %q: %s not in the first %d of %v", tt.kind, tt.q.Text, tt.want, tt.top, got)
			}
		})
	}
}
