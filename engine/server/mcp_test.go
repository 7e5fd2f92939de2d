package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keyTransport adds the API key to every request of an MCP HTTP client.
type keyTransport struct {
	key  string
	base http.RoundTripper
}

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	base := k.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// mcpClient is a connected MCP client session that records tools/list_changed.
type mcpClient struct {
	cs      *mcp.ClientSession
	changed chan struct{}
	log     *strings.Builder // the session transcript
}

func newMCPClient(elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) (*mcp.Client, chan struct{}) {
	changed := make(chan struct{}, 64)
	opts := &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		ElicitationHandler: elicit,
	}
	return mcp.NewClient(&mcp.Implementation{Name: "capdex-test", Version: "1"}, opts), changed
}

// connectInProcess serves one MCP session of ts (as the local identity) over in-memory
// transports: the stdio code path without a process.
func connectInProcess(tb testing.TB, ts *testServer, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcpClient {
	tb.Helper()
	client, changed := newMCPClient(elicit)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.ServeMCP(ctx, st) }()
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		cancel()
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return &mcpClient{cs: cs, changed: changed, log: &strings.Builder{}}
}

// connectHTTP opens an MCP session over streamable HTTP with key.
func connectHTTP(tb testing.TB, url, key string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcpClient {
	tb.Helper()
	client, changed := newMCPClient(elicit)
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: keyTransport{key: key}}, MaxRetries: -1}
	cs, err := client.Connect(context.Background(), tr, nil)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(func() { cs.Close() })
	return &mcpClient{cs: cs, changed: changed, log: &strings.Builder{}}
}

func (c *mcpClient) logf(format string, a ...any) { fmt.Fprintf(c.log, format+"\n", a...) }

func (c *mcpClient) toolNames(tb testing.TB) []string {
	tb.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		tb.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

func (c *mcpClient) tool(tb testing.TB, name string) *mcp.Tool {
	tb.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		tb.Fatalf("tools/list: %v", err)
	}
	for _, t := range res.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// callTool calls a tool and decodes its JSON text content into out (a map when nil).
func (c *mcpClient) callTool(tb testing.TB, name string, args any) (map[string]any, bool) {
	tb.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("tools/call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		tb.Fatalf("tools/call %s: %d content items", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		tb.Fatalf("tools/call %s: content is %T", name, res.Content[0])
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text.Text), &out); err != nil {
		tb.Fatalf("tools/call %s: %v: %s", name, err, text.Text)
	}
	if res.StructuredContent == nil {
		tb.Errorf("tools/call %s: no structuredContent", name)
	}
	a, _ := json.Marshal(args)
	c.logf("→ tools/call %s %s\n← isError=%v %s", name, a, res.IsError, abbreviate(text.Text, 400))
	return out, res.IsError
}

func (c *mcpClient) waitListChanged(tb testing.TB) {
	tb.Helper()
	select {
	case <-c.changed:
		c.logf("← notifications/tools/list_changed")
	case <-time.After(10 * time.Second):
		tb.Fatal("no notifications/tools/list_changed within 10s")
	}
}

func (c *mcpClient) drainChanged() {
	for {
		select {
		case <-c.changed:
		default:
			return
		}
	}
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d bytes)", len(s))
}

var metaTools = []string{ToolDescribe, ToolList, ToolRun, ToolSearch}

// mcpScenario is the session every MCP test transport goes through: the four meta-tools,
// search, describe with list_changed and the leaf tool, a leaf call, and a run with
// confirmation. It returns the transcript.
func mcpScenario(t *testing.T, c *mcpClient) string {
	t.Helper()
	names := c.toolNames(t)
	c.logf("→ tools/list\n← %v", names)
	if !slices.Equal(names, metaTools) {
		t.Fatalf("tools: %v, want %v", names, metaTools)
	}
	var got, want any
	search := c.tool(t, ToolSearch)
	b, _ := json.Marshal(search.InputSchema)
	json.Unmarshal(b, &got)
	json.Unmarshal([]byte(SearchInputSchema), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("capability_search input schema:\n got %s\nwant %s", b, SearchInputSchema)
	}

	res, isErr := c.callTool(t, ToolSearch, map[string]any{"query": codexQuery})
	matches, _ := res["matches"].([]any)
	if isErr || len(matches) == 0 || matches[0].(map[string]any)["resource_id"] != "maintenance.codex.diagnose" {
		t.Fatalf("search: %v", res)
	}
	next := matches[0].(map[string]any)["next_step"].(map[string]any)
	if next["tool"] != ToolDescribe {
		t.Errorf("next_step: %v", next)
	}

	c.drainChanged()
	res, isErr = c.callTool(t, ToolDescribe, next["arguments"])
	if isErr || res["resource_id"] != "maintenance.codex.diagnose" || res["arguments_schema"] == nil {
		t.Fatalf("describe: %v", res)
	}
	c.waitListChanged(t)
	names = c.toolNames(t)
	c.logf("→ tools/list\n← %v", names)
	if !slices.Contains(names, "maintenance__codex_diagnose") || len(names) != 5 {
		t.Fatalf("after describe: tools %v", names)
	}
	leaf := c.tool(t, "maintenance__codex_diagnose")
	if !strings.Contains(fmt.Sprint(leaf.InputSchema), "include_shell_resolution") || leaf.Annotations == nil || !leaf.Annotations.ReadOnlyHint {
		t.Errorf("leaf tool: %+v", leaf)
	}

	res, isErr = c.callTool(t, "maintenance__codex_diagnose", map[string]any{"include_shell_resolution": false})
	if isErr || res["status"] != "succeeded" || res["id"] != "maintenance.codex.diagnose" {
		t.Fatalf("leaf call: %v", res)
	}
	if out, _ := res["output"].(map[string]any); out == nil || out["symptoms"] == nil {
		t.Errorf("leaf call output: %v", res["output"])
	}

	res, isErr = c.callTool(t, ToolRun, map[string]any{"resource_id": "maintenance.codex.path_repair", "arguments": map[string]any{}})
	token, _ := res["confirmation_token"].(string)
	if isErr || res["status"] != "confirmation_required" || token == "" || res["summary"] == "" {
		t.Fatalf("run needing confirmation: %v", res)
	}
	confirmed := map[string]any{"resource_id": "maintenance.codex.path_repair", "arguments": map[string]any{}, "confirmation_token": token}
	res, isErr = c.callTool(t, ToolRun, confirmed)
	if isErr || res["status"] != "succeeded" {
		t.Fatalf("run with the token: %v", res)
	}
	if out, _ := res["output"].(map[string]any); out == nil || out["dry_run"] != true {
		t.Errorf("path_repair must default to a dry run: %v", res["output"])
	}
	res, isErr = c.callTool(t, ToolRun, confirmed)
	if !isErr || res["status"] != "refused" || res["reason"] != "invalid_confirmation" {
		t.Fatalf("the same token again: %v", res)
	}
	return c.log.String()
}

func TestMCPInProcess(t *testing.T) {
	ts := sharedServer(t)
	t.Run("local session", func(t *testing.T) {
		c := connectInProcess(t, ts, nil)
		mcpScenario(t, c)
	})
	t.Run("streamable HTTP session", func(t *testing.T) {
		c := connectHTTP(t, ts.url, devKey, nil)
		mcpScenario(t, c)
	})
}

func TestMCPToolErrors(t *testing.T) {
	ts := sharedServer(t)
	c := connectInProcess(t, ts, nil)
	tests := []struct {
		name string
		tool string
		args any
		code string
	}{
		{name: "search without query", tool: ToolSearch, args: map[string]any{}, code: "invalid_request"},
		{name: "search with an unknown field", tool: ToolSearch, args: map[string]any{"query": "x", "explain": true}, code: "invalid_request"},
		{name: "search limit too high", tool: ToolSearch, args: map[string]any{"query": "x", "limit": 50}, code: "invalid_request"},
		{name: "describe unknown", tool: ToolDescribe, args: map[string]any{"resource_id": "no.such.thing"}, code: "not_found"},
		{name: "list unknown pack", tool: ToolList, args: map[string]any{"pack": "no.such"}, code: "not_found"},
		{name: "run arguments not an object", tool: ToolRun, args: map[string]any{"resource_id": "demo.echo", "arguments": "hi"}, code: "invalid_request"},
		{name: "run without id", tool: ToolRun, args: map[string]any{}, code: "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, isErr := c.callTool(t, tt.tool, tt.args)
			e, _ := res["error"].(map[string]any)
			if !isErr || e == nil || e["code"] != tt.code {
				t.Fatalf("want tool error %q, got isError=%v %v", tt.code, isErr, res)
			}
		})
	}
	t.Run("a refused run is a tool error with its reason", func(t *testing.T) {
		res, isErr := c.callTool(t, ToolRun, map[string]any{"resource_id": "demo.echo", "arguments": map[string]any{"nope": 1}})
		if !isErr || res["reason"] != "invalid_arguments" {
			t.Fatalf("%v", res)
		}
	})
	t.Run("list browses a pack", func(t *testing.T) {
		res, isErr := c.callTool(t, ToolList, map[string]any{"pack": "maintenance.codex"})
		if items, _ := res["items"].([]any); isErr || len(items) < 3 {
			t.Fatalf("%v", res)
		}
	})
}

func TestMCPLeafToolsLRUAndSessions(t *testing.T) {
	ts := startServer(t, serverSetup{cfg: func(c *Config) { c.Limits.MaxLeafTools = 2 }})
	a := connectHTTP(t, ts.url, devKey, nil)
	b := connectHTTP(t, ts.url, devKey, nil)
	for _, id := range []string{"maintenance.codex.diagnose", "maintenance.codex.status", "demo.echo"} {
		a.drainChanged()
		if res, isErr := a.callTool(t, ToolDescribe, map[string]any{"resource_id": id}); isErr {
			t.Fatalf("describe %s: %v", id, res)
		}
		a.waitListChanged(t)
	}
	want := append(slices.Clone(metaTools), "demo__echo", "maintenance__codex_status")
	slices.Sort(want)
	if got := a.toolNames(t); !slices.Equal(got, want) {
		t.Errorf("session a after three describes with max_leaf_tools 2: %v, want %v", got, want)
	}
	// Calling a leaf makes it the most recent: describing another drops the other one.
	if res, isErr := a.callTool(t, "maintenance__codex_status", map[string]any{}); isErr {
		t.Fatalf("leaf call: %v", res)
	}
	a.drainChanged()
	a.callTool(t, ToolDescribe, map[string]any{"resource_id": "maintenance.codex.diagnose"})
	a.waitListChanged(t)
	want = append(slices.Clone(metaTools), "maintenance__codex_diagnose", "maintenance__codex_status")
	slices.Sort(want)
	if got := a.toolNames(t); !slices.Equal(got, want) {
		t.Errorf("after using status and describing diagnose: %v, want %v", got, want)
	}
	if got := b.toolNames(t); !slices.Equal(got, metaTools) {
		t.Errorf("session b sees session a's leaf tools: %v", got)
	}
	// Describing a pack or a recipe adds no tool.
	b.callTool(t, ToolDescribe, map[string]any{"resource_id": "maintenance.codex"})
	if got := b.toolNames(t); !slices.Equal(got, metaTools) {
		t.Errorf("a pack became a tool: %v", got)
	}

	t.Run("a session belongs to its key", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{}}`
		r := ts.call(t, "POST", "/mcp", otherKey, body, "Mcp-Session-Id: "+a.cs.ID(), "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-11-25")
		if r.status != 403 {
			t.Fatalf("another key on session a: %d %s", r.status, r.body)
		}
		r = ts.call(t, "POST", "/mcp", devKey, body, "Mcp-Session-Id: "+a.cs.ID(), "Accept: application/json, text/event-stream", "Mcp-Protocol-Version: 2025-11-25")
		if r.status != 200 || !strings.Contains(string(r.body), "maintenance__codex_status") {
			t.Fatalf("the owner's key on session a: %d %s", r.status, r.body)
		}
	})
	if n := len(ts.sessions.all()); n != 2 {
		t.Errorf("%d sessions in the table, want 2", n)
	}
	a.cs.Close()
	deadline := time.Now().Add(5 * time.Second)
	for len(ts.sessions.all()) != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(ts.sessions.all()); n != 1 {
		t.Errorf("a closed session stays in the table: %d sessions", n)
	}
}

func TestMCPElicitConfirmation(t *testing.T) {
	ts := sharedServer(t)
	for _, tt := range []struct {
		name     string
		protocol string
		connect  func(t *testing.T, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcpClient
	}{
		{name: "stateless protocol (in process)", protocol: "2026-07-28", connect: func(t *testing.T, e func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcpClient {
			return connectInProcess(t, ts, e)
		}},
		{name: "legacy protocol (streamable HTTP)", protocol: "2025-11-25", connect: func(t *testing.T, e func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcpClient {
			return connectHTTP(t, ts.url, devKey, e)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, answer := range []string{"accept", "decline"} {
				t.Run(answer, func(t *testing.T) {
					var asked []string
					c := tt.connect(t, func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked = append(asked, req.Params.Message)
						if answer == "accept" {
							return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
						}
						return &mcp.ElicitResult{Action: "decline"}, nil
					})
					if v := c.cs.InitializeResult().ProtocolVersion; v != tt.protocol {
						t.Errorf("protocol %s, want %s", v, tt.protocol)
					}
					res, isErr := c.callTool(t, ToolRun, map[string]any{"resource_id": "maintenance.codex.path_repair"})
					if len(asked) != 1 || !strings.Contains(asked[0], "path_repair") {
						t.Fatalf("the user was asked %q", asked)
					}
					want := "succeeded"
					if answer == "decline" {
						want = "declined"
					}
					if isErr || res["status"] != want || res["confirmation_token"] != nil {
						t.Fatalf("after %s: %v", answer, res)
					}
				})
			}
		})
	}
}
