package server

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capdex/capdex/registry"
)

// TestLeafToolsFollowGenerations: on every registry generation each MCP session's leaf
// tools are checked again: one the caller may no longer describe, or whose action changed
// version, is dropped with notifications/tools/list_changed; the others stay.
func TestLeafToolsFollowGenerations(t *testing.T) {
	ts := startServer(t, serverSetup{})
	put := func(def map[string]any) {
		t.Helper()
		id := def["action_id"].(string)
		if r := ts.call(t, "PUT", "/v1/capabilities/"+id, adminKey, def); r.status != 200 {
			t.Fatalf("PUT %s: %d %s", id, r.status, r.body)
		}
	}
	put(testAction("demo.revoke", 1, "Revoked later"))
	put(testAction("demo.bumped", 1, "Bumped later"))
	a := connectHTTP(t, ts.url, devKey, nil)
	for _, id := range []string{"demo.revoke", "demo.bumped", "demo.echo"} {
		a.drainChanged()
		if res, isErr := a.callTool(t, ToolDescribe, map[string]any{"resource_id": id}); isErr {
			t.Fatalf("describe %s: %v", id, res)
		}
		a.waitListChanged(t)
	}
	leaves := func() []string {
		var out []string
		for _, n := range a.toolNames(t) {
			if !slices.Contains(metaTools, n) {
				out = append(out, n)
			}
		}
		return out
	}
	all := []string{registry.ToolName("demo.bumped"), registry.ToolName("demo.echo"), registry.ToolName("demo.revoke")}
	slices.Sort(all)
	if got := leaves(); !slices.Equal(got, all) {
		t.Fatalf("leaves %v, want %v", got, all)
	}

	// Generation 1: an unrelated capability changes; every leaf stays.
	a.drainChanged()
	put(testAction("demo.unrelated", 1, "Unrelated"))
	if got := leaves(); !slices.Equal(got, all) {
		t.Errorf("after an unrelated generation: %v, want %v", got, all)
	}

	// Generation 2: dev-user is denied demo.revoke and demo.bumped has a new version.
	revoked := testAction("demo.revoke", 2, "Revoked later")
	revoked["acl"] = map[string]any{"deny": []string{"user:dev-user"}}
	put(revoked)
	a.waitListChanged(t)
	put(testAction("demo.bumped", 2, "Bumped later"))
	a.waitListChanged(t)
	want := []string{registry.ToolName("demo.echo")}
	if got := leaves(); !slices.Equal(got, want) {
		t.Errorf("after the revocation and the bump: %v, want %v", got, want)
	}
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: registry.ToolName("demo.revoke"), Arguments: map[string]any{"message": "hi"}})
	if err == nil && !res.IsError {
		t.Errorf("the revoked leaf still runs: %+v", res)
	}
	if res, isErr := a.callTool(t, registry.ToolName("demo.echo"), map[string]any{"message": "hi"}); isErr {
		t.Errorf("the kept leaf: %v", res)
	}
}

// TestLeafToolNamesDoNotCollide: x.y_z and x.y.z were both the leaf tool x__y_z, so after
// describing both, calling one ran the other. Each now has its own tool and runs itself.
func TestLeafToolNamesDoNotCollide(t *testing.T) {
	ts := startServer(t, serverSetup{})
	pack := map[string]any{"pack_id": "demo.y", "version": 1, "resource_type": "pack", "title": "Y", "owner": "test-team", "status": "active"}
	if r := ts.call(t, "PUT", "/v1/capabilities/demo.y", adminKey, pack); r.status != 200 {
		t.Fatalf("PUT demo.y: %d %s", r.status, r.body)
	}
	for _, id := range []string{"demo.y_z", "demo.y.z"} {
		if r := ts.call(t, "PUT", "/v1/capabilities/"+id, adminKey, testAction(id, 1, "Action "+id)); r.status != 200 {
			t.Fatalf("PUT %s: %d %s", id, r.status, r.body)
		}
	}
	a := connectHTTP(t, ts.url, devKey, nil)
	for _, id := range []string{"demo.y_z", "demo.y.z"} {
		a.drainChanged()
		if res, isErr := a.callTool(t, ToolDescribe, map[string]any{"resource_id": id}); isErr {
			t.Fatalf("describe %s: %v", id, res)
		}
		a.waitListChanged(t)
	}
	for _, id := range []string{"demo.y_z", "demo.y.z"} {
		res, isErr := a.callTool(t, registry.ToolName(id), map[string]any{"message": "hi"})
		if isErr || res["id"] != id {
			t.Errorf("leaf %s ran %v (isError=%v), want %s", registry.ToolName(id), res["id"], isErr, id)
		}
	}
}
