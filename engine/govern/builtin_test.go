package govern

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine/handlers"
	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// TestBuiltinCodexLoop runs the design's loop on the built-in registry and its real scripts,
// over the real store: diagnose runs (network isolated where the kernel allows), path_repair
// asks for confirmation, the token runs it once, the same token is refused.
func TestBuiltinCodexLoop(t *testing.T) {
	caps, err := registry.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := registry.NewSnapshot(1, caps)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runDir := t.TempDir()
	g, err := New(Options{Definitions: FromSnapshot(func() *registry.Snapshot { return snap }),
		Audit: st, Tokens: st, Secrets: st, History: st,
		Config: handlers.Config{ScriptsFS: registry.BuiltinScripts(), RunDir: runDir}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	rc := &registry.RuntimeContext{Tenant: "acme", User: "ann", Session: "s1", Scopes: []string{"dev"}, OS: "linux"}
	ctx := context.Background()

	diag, err := g.Run(ctx, rc, RunRequest{ID: "maintenance.codex.diagnose", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if diag.Status != StatusSucceeded {
		t.Fatalf("diagnose: %+v (stderr %q)", diag, diag.Stderr)
	}
	mode, isoErr := handlers.NetworkIsolation()
	t.Logf("diagnose: network=%s (isolation mode %q, err %v) output=%s", diag.Network, mode, isoErr, diag.Output)
	if isoErr == nil && diag.Network != handlers.NetworkIsolated {
		t.Fatalf("network %q, want isolated", diag.Network)
	}

	args := json.RawMessage(`{"dry_run": false, "shell": "bash"}`)
	conf, err := g.Run(ctx, rc, RunRequest{ID: "maintenance.codex.path_repair", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if conf.Status != StatusConfirmationRequired || conf.Summary == "" || len(conf.AffectedResources) == 0 {
		t.Fatalf("path_repair: %+v", conf)
	}
	t.Logf("summary: %s; affected: %q", conf.Summary, conf.AffectedResources)

	ok, err := g.Run(ctx, rc, RunRequest{ID: "maintenance.codex.path_repair", Arguments: args, ConfirmationToken: conf.ConfirmationToken})
	if err != nil {
		t.Fatal(err)
	}
	if ok.Status != StatusSucceeded {
		t.Fatalf("confirmed path_repair: %+v (stderr %q)", ok, ok.Stderr)
	}
	t.Logf("path_repair output: %s", ok.Output)
	var out struct {
		SnippetFile *string `json:"snippet_file"`
	}
	if err := json.Unmarshal(ok.Output, &out); err != nil {
		t.Fatal(err)
	}
	if out.SnippetFile != nil {
		if rel, err := filepath.Rel(runDir, *out.SnippetFile); err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("snippet written outside the run dir: %s", *out.SnippetFile)
		}
		if _, err := os.Stat(*out.SnippetFile); err != nil {
			t.Fatal(err)
		}
	}

	again, err := g.Run(ctx, rc, RunRequest{ID: "maintenance.codex.path_repair", Arguments: args, ConfirmationToken: conf.ConfirmationToken})
	if err != nil {
		t.Fatal(err)
	}
	if again.Reason != ReasonInvalidConfirmation {
		t.Fatalf("replay: %+v", again)
	}
	if n, err := st.VerifyAudit(); err != nil || n != 6 {
		t.Fatalf("VerifyAudit = %d, %v", n, err)
	}
}
