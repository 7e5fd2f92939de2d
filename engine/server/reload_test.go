package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// devRC is the runtime context of the dev key.
var devRC = registry.RuntimeContext{Tenant: "default", User: "dev-user", Scopes: []string{"dev"}, Session: "test"}

const hotPack = `- pack_id: hot
  version: 1
  resource_type: pack
  title: Hot reload test pack
  summary: Capabilities that a watched registry directory adds.
  owner: test-team
  status: active
  acl: {discover: [dev], describe: [dev], execute: [dev]}
`

func hotAction(version int, title, owner string) string {
	return fmt.Sprintf(`- action_id: hot.greet
  version: %d
  resource_type: action
  capability_type: tool
  title: %s
  summary: Says hello back.
  when_to_use: [testing hot reload]
  side_effect: R
  risk_level: low
  timeout: 5s
  network_policy: none
  owner: %q
  status: active
  arguments_schema: {type: object, properties: {message: {type: string}}, additionalProperties: false}
  output_schema: {type: object}
  handler: {kind: go, name: echo}
`, version, title, owner)
}

func writeFile(tb testing.TB, path, content string) {
	tb.Helper()
	// Write then rename, as editors and deploy tools do, so the watcher never sees half a file.
	tmp := path + ".tmp~"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestHotReload(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hot.yaml"), hotPack)
	writeFile(t, filepath.Join(dir, "greet.yaml"), hotAction(1, "Greet the world", "test-team"))
	ts := startServer(t, serverSetup{cfg: func(c *Config) { c.RegistryDirs = []string{dir} }})
	eng := ts.Engine()
	describe := func() *engine.Description {
		d, err := eng.Describe(context.Background(), "hot.greet", devRC)
		if err != nil {
			t.Fatalf("describe hot.greet: %v", err)
		}
		return d
	}
	if d := describe(); d.Version != 1 || d.Title != "Greet the world" {
		t.Fatalf("at start: %+v", d)
	}

	steps := []struct {
		name    string
		write   func()
		applied bool   // a new generation is expected
		version int    // the version served afterwards
		log     string // a log line expected when refused
	}{
		{name: "a new version is applied", write: func() {
			writeFile(t, filepath.Join(dir, "greet.yaml"), hotAction(2, "Greet the world again", "test-team"))
		}, applied: true, version: 2},
		{name: "a lint error is refused", write: func() {
			writeFile(t, filepath.Join(dir, "greet.yaml"), hotAction(3, "No owner", ""))
		}, version: 2, log: "owner"},
		{name: "malformed YAML is refused", write: func() {
			writeFile(t, filepath.Join(dir, "broken.yaml"), "- action_id: hot.broken\n  version: [1\n")
			writeFile(t, filepath.Join(dir, "greet.yaml"), hotAction(3, "Fine", "test-team"))
		}, version: 2, log: "broken.yaml"},
		{name: "a change without a version bump is refused", write: func() {
			writeFile(t, filepath.Join(dir, "greet.yaml"), hotAction(2, "Changed in place", "test-team"))
			os.Remove(filepath.Join(dir, "broken.yaml"))
		}, version: 2, log: "version bump"},
		{name: "a fixed directory is applied", write: func() {
			writeFile(t, filepath.Join(dir, "greet.yaml"), hotAction(3, "Greet the world thrice", "test-team"))
		}, applied: true, version: 3},
		{name: "a file in a new subdirectory is picked up", write: func() {
			sub := filepath.Join(dir, "more")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // let the watcher add the directory
			writeFile(t, filepath.Join(sub, "wave.yaml"), strings.ReplaceAll(strings.ReplaceAll(hotAction(1, "Wave", "test-team"), "hot.greet", "hot.wave"), "Says hello back.", "Waves."))
		}, applied: true, version: 3},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			gen := eng.Generation()
			mark := len(ts.logs.String())
			st.write()
			if st.applied {
				waitFor(t, "a new generation", func() bool { return eng.Generation() > gen })
			} else {
				waitFor(t, "the refusal in the logs", func() bool {
					l := ts.logs.String()[mark:]
					return strings.Contains(l, `"level":"ERROR"`) && strings.Contains(l, st.log)
				})
				time.Sleep(200 * time.Millisecond) // nothing else may follow
				if g := eng.Generation(); g != gen {
					t.Fatalf("a refused change moved the generation %d → %d", gen, g)
				}
			}
			if d := describe(); d.Version != st.version {
				t.Fatalf("serving version %d, want %d", d.Version, st.version)
			}
		})
	}
	if _, err := eng.Describe(context.Background(), "hot.wave", devRC); err != nil {
		t.Errorf("hot.wave from the new subdirectory: %v", err)
	}
	recs, err := eng.AuditTail(50)
	if err != nil {
		t.Fatal(err)
	}
	reloads := 0
	for _, r := range recs {
		if r.Kind == "registry" && r.Actor == "reload" && strings.HasPrefix(r.Action, "hot.") {
			reloads++
		}
	}
	if reloads < 4 { // start (pack + greet@1), greet@2, greet@3, wave@1
		t.Errorf("%d audited reload changes, want at least 4: %+v", reloads, recs)
	}
	if _, err := eng.VerifyAudit(); err != nil {
		t.Errorf("audit chain: %v", err)
	}
	m := string(ts.call(t, "GET", "/metrics", "", nil).body)
	for _, want := range []string{`capdex_registry_reloads_total{result="applied"}`, `capdex_registry_reloads_total{result="invalid"} 3`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestStartWithMissingRegistryDir(t *testing.T) {
	cfg := testConfig()
	cfg.RegistryDirs = []string{filepath.Join(t.TempDir(), "nope")}
	srv, err := Open(context.Background(), cfg, Options{EngineOptions: func(o *engine.Options) { o.NoSync = true }})
	if err == nil {
		srv.Close()
		t.Fatal("Open accepted a missing registry directory")
	}
}
