package index

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/capdex/capdex/index/embed"
	"github.com/capdex/capdex/registry"
)

// fixtureCaps is a small hand-written registry in the shape of the built-in one, with
// hidden entries of every kind: a tenant-only pack, a scope-only action, an offline action,
// a disabled pack, a denied tenant and an os-limited action.
func fixtureCaps() []*registry.Capability {
	off := false
	all := registry.ACL{Discover: []string{"*"}, Describe: []string{"*"}, Execute: []string{"dev"}}
	schema := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `},"additionalProperties":false}`)
	}
	return []*registry.Capability{
		{ID: "maintenance", ResourceType: registry.TypePack, Title: "Local maintenance 本机维护", Summary: "Keep local developer tools healthy. 维护本机开发工具。", ACL: all, Status: registry.StatusActive, Domain: "maintenance"},
		{ID: "maintenance.codex", ResourceType: registry.TypePack, Title: "Codex CLI 维护", Summary: "Install, update and repair the Codex CLI.", Aliases: []string{"codex"}, Status: registry.StatusActive, Domain: "maintenance", Guidance: "先诊断再更新。Diagnose before you update."},
		{ID: "maintenance.codex.diagnose", ResourceType: registry.TypeAction, CapabilityType: "tool", Version: 3,
			Title:        "诊断 Codex 安装与路径冲突",
			Summary:      "检查实际启动的 Codex 可执行文件、版本、npm 全局安装目录与 Shell PATH 优先级。",
			Aliases:      []string{"codex 更新后还是旧版本", "codex path 冲突", "codex still runs old version after update"},
			Intents:      []string{"diagnose", "inspect", "verify"},
			Entities:     []string{"codex", "npm", "path", "bash", "fish"},
			Symptoms:     []string{"active_version_mismatch", "multiple_executables", "npm_prefix_mismatch"},
			WhenToUse:    []string{"更新后实际运行版本仍然较旧", "type -a codex 显示多个路径"},
			WhenNotToUse: []string{"用户已经明确要求回滚", "Codex 并非通过 npm 安装"},
			Domain:       "maintenance", Scenarios: []string{"cli_upgrade"}, SupportedOS: []string{"linux", "macos"},
			SideEffect: registry.SideEffectRead, RiskLevel: registry.RiskLow, Status: registry.StatusActive,
			ArgumentsSchema: schema(`"include_shell_resolution":{"type":"boolean","description":"also resolve shell aliases"}`),
			Tags:            []string{"maintenance", "codex", "npm", "cli"}},
		{ID: "maintenance.codex.path_repair", ResourceType: registry.TypeAction, CapabilityType: "tool",
			Title: "Repair Codex PATH conflicts", Summary: "Reorder PATH so the npm-installed codex binary wins over stale copies.",
			Aliases: []string{"fix codex path", "修复 codex 路径"}, Intents: []string{"repair"}, Entities: []string{"codex", "path", "npm"},
			Symptoms:  []string{"multiple_executables", "active_version_mismatch"},
			WhenToUse: []string{"diagnose found a path conflict"}, Domain: "maintenance", SupportedOS: []string{"linux", "macos"},
			SideEffect: registry.SideEffectWriteLocal, RiskLevel: registry.RiskMedium, Status: registry.StatusActive},
		{ID: "maintenance.codex.update", ResourceType: registry.TypeAction, CapabilityType: "tool",
			Title: "Update Codex CLI 更新", Summary: "Upgrade the Codex CLI to the latest npm release.", Intents: []string{"update"},
			Entities: []string{"codex", "npm"}, Domain: "maintenance", SideEffect: registry.SideEffectWriteLocal, RiskLevel: registry.RiskMedium, Status: registry.StatusActive},
		{ID: "maintenance.codex.rollback", ResourceType: registry.TypeAction, Title: "Roll back Codex", Summary: "Install the previous Codex version again.",
			Intents: []string{"rollback"}, Entities: []string{"codex"}, SideEffect: registry.SideEffectWriteLocal, RiskLevel: registry.RiskHigh, Status: registry.StatusActive},
		{ID: "maintenance.codex.path_conflict_guide", ResourceType: registry.TypeRecipe, Title: "Codex PATH conflict guide",
			Summary: "Steps to find and fix several codex binaries on PATH.", Status: registry.StatusActive,
			Steps: []registry.RecipeStep{{Title: "List binaries", Command: "type -a codex"}}},
		{ID: "maintenance.npm", ResourceType: registry.TypePack, Title: "npm maintenance", Summary: "npm cache and prefix tools.", Status: registry.StatusActive},
		{ID: "maintenance.npm.cache_clean", ResourceType: registry.TypeAction, Title: "Clean the npm cache", Summary: "Remove the npm cache directory.",
			Intents: []string{"clean"}, Entities: []string{"npm", "cache"}, SideEffect: registry.SideEffectWriteLocal, Status: registry.StatusActive},
		{ID: "maintenance.windows_only", ResourceType: registry.TypeAction, Title: "Repair Windows registry keys", Summary: "Windows only helper.",
			SupportedOS: []string{"windows"}, SideEffect: registry.SideEffectWriteLocal, Status: registry.StatusActive},
		{ID: "myapp", ResourceType: registry.TypePack, Title: "My app", Summary: "Business actions of my app.", ACL: all, Status: registry.StatusActive},
		{ID: "myapp.schedule", ResourceType: registry.TypePack, Title: "Schedules 日程", Summary: "Calendar schedule management.", Status: registry.StatusActive},
		{ID: "myapp.schedule.create", ResourceType: registry.TypeAction, Title: "Create a schedule entry", Summary: "Add an event to the user's calendar.",
			Intents: []string{"create"}, Entities: []string{"schedule", "calendar"}, SideEffect: registry.SideEffectWriteShared, Status: registry.StatusActive,
			ArgumentsSchema: schema(`"title":{"type":"string"},"start":{"type":"string","description":"start time"}`)},
		{ID: "myapp.schedule.delete", ResourceType: registry.TypeAction, Title: "Delete a schedule entry", Summary: "Remove an event from the user's calendar.",
			Intents: []string{"delete"}, Entities: []string{"schedule", "calendar"}, SideEffect: registry.SideEffectImpact, RequiresConfirmation: true, Status: registry.StatusActive},
		{ID: "myapp.schedule.list", ResourceType: registry.TypeAction, Title: "List schedule entries", Summary: "Show the user's upcoming events.",
			Intents: []string{"list"}, Entities: []string{"schedule"}, SideEffect: registry.SideEffectRead, Status: registry.StatusActive},
		{ID: "myapp.schedule.export_old", ResourceType: registry.TypeAction, Title: "Export schedules (old)", Summary: "Deprecated export.",
			SideEffect: registry.SideEffectRead, Status: registry.StatusDeprecated},
		{ID: "myapp.schedule.sync_legacy", ResourceType: registry.TypeAction, Title: "Legacy schedule sync", Summary: "Offline legacy sync.",
			SideEffect: registry.SideEffectRead, Status: registry.StatusOffline},
		{ID: "payments", ResourceType: registry.TypePack, Title: "Payments", Summary: "Money movement.", Status: registry.StatusActive,
			ACL: registry.ACL{Discover: []string{"finance"}, Describe: []string{"finance"}, Execute: []string{"finance"}}},
		{ID: "payments.create_refund", ResourceType: registry.TypeAction, Title: "Create a refund 退款", Summary: "Refund a customer payment.",
			Aliases: []string{"refund payment"}, Intents: []string{"refund", "create"}, Entities: []string{"payment", "refund"},
			SideEffect: registry.SideEffectImpact, RiskLevel: registry.RiskHigh, RequiresConfirmation: true, Status: registry.StatusActive},
		{ID: "acme", ResourceType: registry.TypePack, Title: "Acme internal", Summary: "Only for the acme tenant.", Tenants: []string{"acme"}, ACL: all, Status: registry.StatusActive},
		{ID: "acme.secret_report", ResourceType: registry.TypeAction, Title: "Acme secret quarterly report", Summary: "Quarterly numbers.",
			SideEffect: registry.SideEffectRead, Status: registry.StatusActive},
		{ID: "legacy", ResourceType: registry.TypePack, Title: "Legacy tools", Summary: "Disabled pack.", Enabled: &off, ACL: all, Status: registry.StatusActive},
		{ID: "legacy.ftp_upload", ResourceType: registry.TypeAction, Title: "Upload by FTP", Summary: "Old uploader.", SideEffect: registry.SideEffectWriteShared, Status: registry.StatusActive},
		{ID: "devtools", ResourceType: registry.TypePack, Title: "Developer tools", Summary: "GitHub helpers.", ACL: registry.ACL{Discover: []string{"*"}, Deny: []string{"tenant:globex"}}, Status: registry.StatusActive},
		{ID: "devtools.github", ResourceType: registry.TypePack, Title: "GitHub", Summary: "Pull requests and CI.", Status: registry.StatusActive},
		{ID: "devtools.github.get_pull_request", ResourceType: registry.TypeAction, Title: "Get a pull request", Summary: "Read a GitHub pull request.",
			Intents: []string{"query"}, Entities: []string{"pull_request", "github"}, SideEffect: registry.SideEffectRead, Status: registry.StatusActive,
			ExternalID: "GitHub::getPullRequest"},
		{ID: "devtools.github.read_diff", ResourceType: registry.TypeAction, Title: "Read a pull request diff", Summary: "Show the diff of a PR.",
			Entities: []string{"diff", "pull_request"}, SideEffect: registry.SideEffectRead, Status: registry.StatusActive},
		{ID: "devtools.github.admin_purge", ResourceType: registry.TypeAction, Title: "Purge repository caches", Summary: "Admin only purge.",
			ACL: registry.ACL{Discover: []string{"admin"}}, SideEffect: registry.SideEffectImpact, Status: registry.StatusActive},
	}
}

// nopEmbedder is a sparse embedder without features: it keeps builds cheap in tests that do
// not look at the semantic retriever.
type nopEmbedder struct{}

func (nopEmbedder) ID() string { return "nop" }
func (nopEmbedder) Dim() int   { return 1 }
func (nopEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)), nil
}
func (nopEmbedder) EmbedSparse(string) embed.SparseVector { return embed.SparseVector{} }

// cheap are build options for tests that do not use the semantic retriever.
var cheap = Options{Embedder: nopEmbedder{}}

// buildFixture builds a generation over fixtureCaps at registry generation 1.
func buildFixture(tb testing.TB, opts Options) *Generation {
	tb.Helper()
	return buildCaps(tb, 1, fixtureCaps(), opts)
}

func buildCaps(tb testing.TB, gen uint64, caps []*registry.Capability, opts Options) *Generation {
	tb.Helper()
	snap, err := registry.NewSnapshot(gen, caps)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := Build(context.Background(), snap, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// ids returns the capability ids of hits.
func ids(g *Generation, hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = g.Doc(h.Doc).ID
	}
	return out
}

// bitmapIDs returns the ids of the docs in a filter result.
func bitmapIDs(g *Generation, docs []uint32) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = g.Doc(d).ID
	}
	return out
}

func retrieve(tb testing.TB, g *Generation, k Kind, q *Query, limit int) []Hit {
	tb.Helper()
	hits, err := g.Retrieve(context.Background(), k, q, nil, limit)
	if err != nil {
		tb.Fatal(err)
	}
	return hits
}
