package rank

import (
	"strings"
	"testing"

	"github.com/capdex/capdex/registry"
)

// fixture capabilities modelled on docs/ARCHITECTURE.md "Definitions".
func codexCaps(tb testing.TB) map[string]*registry.Capability {
	tb.Helper()
	caps := []*registry.Capability{
		{ID: "maintenance", ResourceType: registry.TypePack, Title: "Maintenance"},
		{ID: "maintenance.codex", ResourceType: registry.TypePack, Title: "Codex 维护", Entities: []string{"codex"}},
		{
			ID: "maintenance.codex.diagnose", ResourceType: registry.TypeAction, Title: "诊断 Codex 安装与路径冲突",
			Intents: []string{"diagnose", "inspect", "verify"}, Entities: []string{"codex", "npm", "path", "bash", "fish"},
			Symptoms:     []string{"active_version_mismatch", "multiple_executables", "npm_prefix_mismatch"},
			WhenToUse:    []string{"更新后实际运行版本仍然较旧", "type -a codex 显示多个路径"},
			WhenNotToUse: []string{"用户已经明确要求回滚", "Codex 并非通过 npm 安装"},
			SideEffect:   registry.SideEffectRead, RiskLevel: registry.RiskLow,
		},
		{
			ID: "maintenance.codex.path_repair", ResourceType: registry.TypeAction, Title: "修复 Codex PATH 优先级",
			Intents: []string{"repair", "configure"}, Entities: []string{"codex", "path", "bash", "fish"},
			Symptoms:   []string{"multiple_executables", "active_version_mismatch"},
			WhenToUse:  []string{"诊断显示 PATH 中旧版本优先"},
			SideEffect: registry.SideEffectWriteLocal, RiskLevel: registry.RiskMedium,
		},
		{
			ID: "maintenance.codex.update", ResourceType: registry.TypeAction, Title: "更新 Codex",
			Intents: []string{"update", "upgrade"}, Entities: []string{"codex", "npm"},
			WhenToUse:    []string{"需要安装 Codex 的新版本"},
			WhenNotToUse: []string{"先检查原因 再更新"},
			SideEffect:   registry.SideEffectWriteLocal, RiskLevel: registry.RiskMedium, RequiresConfirmation: true,
		},
		{
			ID: "maintenance.codex.reinstall", ResourceType: registry.TypeAction, Title: "重装 Codex",
			Intents: []string{"reinstall", "install"}, Entities: []string{"codex", "npm"},
			SideEffect: registry.SideEffectWriteLocal, RiskLevel: registry.RiskHigh,
		},
		{ID: "devops", ResourceType: registry.TypePack, Title: "DevOps"},
		{ID: "devops.docker", ResourceType: registry.TypePack, Title: "Docker", Entities: []string{"docker"}},
		{ID: "devops.docker.ps", ResourceType: registry.TypeAction, Title: "List containers", Intents: []string{"list"}, Entities: []string{"docker"}, SideEffect: registry.SideEffectRead, RiskLevel: registry.RiskLow},
		{ID: "devops.docker.prune", ResourceType: registry.TypeAction, Title: "Prune images", Intents: []string{"delete", "clean"}, Entities: []string{"docker"}, SideEffect: registry.SideEffectImpact, RiskLevel: registry.RiskHigh},
		{ID: "devops.npm", ResourceType: registry.TypePack, Title: "npm"},
		{ID: "devops.npm.update", ResourceType: registry.TypeAction, Title: "Update npm packages", Intents: []string{"update"}, Entities: []string{"npm"}, SideEffect: registry.SideEffectWriteLocal, RiskLevel: registry.RiskMedium},
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		tb.Fatal(err)
	}
	m := make(map[string]*registry.Capability, len(caps))
	for _, c := range snap.Caps {
		m[c.ID] = c
	}
	return m
}

// ev is a compact evidence list: "lexical:1 semantic:3".
func ev(tb testing.TB, spec string) []Source {
	tb.Helper()
	var out []Source
	for _, f := range strings.Fields(spec) {
		name, r, ok := strings.Cut(f, ":")
		if !ok {
			tb.Fatalf("bad evidence %q", f)
		}
		n := 0
		for _, ch := range r {
			n = n*10 + int(ch-'0')
		}
		out = append(out, Source{Retriever: name, Rank: n})
	}
	return out
}

func cand(tb testing.TB, caps map[string]*registry.Capability, id, evidence string) Candidate {
	tb.Helper()
	c, ok := caps[id]
	if !ok {
		tb.Fatalf("no fixture %s", id)
	}
	return Candidate{Cap: c, Evidence: ev(tb, evidence), Availability: registry.Available}
}

func ids(cands []Candidate) []string {
	out := make([]string, len(cands))
	for i := range cands {
		out[i] = cands[i].Cap.ID
	}
	return out
}

func component(c *Candidate, name string) float64 {
	v := 0.0
	for _, b := range c.Breakdown {
		if b.Name == name {
			v += b.Value
		}
	}
	return v
}

// simpleAnalyze lowercases, splits on spaces and adds CJK bigrams: enough for the tests.
func simpleAnalyze(s string) []string {
	var out []string
	for _, w := range strings.Fields(strings.ToLower(s)) {
		r := []rune(w)
		if len(r) > 0 && r[0] > 0x2e80 {
			for i := 0; i+1 < len(r); i++ {
				out = append(out, string(r[i:i+2]))
			}
			continue
		}
		out = append(out, w)
	}
	return out
}
