package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// TestSeedRequests checks the outcomes seed 000 describes for its own requests (§9, §16,
// §19, §22) and the browse and vague-goal rules of issue 18.
func TestSeedRequests(t *testing.T) {
	e := open(t, engine.Options{})
	search := func(t *testing.T, q, within string, limit int) *registry.SearchResponse {
		t.Helper()
		resp, err := e.Search(context.Background(), registry.SearchRequest{Query: q, Within: within, Limit: limit}, dev)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	ids := func(r *registry.SearchResponse) []string {
		var out []string
		for _, m := range r.Matches {
			out = append(out, m.ResourceID)
		}
		return out
	}
	t.Run("§9 read first, do not reinstall", func(t *testing.T) {
		r := search(t, "刚更新了 Codex，但 codex --version 还是旧版本，先检查原因，不要直接重装。", "", 5)
		if got := ids(r); len(got) == 0 || got[0] != "maintenance.codex.diagnose" {
			t.Fatalf("top %v, want maintenance.codex.diagnose first", got)
		}
		if slices.Contains(ids(r)[:3], "maintenance.codex.update") {
			t.Errorf("update among the first three: %v", ids(r))
		}
	})
	t.Run("§16 diagnose > path_repair > update", func(t *testing.T) {
		got := ids(search(t, "先检查原因，不要直接更新", "maintenance.codex", 10))
		d, p, u := slices.Index(got, "maintenance.codex.diagnose"), slices.Index(got, "maintenance.codex.path_repair"), slices.Index(got, "maintenance.codex.update")
		if d != 0 || p < 0 || u >= 0 && u < p {
			t.Fatalf("order %v", got)
		}
	})
	t.Run("§19 an ambiguous pack-level answer", func(t *testing.T) {
		r := search(t, "帮我处理一下开发环境", "", 5)
		if r.Resolution != registry.Ambiguous || r.Decision != registry.DecisionClarify {
			t.Fatalf("resolution %s decision %s", r.Resolution, r.Decision)
		}
		for _, m := range r.Matches {
			if m.ResourceType != registry.TypePack || registry.Parent(m.ResourceID) != "maintenance" {
				t.Fatalf("matches %v, want the sub-packs of maintenance", ids(r))
			}
		}
		if len(r.Matches) < 3 || len(r.MissingInformation) == 0 || !strings.Contains(r.MissingInformation[0], "codex") {
			t.Fatalf("matches %v, missing %q", ids(r), r.MissingInformation)
		}
	})
	t.Run("§22 codex still old after update", func(t *testing.T) {
		got := ids(search(t, "Codex 更新后仍启动旧版本，检查 npm prefix 和 PATH 冲突", "maintenance.codex", 10))
		if got[0] != "maintenance.codex.diagnose" || slices.Index(got, "maintenance.codex.path_repair") < 0 {
			t.Fatalf("order %v", got)
		}
	})
	t.Run("browse lists the pack's children only", func(t *testing.T) {
		r := search(t, "Codex 维护相关能力有哪些？", "", 10)
		if len(r.Matches) < 5 {
			t.Fatalf("only %v", ids(r))
		}
		for _, id := range ids(r) {
			if id != "maintenance.codex" && registry.Parent(id) != "maintenance.codex" {
				t.Fatalf("%s outside the browsed pack: %v", id, ids(r))
			}
		}
	})
	t.Run("browse keeps the gates", func(t *testing.T) {
		if got := ids(search(t, "what can you do with docker?", "", 10)); slices.Contains(got, "maintenance.docker.prune") {
			t.Fatalf("the ops-only prune shown to dev: %v", got)
		}
	})
	t.Run("a vague complaint is not confident and reads first", func(t *testing.T) {
		r := search(t, "codex 有点问题", "", 5)
		if r.Resolution == registry.Confident {
			t.Fatalf("confident on a vague complaint: %v", ids(r))
		}
		if m := r.Matches[0]; m.SideEffect != registry.SideEffectRead {
			t.Fatalf("top %s has side effect %s, want read only", m.ResourceID, m.SideEffect)
		}
	})
}
