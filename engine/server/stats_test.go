package server

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

const opsKey = "ops-key-0123456789abcdef"

// TestStatsHTTP: a session's search → describe → run over HTTP (X-Capdex-Session) is its
// tenant's funnel in GET /v1/stats, in the console's shape, listing only what the caller
// may discover; /metrics has the totals and names no capability.
func TestStatsHTTP(t *testing.T) {
	caps, err := registry.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caps {
		if c.ID == "demo.echo" {
			c.ACL = registry.ACL{Discover: []string{"ops"}, Describe: []string{"ops"}, Execute: []string{"ops"}}
		}
	}
	ts := startServer(t, serverSetup{
		cfg:    func(c *Config) { c.Keys = append(c.Keys, KeyConfig{Key: opsKey, User: "op", Scopes: []string{"ops"}}) },
		engine: func(o *engine.Options) { o.Seed = caps },
	})
	t.Setenv("CAPDEX_RUN_DIR", t.TempDir())
	sess := HeaderSession + ": o1"
	for _, step := range []struct{ path, body string }{
		{"/v1/search", `{"query": "echo the greeting word"}`},
		{"/v1/describe", `{"resource_id": "demo.echo"}`},
		{"/v1/run", `{"id": "demo.echo", "arguments": {"message": "hi"}}`},
	} {
		if r := ts.call(t, "POST", step.path, opsKey, step.body, sess); r.status != 200 {
			t.Fatalf("%s: %d %s", step.path, r.status, r.body)
		}
	}
	r := ts.call(t, "GET", "/v1/stats", opsKey, nil)
	if r.status != 200 {
		t.Fatalf("stats: %d %s", r.status, r.body)
	}
	var raw map[string]json.RawMessage
	r.json(t, &raw)
	if got := slices.Sorted(maps.Keys(raw)); !slices.Equal(got, []string{"clarification_rate", "describe_to_run", "funnel", "run_success", "search_to_describe"}) {
		t.Fatalf("stats keys %v", got)
	}
	var f engine.Funnel
	r.json(t, &f)
	want := engine.CapabilityFunnel{ResourceID: "demo.echo", Searched: 1, Described: 1, Ran: 1, Succeeded: 1}
	if i := slices.IndexFunc(f.Capabilities, func(c engine.CapabilityFunnel) bool { return c.ResourceID == "demo.echo" }); i < 0 || f.Capabilities[i] != want {
		t.Fatalf("ops funnel %+v", f)
	}
	if f.SearchToDescribe != 1 || f.DescribeToRun != 1 || f.RunSuccess != 1 {
		t.Fatalf("ops rates %+v", f)
	}
	d := ts.call(t, "GET", "/v1/stats", devKey, nil)
	if d.status != 200 || strings.Contains(string(d.body), "demo.echo") {
		t.Fatalf("dev stats name a capability dev may not discover: %d %s", d.status, d.body)
	}
	m := ts.call(t, "GET", "/metrics", "", nil)
	if !strings.Contains(string(m.body), "capdex_funnel_succeeded_total 1") || !strings.Contains(string(m.body), "capdex_funnel_run_success_ratio 1") {
		t.Fatalf("metrics lack the funnel:\n%s", m.body)
	}
	if strings.Contains(string(m.body), "demo.echo") {
		t.Fatal("public metrics name a capability")
	}
	if r := ts.call(t, "GET", "/v1/stats", "", nil); r.status != 401 {
		t.Fatalf("stats without a key: %d", r.status)
	}
}

// TestStatsMCPSessions: each MCP session is a session of the funnel: a describe and a run in
// one session count against that session's search only.
func TestStatsMCPSessions(t *testing.T) {
	ts := startServer(t, serverSetup{})
	t.Setenv("CAPDEX_RUN_DIR", t.TempDir())
	a := connectHTTP(t, ts.url, devKey, nil)
	if _, isErr := a.callTool(t, ToolSearch, map[string]any{"query": "echo the greeting word"}); isErr {
		t.Fatal("search failed")
	}
	b := connectHTTP(t, ts.url, devKey, nil)
	if _, isErr := b.callTool(t, ToolDescribe, map[string]any{"resource_id": "demo.echo"}); isErr {
		t.Fatal("describe in session b failed")
	}
	if _, isErr := a.callTool(t, ToolDescribe, map[string]any{"resource_id": "demo.echo"}); isErr {
		t.Fatal("describe in session a failed")
	}
	if res, isErr := a.callTool(t, ToolRun, map[string]any{"resource_id": "demo.echo", "arguments": map[string]any{"message": "hi"}}); isErr || res["status"] != "succeeded" {
		t.Fatalf("run in session a: %v", res)
	}
	r := ts.call(t, "GET", "/v1/stats", devKey, nil)
	var f engine.Funnel
	r.json(t, &f)
	want := engine.CapabilityFunnel{ResourceID: "demo.echo", Searched: 1, Described: 1, Ran: 1, Succeeded: 1}
	if i := slices.IndexFunc(f.Capabilities, func(c engine.CapabilityFunnel) bool { return c.ResourceID == "demo.echo" }); i < 0 || f.Capabilities[i] != want {
		t.Fatalf("funnel %+v: want %+v (session b's describe has no search of its own)", f, want)
	}
}
