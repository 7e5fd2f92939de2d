package server

import (
	"runtime"
	"strings"
	"testing"
)

// otherOS is an OS this machine is not, in the registry's spelling.
func otherOS() string {
	if runtime.GOOS == "windows" {
		return "linux"
	}
	return "windows"
}

// TestStructuredMatchWire: match.next_step is accepted by HTTP and MCP (it was refused as
// an unknown field) and filters by capability type; an unknown value is refused naming the
// field and the allowed values; an emptied answer says which filter emptied it.
func TestStructuredMatchWire(t *testing.T) {
	ts := startServer(t, serverSetup{})
	c := connectHTTP(t, ts.url, devKey, nil)
	body := map[string]any{"query": "检查一下这张发票", "limit": 10, "match": map[string]any{"next_step": "call_mcp"}}

	var resp struct {
		Matches []struct {
			ResourceID string `json:"resource_id"`
		} `json:"matches"`
		Decision     string `json:"decision"`
		ReasonDetail string `json:"reason_detail"`
	}
	r := ts.call(t, "POST", "/v1/search", devKey, body)
	if r.status != 200 {
		t.Fatalf("HTTP search with match.next_step: %d %s", r.status, r.body)
	}
	r.json(t, &resp)
	if len(resp.Matches) != 1 || resp.Matches[0].ResourceID != "reimbursement.invoice.verify" {
		t.Errorf("HTTP next_step call_mcp: %+v, want only the invoice MCP check", resp.Matches)
	}
	out, isErr := c.callTool(t, ToolSearch, body)
	if isErr {
		t.Fatalf("MCP search with match.next_step: %v", out)
	}
	if m, _ := out["matches"].([]any); len(m) != 1 || m[0].(map[string]any)["resource_id"] != "reimbursement.invoice.verify" {
		t.Errorf("MCP next_step call_mcp: %v", out["matches"])
	}

	bad := map[string]any{"query": "发票", "match": map[string]any{"next_step": "run_rules"}}
	r = ts.call(t, "POST", "/v1/search", devKey, bad)
	if r.status != 400 || !strings.Contains(string(r.body), "match.next_step") || !strings.Contains(string(r.body), "run_rule, run_skill") {
		t.Errorf("HTTP unknown next_step: %d %s", r.status, r.body)
	}
	out, isErr = c.callTool(t, ToolSearch, bad)
	if s := string(mustJSON(out)); !isErr || !strings.Contains(s, "match.next_step") {
		t.Errorf("MCP unknown next_step: %v %s", isErr, s)
	}

	r = ts.call(t, "POST", "/v1/search", devKey, map[string]any{"query": "发票", "match": map[string]any{"domain": "finance", "next_step": "delegate_agent"}})
	r.json(t, &resp)
	if r.status != 200 || len(resp.Matches) != 0 || resp.Decision != "no_match" || !strings.HasPrefix(resp.ReasonDetail, `match.domain "finance"`) {
		t.Errorf("HTTP emptied by domain: %d %s", r.status, r.body)
	}
}

// TestRunIncompatibleWire: an action for another OS is refused as incompatible over HTTP
// and MCP, and never runs.
func TestRunIncompatibleWire(t *testing.T) {
	ts := startServer(t, serverSetup{})
	def := testAction("demo.other_os_echo", 1, "Echo on another OS")
	def["supported_os"] = []string{otherOS()}
	if r := ts.call(t, "PUT", "/v1/capabilities/demo.other_os_echo", adminKey, def); r.status != 200 {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	var res struct {
		Status, Reason, Message string
		Output                  any
	}
	r := ts.call(t, "POST", "/v1/run", devKey, map[string]any{"resource_id": "demo.other_os_echo", "arguments": map[string]any{"message": "hi"}})
	r.json(t, &res)
	if res.Status != "refused" || res.Reason != "incompatible" || !strings.Contains(res.Message, "supported_os") || res.Output != nil {
		t.Errorf("HTTP run: %d %s", r.status, r.body)
	}
	c := connectHTTP(t, ts.url, devKey, nil)
	out, isErr := c.callTool(t, ToolRun, map[string]any{"resource_id": "demo.other_os_echo", "arguments": map[string]any{"message": "hi"}})
	if !isErr || out["reason"] != "incompatible" || out["output"] != nil {
		t.Errorf("MCP run: %v %v", isErr, out)
	}
}
