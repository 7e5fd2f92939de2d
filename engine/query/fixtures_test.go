package query

import (
	"testing"

	"github.com/capdex/capdex/registry"
)

// fixtureSnapshot is a small registry in the shape of docs/ARCHITECTURE.md "Definitions".
func fixtureSnapshot(tb testing.TB) *registry.Snapshot {
	tb.Helper()
	caps := []*registry.Capability{
		{ID: "maintenance", ResourceType: registry.TypePack, Title: "Maintenance 运维"},
		{ID: "maintenance.codex", ResourceType: registry.TypePack, Title: "Codex 维护", Entities: []string{"codex"}},
		{
			ID: "maintenance.codex.diagnose", ResourceType: registry.TypeAction, Title: "诊断 Codex 安装与路径冲突",
			Aliases:    []string{"codex 更新后还是旧版本", "codex path 冲突", "codex still runs old version after update", "版本不一致"},
			Intents:    []string{"diagnose", "inspect", "verify"},
			Entities:   []string{"codex", "npm", "path", "bash", "fish"},
			Symptoms:   []string{"active_version_mismatch", "multiple_executables", "npm_prefix_mismatch"},
			SideEffect: registry.SideEffectRead, RiskLevel: registry.RiskLow,
		},
		{ID: "maintenance.codex.path_repair", ResourceType: registry.TypeAction, Title: "修复 Codex PATH 优先级", Intents: []string{"repair", "configure"}, Entities: []string{"codex", "path"}, SideEffect: registry.SideEffectWriteLocal},
		{ID: "maintenance.codex.update", ResourceType: registry.TypeAction, Title: "更新 Codex", Intents: []string{"update", "upgrade"}, Entities: []string{"codex", "npm"}, SideEffect: registry.SideEffectWriteLocal},
		{ID: "maintenance.codex.reinstall", ResourceType: registry.TypeAction, Title: "重装 Codex", Intents: []string{"reinstall", "install"}, Entities: []string{"codex", "npm"}, SideEffect: registry.SideEffectWriteLocal},
		{ID: "devops", ResourceType: registry.TypePack, Title: "DevOps"},
		{ID: "devops.docker", ResourceType: registry.TypePack, Title: "Docker 容器", Entities: []string{"docker"}},
		{ID: "devops.docker.ps", ResourceType: registry.TypeAction, Title: "List containers", Intents: []string{"list"}, Entities: []string{"docker", "container"}},
		{ID: "devops.docker.restart", ResourceType: registry.TypeAction, Title: "Restart a container", Intents: []string{"restart"}, Entities: []string{"docker", "container"}},
		{ID: "productivity", ResourceType: registry.TypePack, Title: "Productivity 办公"},
		{ID: "productivity.calendar", ResourceType: registry.TypePack, Title: "Calendar 日程", Entities: []string{"schedule"}},
		{ID: "productivity.calendar.schedule_create", ResourceType: registry.TypeAction, Title: "Create a schedule", Intents: []string{"create"}, Entities: []string{"schedule"}, SideEffect: registry.SideEffectWriteShared},
		{ID: "productivity.calendar.schedule_delete", ResourceType: registry.TypeAction, Title: "Delete a schedule", Intents: []string{"delete"}, Entities: []string{"schedule"}, SideEffect: registry.SideEffectImpact},
		{ID: "productivity.calendar.schedule_list", ResourceType: registry.TypeAction, Title: "List schedules", Intents: []string{"list"}, Entities: []string{"schedule"}},
		{ID: "travel", ResourceType: registry.TypePack, Title: "Travel 出行"},
		{ID: "travel.flight", ResourceType: registry.TypePack, Title: "Flights 机票", Entities: []string{"flight"}},
		{ID: "travel.flight.book", ResourceType: registry.TypeAction, Title: "Book a flight", Intents: []string{"book"}, Entities: []string{"flight"}, SideEffect: registry.SideEffectImpact, ExternalID: "Flights::book-flight"},
		{ID: "travel.flight.search", ResourceType: registry.TypeAction, Title: "Search flights", Intents: []string{"search"}, Entities: []string{"flight"}},
	}
	snap, err := registry.NewSnapshot(7, caps)
	if err != nil {
		tb.Fatal(err)
	}
	return snap
}
