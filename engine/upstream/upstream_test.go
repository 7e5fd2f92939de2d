package upstream_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/capdex/capdex/engine/handlers"
	"github.com/capdex/capdex/engine/internal/testmcp"
	"github.com/capdex/capdex/engine/upstream"
	"github.com/capdex/capdex/registry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sink records what the manager reports.
type sink struct {
	mu     sync.Mutex
	syncs  [][]string
	states []upstream.State
	msgs   []string
}

func (s *sink) Synced(_ context.Context, _ string, tools []*mcp.Tool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for _, t := range tools {
		names = append(names, t.Name+":"+t.Description)
	}
	s.syncs = append(s.syncs, names)
	return nil
}

func (s *sink) Health(_ context.Context, _ string, st upstream.State, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states = append(s.states, st)
	s.msgs = append(s.msgs, msg)
}

func (s *sink) lastSync() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.syncs) == 0 {
		return nil
	}
	return s.syncs[len(s.syncs)-1]
}

func (s *sink) lastState() (upstream.State, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.states) == 0 {
		return "", ""
	}
	return s.states[len(s.states)-1], s.msgs[len(s.msgs)-1]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeTools writes a tools file of the test server.
func writeTools(t *testing.T, path string, tools []testmcp.Tool) {
	t.Helper()
	b, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func fiveTools() []testmcp.Tool {
	var out []testmcp.Tool
	for _, n := range []string{"add", "echo", "one", "two", "three"} {
		out = append(out, testmcp.Tool{Name: n, Description: n + " things"})
	}
	return out
}

// TestManagerHTTP lists every page, follows list_changed, calls a tool, marks the server
// down when it dies and reconnects when it is back.
func TestManagerHTTP(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.json")
	writeTools(t, file, fiveTools())
	srv := testmcp.StartHTTP(t, file)
	sk := &sink{}
	m, err := upstream.New([]upstream.Config{{Name: "calc", URL: srv.URL, PingEvery: 100 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}}, sk, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Start(context.Background())
	defer m.Close()

	waitFor(t, "the first sync", func() bool { return len(sk.lastSync()) == 5 }) // page size 2: three pages
	if st, _ := sk.lastState(); st != upstream.StateConnected {
		t.Fatalf("state %q after the sync", st)
	}
	res, err := m.CallTool(context.Background(), "calc", "add", map[string]any{"a": 2, "b": 40})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.StructuredContent) != `{"sum":42}` || !strings.Contains(string(res.Content), `\"sum\":42`) {
		t.Fatalf("add answered %s / %s", res.StructuredContent, res.Content)
	}

	tools := fiveTools()
	tools[0].Description = "adds numbers, now better"
	writeTools(t, file, tools)
	srv.Reload()
	waitFor(t, "the list_changed resync", func() bool {
		s := sk.lastSync()
		return len(s) == 5 && strings.Contains(strings.Join(s, ","), "now better")
	})

	srv.Kill()
	waitFor(t, "down", func() bool { st, _ := sk.lastState(); return st == upstream.StateDown })
	if _, msg := sk.lastState(); msg == "" {
		t.Fatal("down without a reason")
	}
	_, err = m.CallTool(context.Background(), "calc", "add", nil)
	if !errors.Is(err, handlers.ErrUpstreamUnavailable) {
		t.Fatalf("call while down: %v", err)
	}
	if st := m.Statuses()[0]; st.State == upstream.StateConnected || st.Error == "" {
		t.Fatalf("status while down: %+v", st)
	}
	srv.Restart()
	waitFor(t, "reconnected", func() bool { st, _ := sk.lastState(); return st == upstream.StateConnected })
	if _, err := m.CallTool(context.Background(), "calc", "echo", map[string]any{"x": "y"}); err != nil {
		t.Fatal(err)
	}
}

func TestValidate(t *testing.T) {
	err := upstream.Validate([]upstream.Config{
		{Name: "a", Command: "x"},
		{Name: "a", URL: "ftp://h"},
		{Name: "bad name"},
		{Name: "b", Command: "x", URL: "http://h"},
		{Name: "c", Command: "x", Headers: map[string]string{"A": "b"}},
		{Name: "d", URL: "http://h", Prefix: "mcp.a"},
	})
	if err == nil || !errors.Is(err, upstream.ErrConfig) {
		t.Fatalf("Validate: %v", err)
	}
	for _, want := range []string{
		`upstreams[1]: name "a" is also upstreams[0]`, `upstreams[1]: url "ftp://h"`, `upstreams[2]: name "bad name"`,
		"upstreams[2]: set command (stdio) or url", "upstreams[3]: set command or url, not both",
		"upstreams[4]: headers are for an HTTP server", `upstreams[5]: prefix "mcp.a" is also upstreams[0]'s`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
	if err := upstream.Validate([]upstream.Config{{Name: "calc", Command: "node"}, {Name: "web", URL: "https://h/mcp"}}); err != nil {
		t.Fatal(err)
	}
}

func TestExpandValue(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tok"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TOKEN": "abc"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for in, want := range map[string]string{"Bearer ${TOKEN}": "Bearer abc", "plain": "plain", "file:tok": "s3cret"} {
		got, err := upstream.ExpandValue(in, dir, lookup)
		if err != nil || got != want {
			t.Errorf("ExpandValue(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := upstream.ExpandValue("${NOPE}", dir, lookup); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("missing variable: %v", err)
	}
	if _, err := upstream.ExpandValue("file:missing", dir, lookup); err == nil {
		t.Error("missing file: no error")
	}
}

// TestCapabilities turns tools into definitions that pass lint: the server's pack holds the
// ACL, names with dots stay flat, annotations map to side effects, the handler is mcp.
func TestCapabilities(t *testing.T) {
	yes := true
	tools := []*mcp.Tool{
		{Name: "get.weather", Description: "Weather now.", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "wipe", Description: "Wipes the disk.", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
	}
	acl := registry.ACL{Discover: []string{"dev"}, Execute: []string{"dev"}}
	packs, actions, err := upstream.Capabilities(upstream.Config{Name: "calc", Command: "x", ACL: &acl}, tools)
	if err != nil {
		t.Fatal(err)
	}
	all := append([]*registry.Capability{}, packs...)
	for _, c := range actions {
		all = append(all, c)
	}
	if errs := registry.Lint(all); len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(packs) != 2 || packs[0].ID != "mcp" || packs[1].ID != "mcp.calc" || packs[0].ACL.Discover[0] != "*" || packs[1].ACL.Execute[0] != "dev" {
		t.Fatalf("packs: %+v", packs)
	}
	w := actions["get.weather"]
	if w.ID != "mcp.calc.get_weather" || w.SideEffect != registry.SideEffectRead || w.Handler.Kind != "mcp" || w.Handler.Server != "calc" || w.Handler.Name != "get.weather" {
		t.Fatalf("get.weather: %s %s %+v", w.ID, w.SideEffect, w.Handler)
	}
	if d := actions["wipe"]; d.SideEffect != registry.SideEffectImpact || !d.RequiresConfirmation {
		t.Fatalf("wipe: %s confirm=%v", d.SideEffect, d.RequiresConfirmation)
	}
}
